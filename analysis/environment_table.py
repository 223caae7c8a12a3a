"""Renders the recorded tool versions as a LaTeX table for the reproduction appendix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from analysis.latex import escape


def render(versions: dict[str, str | None]) -> str:
    """A booktabs table with one row per tool."""
    rows = [
        f"{escape(name)} & {escape(version) if version else 'not installed'} \\\\"
        for name, version in sorted(versions.items())
    ]
    return "\n".join(
        [
            r"\begin{tabular}{@{}ll@{}}",
            r"\toprule",
            r"Tool & Version \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m analysis.environment_table TOOLS.json OUT.tex", file=sys.stderr)
        return 2
    source, target = Path(argv[0]), Path(argv[1])
    try:
        versions = json.loads(source.read_text())
    except (OSError, json.JSONDecodeError) as err:
        print(f"{source}: cannot read tool versions: {err}", file=sys.stderr)
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(versions))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
