"""Plausibility of the report's generated number macros.

The pipeline writes numbers as macros (`\\newcommand{\\Name}{value}`) in
`results/<profile>/paper/**/*.tex`. This module reads them back and flags values no
measurement can have:

- any macro whose value holds a NaN or an infinity as Python prints them (`nan`, `inf`):
  the formatters turn those into the missing mark `--`, so a leaked one is a bug;
- a *share* that is negative or over 1;
- a *utilisation* that is negative or over 1.

Which macros are shares and utilisations follows from their names (the last CamelCase word):

- shares end in `Share` (`SixteenFactErrorShare`, `SixteenMaxQueueShare`,
  `ValidationStableShare`) or `Fraction`;
- utilisations end in `Rho` (`SixteenMMOneRho`, the offered load per server of a queueing
  model) or `Utilisation`/`Utilization`/`Util`.

Names that look similar but are not fractions stay out: `Busy` is a mean number of busy workers
(`WritesEightBusy`), `Ratio` may exceed 1 (`SixteenSeedMMOneRatio`), `Percent` and `Error` are
relative errors of either sign, and limits such as `BottleneckThreshold` are settings. A value
written as a percentage (`56.5\\,\\%`) counts as its fraction; the missing mark `--` passes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from analysis.report.figures import MISSING  # what the formatters write for no value

SHARE_SUFFIXES = ("Share", "Fraction")
UTILISATION_SUFFIXES = ("Rho", "Utilisation", "Utilization", "Util")

_DEFINITION = re.compile(
    r"\\(?:re)?(?:new|provide)command\*?\s*"
    r"(?:\{\s*\\(?P<braced>[A-Za-z@]+)\s*\}|\\(?P<bare>[A-Za-z@]+))"
    r"\s*(?:\[\d\](?:\[[^\]]*\])?)?\s*\{"
    r"|\\def\s*\\(?P<defined>[A-Za-z@]+)(?:#\d)*\s*\{"
)
_COMMENT = re.compile(r"(?<!\\)%.*$", re.MULTILINE)
_NOT_FINITE = re.compile(r"(?<![A-Za-z\\])[-+−]?(?:nan|inf(?:inity)?)(?![A-Za-z])", re.IGNORECASE)
_NUMBER = re.compile(r"^\$?(?P<num>[-+−]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?)\$?(?P<pct>%)?$")


class MacroError(ValueError):
    """A macro definition that cannot be read (an unbalanced brace)."""


@dataclass(frozen=True)
class Violation:
    source: str  # file, or what was parsed
    name: str
    value: str
    why: str

    def __str__(self) -> str:
        return f"{self.source}: \\{self.name} = {self.value!r}: {self.why}"


def parse_macros(text: str, source: str = "text") -> dict[str, str]:
    """Every `\\newcommand` (also `\\renewcommand`, `\\providecommand`, starred, with an
    argument count) and `\\def` of the text, by name, with its body as written. A later
    definition of the same name replaces an earlier one, as in TeX."""
    text = _COMMENT.sub("", text)
    out: dict[str, str] = {}
    for m in _DEFINITION.finditer(text):
        name = m.group("braced") or m.group("bare") or m.group("defined")
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == "\\":
                i += 2
                continue
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            raise MacroError(f"{source}: \\{name}: unbalanced braces in its value")
        out[name] = text[m.end() : i - 1].strip()
    return out


def kind_of(name: str) -> str | None:
    """`share`, `utilisation` or None, by the naming rule of the module's docstring."""
    if name.endswith(SHARE_SUFFIXES):
        return "share"
    if name.endswith(UTILISATION_SUFFIXES):
        return "utilisation"
    return None


def number(value: str) -> float | None:
    """The value as a plain number (a percentage as its fraction); None when it is not one
    number (prose, a list, the missing mark)."""
    plain = value.replace("{,}", "").replace(r"\,", "").replace(r"\%", "%").replace("~", "")
    m = _NUMBER.match(plain.replace(" ", ""))
    if m is None:
        return None
    x = float(m.group("num").replace("−", "-"))
    return x / 100 if m.group("pct") else x


def check(macros: dict[str, str], source: str = "text") -> list[Violation]:
    """What is wrong with the macros' values (empty when nothing is)."""
    out = []
    for name, value in macros.items():
        if _NOT_FINITE.search(value):
            out.append(Violation(source, name, value, "not a finite number (NaN or infinity)"))
            continue
        kind = kind_of(name)
        if kind is None or value == MISSING:
            continue
        x = number(value)
        if x is None:
            out.append(Violation(source, name, value, f"a {kind} must be one number or {MISSING}"))
        elif x < 0:
            out.append(Violation(source, name, value, f"a negative {kind}"))
        elif x > 1:
            out.append(Violation(source, name, value, f"a {kind} over 1 (100 %)"))
    return out


def check_files(paths: Iterable[Path]) -> list[Violation]:
    out = []
    for path in paths:
        out += check(parse_macros(path.read_text(), str(path)), str(path))
    return out


def check_dir(directory: Path) -> list[Violation]:
    """Every generated `.tex` below `directory` (a profile's `paper/`)."""
    return check_files(sorted(directory.rglob("*.tex")))


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m analysis.report.macro_check DIR...", file=sys.stderr)
        return 2
    missing = [d for d in argv if not Path(d).is_dir()]
    if missing:
        print(f"not a directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    problems = [v for d in argv for v in check_dir(Path(d))]
    for v in problems:
        print(v)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
