"""The error every reader raises for a malformed or truncated input."""

from __future__ import annotations

from pathlib import Path


class ParseError(ValueError):
    """A file that cannot be read as what it claims to be; the message names file and problem."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = Path(path)
        self.problem = problem
