"""The error every reader raises for a malformed or truncated input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class ParseError(ValueError):
    """A file that cannot be read as what it claims to be; the message names file and problem."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = Path(path)
        self.problem = problem


def read_json_object(path: str | Path, missing: str = "missing") -> dict[str, Any]:
    """A JSON file that must hold one object; `missing` says why a missing file is missing."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ParseError(path, missing) from None
    except json.JSONDecodeError as err:
        raise ParseError(path, f"not valid JSON (truncated?): {err}") from None
    if not isinstance(data, dict):
        raise ParseError(path, "expected a JSON object")
    return data
