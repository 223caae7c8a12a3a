"""The smoke report's generated number macros are plausible (analysis/report/macro_check.py).

The smoke profile's outputs exist after its workflow ran: `make test` runs this file again
after the smoke workflow with MWLAB_REQUIRE_SMOKE_REPORT=1, which turns their absence into a
failure. In a plain pytest run without them, the test is skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analysis.report import macro_check as mc

ROOT = Path(__file__).resolve().parents[2]
# The smoke workflow's folder: `make test-workflow` names it (SMOKE_RESULTS).
PAPER = ROOT / os.environ.get("MWLAB_SMOKE_RESULTS", "results/smoke") / "paper"


def test_smoke_report_numbers_are_plausible() -> None:
    files = sorted(PAPER.rglob("*.tex")) if PAPER.is_dir() else []
    if not files:
        if os.environ.get("MWLAB_REQUIRE_SMOKE_REPORT") == "1":
            pytest.fail(f"no generated LaTeX under {PAPER}: the smoke workflow did not write it")
        pytest.skip(f"no smoke report under {PAPER} (run the smoke workflow)")
    macros = {p: mc.parse_macros(p.read_text(), str(p)) for p in files}
    # The report's numbers are there at all: a parser that found none would check nothing.
    assert sum(len(m) for m in macros.values()) > 0, f"no macros in {PAPER}"
    problems = [v for p, m in macros.items() for v in mc.check(m, str(p.relative_to(ROOT)))]
    assert not problems, "\n".join(map(str, problems))
