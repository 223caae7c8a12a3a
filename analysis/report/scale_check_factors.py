"""Which speed factors the scale check's runs ran with, read back from the budgets they
record, and whether the other families of its study ran with the kept ones (the macros of
the check's paragraph in paper/sections/scalemodel.tex).

A run records its budgets, vCPUs x s x f(role) cores rounded as common.scalemodel.budgets_cores
rounds them, not its factors: a factor is read back as budget / (vCPUs x s) and is one of a
calibration's where that calibration's factor gives every run's recorded budget. A family
measured again in a later session (mwlab dataset merge --families) runs with that session's
calibration, while the dataset keeps the first's: the check then compares s with s' at
factors that are not the kept ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analysis.report.figures import listed
from analysis.scale_model import scale_of

# The testbed rounds a budget to this many decimals (common.scalemodel.budgets_cores).
BUDGET_DIGITS = 4
ROLES = ("server", "middleware", "client")


def role_vcpus(machines: Mapping[str, Any], study: str) -> dict[str, int]:
    """Each role's study vCPUs for `study` (workflows/machines.yaml)."""
    types = machines["machine_types"]
    roles = machines["studies"][str(study)]["roles"]
    return {role: int(types[kind]["vcpus"]) for role, kind in roles.items()}


def _budgets(rows: pd.DataFrame, role: str) -> pd.Series:
    column = f"budgets_cores.{role}"
    if column not in rows.columns:
        return pd.Series(math.nan, index=rows.index, dtype=float)
    return pd.to_numeric(rows[column], errors="coerce").astype(float)


def budgeted(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows that ran under the scale model: with a CPU budget for some role (a profile's
    families may run on real machines while its calibration emulates them)."""
    if rows.empty:
        return rows
    has = pd.concat([_budgets(rows, role).notna() for role in ROLES], axis=1).any(axis=1)
    return rows[has]


def budget_factors(rows: pd.DataFrame, vcpus: Mapping[str, int]) -> dict[str, float | None]:
    """Per role, the speed factor the rows' recorded budgets give, budget / (vCPUs x s), read
    at the largest s (where the budget's rounding weighs least); None for a role without a
    budget (unbudgeted)."""
    s = scale_of(rows)
    top = rows[s == s.max()]
    out: dict[str, float | None] = {}
    for role, v in vcpus.items():
        b = _budgets(top, role).dropna()
        out[role] = None if b.empty else float(b.mean()) / (v * float(s.max()))
    return out


def ran_with(
    rows: pd.DataFrame, vcpus: Mapping[str, int], factors: Mapping[str, float | None]
) -> bool:
    """Whether every row's recorded budget of each role in `factors` is the one that factor
    gives at the row's s, rounded as the testbed rounds it; a role whose factor is None must
    have no budget. Empty rows ran with nothing."""
    if rows.empty:
        return False
    s = scale_of(rows)
    for role, f in factors.items():
        b = _budgets(rows, role)
        if f is None:
            if b.notna().any():
                return False
            continue
        want = (vcpus[role] * s * float(f)).round(BUDGET_DIGITS)
        # Far below the rounding step: a budget either is the factor's or it is not.
        if not np.isclose(b.to_numpy(), want.to_numpy(), rtol=0, atol=1e-7).all():
            return False
    return True


def _factor_words(factors: Mapping[str, float | None]) -> str:
    """`server 0.354 and middleware 0.163`: the budgeted roles' factors."""
    return listed([f"{role} {f:.3f}" for role, f in factors.items() if f is not None])


def setup_words(runs: pd.DataFrame) -> str:
    """The check's machines and load in words: `1 server, 1 middleware with 8 workers, 16
    clients`."""

    def values(column: str) -> str:
        found = sorted({int(v) for v in pd.to_numeric(runs[column]).dropna()})
        return " or ".join(map(str, found)) or "--"

    def plural(column: str, word: str) -> str:
        n = values(column)
        return f"{n} {word}" + ("" if n == "1" else "s")

    return (
        f"{plural('servers', 'server')}, {plural('middlewares', 'middleware')} with"
        f" {plural('middleware.workers', 'worker')}, {plural('clients_total', 'client')}"
    )


def check_factor_numbers(
    cal: Mapping[str, Any] | None,
    runs: pd.DataFrame,
    vcpus: Mapping[str, int] | None,
    study: str | None,
    families: Mapping[str, pd.DataFrame] | None = None,
) -> dict[str, str]:
    """The macros on the factors the check's runs ran with (`runs`: its runs, one row per run
    and side, as recorded; `vcpus`: role_vcpus of its `study`; `families`: the points of the
    study's other families, each as measured, with their recorded budgets).

    `ScaleCheckFactorCase`: `kept` (every run's budgets are the kept factors'), `session`
    (another session's fits of the same targets, the calibration's refits, give the budgets
    the kept ones do not), `other` (neither), `none` (no check, calibration or budget).
    `ScaleStudyFactorCase`: `kept` where every other family of the study ran with the kept
    factors, `mixed` where some did not, `none` without any. Beside them the factors in words,
    the check's budgets over the kept ones, its days and its setup."""
    out = {"ScaleCheckFactorCase": "none", "ScaleStudyFactorCase": "none"}
    for name in ("Factors", "KeptFactors", "BudgetRatios", "Days", "Setup", "Study",
                 "StudyFamilies"):  # fmt: skip
        out[f"ScaleCheck{name}"] = "--"
    runs = budgeted(runs)
    if cal is None or runs.empty or not vcpus or study not in (cal.get("speed_factors") or {}):
        return out
    kept = {role: cal["speed_factors"][study].get(role) for role in vcpus}
    used = budget_factors(runs, vcpus)
    out["ScaleCheckStudy"] = str(study)
    out["ScaleCheckFactors"] = _factor_words(used)
    out["ScaleCheckKeptFactors"] = _factor_words(kept)
    ratios = [
        f"the {role}'s {u / kept[role]:.2f}"
        for role, u in used.items()
        if u is not None and kept.get(role)
    ]
    out["ScaleCheckBudgetRatios"] = f"{listed(ratios)} times the kept ones" if ratios else "--"
    if "started_at" in runs.columns:
        days = sorted({str(t)[:10] for t in runs["started_at"].dropna()})
        out["ScaleCheckDays"] = listed(days) or "--"
    out["ScaleCheckSetup"] = setup_words(runs)
    if ran_with(runs, vcpus, kept):
        out["ScaleCheckFactorCase"] = "kept"
    else:
        # Each role's factor is the kept one or another session's fit of that role's target.
        others = {
            role: [
                float(r["other"])
                for r in cal.get("refits") or []
                if r["role"] == role and str(study) in map(str, r.get("studies") or [])
            ]
            for role in vcpus
        }
        matched = all(
            ran_with(runs, vcpus, {role: kept[role]})
            or any(ran_with(runs, vcpus, {role: f}) for f in others[role])
            for role in vcpus
        )
        out["ScaleCheckFactorCase"] = "session" if matched else "other"
    tables = {f: budgeted(t) for f, t in (families or {}).items()}
    tables = {f: t for f, t in tables.items() if not t.empty}
    if tables:
        out["ScaleCheckStudyFamilies"] = str(len(tables))
        same = all(ran_with(t, vcpus, kept) for t in tables.values())
        out["ScaleStudyFactorCase"] = "kept" if same else "mixed"
    return out
