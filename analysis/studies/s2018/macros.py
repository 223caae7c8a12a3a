"""Names of the 2018 report's number macros: LaTeX macro names are letters only, so levels
and numbers are spelt out in camel case."""

from __future__ import annotations

import re

_DIGITS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]


def camel(*parts: object) -> str:
    """Letters-only macro name part: `one_server`, `read-only`, 8 -> OneServerReadOnlyEight."""
    words = []
    for p in parts:
        for w in re.split(r"[^A-Za-z0-9]+", str(p)):
            if w:
                words.append(_number_word(w) if w.isdigit() else w[0].upper() + w[1:])
    return "".join(words)


def _number_word(digits: str) -> str:
    return "".join(_DIGITS[int(d)] for d in digits)
