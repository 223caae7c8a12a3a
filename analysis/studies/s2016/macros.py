"""The 2016 section's numbers: each report script writes its own (macro name to LaTeX) as a
JSON file, and one rule merges them into the file of LaTeX macros the paper inputs
(analysis.report.numbers, which every study's section shares)."""

from __future__ import annotations

from collections.abc import Mapping

from analysis.report import numbers
from analysis.report.numbers import Report, read_json, write_json, write_report

__all__ = ["Report", "macro_file", "read_json", "write_json", "write_report"]


def macro_file(parts: Mapping[str, Mapping[str, str]]) -> str:
    """Every part's macros sorted by name (analysis.report.numbers.macro_file)."""
    return numbers.macro_file(parts, "r2016_numbers")
