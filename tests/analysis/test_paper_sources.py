"""The report's hand-written LaTeX sources."""

from __future__ import annotations

import re
from pathlib import Path

SECTIONS = Path(__file__).resolve().parents[2] / "paper"


def test_the_sources_hold_no_control_characters() -> None:
    # A control character is what a Python string makes of an unescaped "\r" or "\t":
    # "\ref" would print as "ef".
    bad = {
        str(p.relative_to(SECTIONS)): m.group()
        for p in SECTIONS.rglob("*.tex")
        for m in [re.search(r"[\x00-\x08\x0b-\x1f]", p.read_text())]
        if m
    }
    assert not bad, bad
