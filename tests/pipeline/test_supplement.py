"""The report and its supplement share sections but not labels: the report cites the
supplement's through xr (its aux), and the supplement, compiled first, cites nothing of the
report's. A label moved between the two without its citations would print as "??"."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "paper"
INPUT = re.compile(r"\\input\{(sections/[\w-]+)\}")
LABEL = re.compile(r"\\label\{([^}]+)\}")
REF = re.compile(r"\\ref\{([^}#]+)\}")  # not a macro's parameter (#1)


def sections(document: str) -> list[Path]:
    """The section files a document inputs, and those they input (the optional agreement
    appendix included)."""
    files: list[Path] = []
    pending = [PAPER / document]
    while pending:
        text = pending.pop(0).read_text()
        new = [PAPER / f"{name}.tex" for name in INPUT.findall(text)]
        files += new
        pending += new
    return files


def found(pattern: re.Pattern[str], files: list[Path]) -> set[str]:
    return {m for f in files for m in pattern.findall(f.read_text())}


def test_no_section_is_in_both_documents() -> None:
    assert not set(sections("report.tex")) & set(sections("supplement.tex"))


def test_the_report_cites_only_its_own_labels_and_the_supplements() -> None:
    report, supplement = sections("report.tex"), sections("supplement.tex")
    known = found(LABEL, report) | found(LABEL, supplement)
    assert found(REF, report) - known == set()


def test_the_supplement_cites_only_its_own_labels() -> None:
    supplement = sections("supplement.tex")
    assert found(REF, supplement) - found(LABEL, supplement) == set()


def test_labels_are_unique_across_the_two() -> None:
    report, supplement = sections("report.tex"), sections("supplement.tex")
    assert not found(LABEL, report) & found(LABEL, supplement)
