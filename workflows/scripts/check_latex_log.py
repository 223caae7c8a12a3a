"""Fails the paper build on undefined references and on overfull boxes wider than a slack."""

import re
import sys
from pathlib import Path

SLACK_PT = 2.0  # sub-point overfull boxes are invisible; anything wider is a layout error

UNDEFINED = re.compile(r"(Reference|Citation) `[^']+' on page \d+ undefined|There were undefined")
OVERFULL = re.compile(r"^Overfull \\[hv]box \((\d+(?:\.\d+)?)pt too (?:wide|high)\) (.*)$")


def problems(log_text: str) -> list[str]:
    found = []
    for line in log_text.splitlines():
        if UNDEFINED.search(line):
            found.append(line.strip())
        match = OVERFULL.match(line)
        if match and float(match.group(1)) > SLACK_PT:
            found.append(line.strip())
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_latex_log.py REPORT.log", file=sys.stderr)
        return 2
    log = Path(argv[0])
    try:
        text = log.read_text(errors="replace")
    except OSError as err:
        print(f"{log}: cannot read the LaTeX log: {err}", file=sys.stderr)
        return 2
    found = problems(text)
    for line in found:
        print(f"{log}: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
