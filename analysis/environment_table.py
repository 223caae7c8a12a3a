"""Renders the recorded tool versions as a LaTeX table for the reproduction appendix: those of
the measurement, and beside them the build machine's where they differ."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from analysis.latex import escape

Versions = dict[str, str | None]


def _cell(version: str | None) -> str:
    return escape(version) if version else "not installed"


def render(versions: Versions, built_with: Versions | None = None) -> str:
    """A booktabs table with one row per tool the measurement recorded. Where the machine that
    built the report has another version of one (or another set of tools), a second column
    gives its version in the rows that differ."""
    differs = built_with is not None and any(built_with.get(n) != v for n, v in versions.items())
    if not differs:
        rows = [f"{escape(n)} & {_cell(v)} \\\\" for n, v in sorted(versions.items())]
        head = [r"\begin{tabular}{@{}ll@{}}", r"\toprule", r"Tool & Version \\"]
    else:
        assert built_with is not None
        rows = [
            f"{escape(n)} & {_cell(v)} & "
            f"{'' if built_with.get(n) == v else _cell(built_with.get(n))} \\\\"
            for n, v in sorted(versions.items())
        ]
        head = [
            # Ragged, not justified: version lines are words and numbers of every length.
            r"\begin{tabular}{@{}l*{2}{>{\raggedright\arraybackslash}p{0.36\linewidth}}@{}}",
            r"\toprule",
            r"Tool & Measured with & This report built with (where it differs) \\",
        ]
    return "\n".join([*head, r"\midrule", *rows, r"\bottomrule", r"\end{tabular}", ""])


def _read(path: Path) -> Versions:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: cannot read tool versions: {err}") from err
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a name -> version mapping")
    return data


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(
            "usage: python -m analysis.environment_table TOOLS.json OUT.tex [BUILT_WITH.json]",
            file=sys.stderr,
        )
        return 2
    try:
        versions = _read(Path(argv[0]))
        built_with = _read(Path(argv[2])) if len(argv) == 3 else None
    except ValueError as err:
        print(err, file=sys.stderr)
        return 1
    target = Path(argv[1])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(versions, built_with))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
