"""Names of the 2018 report's number macros: LaTeX macro names are letters only, so levels
and numbers are spelt out in camel case (analysis.report.numbers.camel, shared by every
study's section)."""

from __future__ import annotations

from analysis.report.numbers import camel

__all__ = ["camel"]
