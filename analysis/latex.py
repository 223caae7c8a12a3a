"""Small helpers for writing LaTeX fragments."""

from __future__ import annotations

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def escape(text: str) -> str:
    """Escapes the characters LaTeX treats specially."""
    return "".join(_SPECIAL.get(ch, ch) for ch in text)
