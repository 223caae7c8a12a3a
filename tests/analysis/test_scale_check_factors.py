"""The scale check's speed factors read back from the budgets its runs record."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.report import scale_check_factors as scf

VCPUS = {"server": 8, "middleware": 8, "client": 8}
KEPT = {"server": 0.25, "middleware": 0.15, "client": None}
# Another session's fit of the server's target (mwlab dataset merge --families).
REFIT = {"role": "server", "studies": ["2018"], "kept": 0.25, "other": 0.35}
CAL = {"speed_factors": {"2018": KEPT}, "refits": [REFIT]}


def _runs(factors: dict[str, float | None], scales: tuple[float, ...]) -> pd.DataFrame:
    """One row per run as the testbed records it: budgets vCPUs x s x f, rounded."""
    rows: list[dict[str, Any]] = []
    for s in scales:
        row: dict[str, Any] = {
            "scale": s,
            "servers": 1,
            "middlewares": 1,
            "middleware.workers": 8,
            "clients_total": 16,
            "started_at": "2026-12-02T10:00:00",
        }
        for role, f in factors.items():
            row[f"budgets_cores.{role}"] = None if f is None else round(8 * s * f, 4)
        rows.append(row)
    return pd.DataFrame(rows)


def test_runs_at_the_kept_factors_are_told_apart_from_a_later_sessions() -> None:
    kept = scf.check_factor_numbers(CAL, _runs(KEPT, (0.05, 0.1)), VCPUS, "2018")
    assert kept["ScaleCheckFactorCase"] == "kept"
    assert kept["ScaleCheckKeptFactors"] == "server 0.250 and middleware 0.150"

    later = {"server": 0.35, "middleware": 0.15, "client": None}
    families = {"writes": _runs(KEPT, (0.05,)), "multiget": _runs(KEPT, (0.05,))}
    out = scf.check_factor_numbers(CAL, _runs(later, (0.05, 0.1)), VCPUS, "2018", families)
    assert out["ScaleCheckFactorCase"] == "session"
    assert out["ScaleCheckFactors"] == "server 0.350 and middleware 0.150"
    assert out["ScaleCheckBudgetRatios"] == (
        "the server's 1.40 and the middleware's 1.00 times the kept ones"
    )
    assert out["ScaleCheckSetup"] == "1 server, 1 middleware with 8 workers, 16 clients"
    assert out["ScaleCheckDays"] == "2026-12-02"
    # The study's other families ran with the kept factors; one at the refit makes it mixed.
    assert out["ScaleStudyFactorCase"] == "kept"
    assert out["ScaleCheckStudyFamilies"] == "2"
    families["writes"] = _runs(later, (0.05,))
    mixed = scf.check_factor_numbers(CAL, _runs(later, (0.05,)), VCPUS, "2018", families)
    assert mixed["ScaleStudyFactorCase"] == "mixed"


def test_factors_neither_kept_nor_refitted_and_runs_without_budgets() -> None:
    odd = {"server": 0.5, "middleware": 0.15, "client": None}
    out = scf.check_factor_numbers(CAL, _runs(odd, (0.05,)), VCPUS, "2018")
    assert out["ScaleCheckFactorCase"] == "other"
    # A budget read back within its rounding is still the factor's.
    assert scf.ran_with(_runs(KEPT, (0.03,)), VCPUS, KEPT)
    # Runs on real machines record no budget: no check under the scale model.
    none = scf.check_factor_numbers(CAL, _runs(dict.fromkeys(KEPT), (1.0,)), VCPUS, "2018")
    assert none["ScaleCheckFactorCase"] == "none"
    assert none["ScaleCheckFactors"] == "--"
    assert (
        scf.check_factor_numbers(None, _runs(KEPT, (0.05,)), VCPUS, "2018")["ScaleCheckFactorCase"]
        == "none"
    )
