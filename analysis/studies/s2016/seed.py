"""Seed 001's factorial design (reference2016.yaml, models.factorial) beside ours: its
printed data as a frame, its allocation of variation recomputed, and the comparison table's
rows and the numbers the section's prose reads."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis.models import factorial
from analysis.report import figures as fg

FACTORS = ("S", "Rep", "w")
RESPONSE = "throughput"


def factorial_data(block: Mapping) -> pd.DataFrame:
    """The printed runs (`data` of models.factorial) as a frame with the factors as text."""
    columns, rows = list(block.get("columns", [])), block.get("rows", [])
    missing = {*FACTORS, RESPONSE} - set(columns)
    if missing:
        raise factorial.DesignError(f"printed data lack columns {sorted(missing)}")
    if any(len(r) != len(columns) for r in rows):
        raise factorial.DesignError(f"every printed row needs {len(columns)} values")
    frame = pd.DataFrame(rows, columns=columns)
    for f in FACTORS:
        frame[f] = frame[f].astype(str)
    frame[RESPONSE] = pd.to_numeric(frame[RESPONSE], errors="raise").astype(float)
    return frame


def recompute(block: Mapping) -> tuple[factorial.FactorialResult, factorial.AllocationCheck]:
    """The seed's design analysed by our code from its printed runs, beside its printed
    effects and shares."""
    data = factorial_data(block["data"])
    result = factorial.analyse(data, RESPONSE, list(FACTORS), high=dict(block["high"]))
    check = factorial.check_allocation(result, block["variation"], block["effects"])
    return result, check


def comparison_rows(
    ours: factorial.FactorialResult | None,
    seed: factorial.FactorialResult,
    check: factorial.AllocationCheck,
    printed_effects: Mapping[str, float],
) -> list[list[str]]:
    """Term, our effect and share, the seed's printed effect, printed and recomputed share;
    an error row and a row with the shares' sums."""
    rows = []
    for term in ["mean", *seed.terms, "error"]:
        share = term != "mean"
        mine_q = ours.effects.get(term, math.nan) if ours and term != "error" else math.nan
        mine_v = ours.variation.get(term, math.nan) if ours and share else math.nan
        rows.append(
            [
                fg.escape(term),
                fg.num(mine_q) if term != "error" else "",
                fg.pct(mine_v) if share else "",
                fg.num(printed_effects.get(term, math.nan), 1) if term != "error" else "",
                fg.pct(check.printed[term]) if share else "",
                fg.pct(check.recomputed[term]) if share else "",
            ]
        )
    mine_sum = sum(ours.variation.values()) if ours else math.nan
    rows.append(
        ["sum", "", fg.pct(mine_sum), "", fg.pct(check.printed_sum), fg.pct(check.recomputed_sum)]
    )
    return rows


def top_term(variation: Mapping[str, float]) -> str:
    """The term (not the error) that explains most of the variation."""
    terms = {t: v for t, v in variation.items() if t != "error" and math.isfinite(v)}
    if not terms:
        raise ValueError("no term has a share of variation")
    return max(terms, key=lambda t: terms[t])


def cpu_by_servers(runs: pd.DataFrame, column: str) -> dict[str, float]:
    """Mean of a CPU column per level of the servers factor (runs with the column set)."""
    known = runs.dropna(subset=[column]) if column in runs.columns else runs.iloc[0:0]
    return {str(k): float(v) for k, v in known.groupby("S")[column].mean().items()}


def compare_numbers(
    ours: factorial.FactorialResult,
    seed: factorial.FactorialResult,
    middleware_cpu: Mapping[str, float],
    server_cpu: Mapping[str, float],
    threads: Mapping[str, int],
) -> dict[str, str]:
    """Whether one term dominates both designs, and our runs' CPU use at the low and high
    level of servers (`SixteenFactCompareCase`: `same` or `different` top term;
    `SixteenFactCpuCase`: `more` where the middleware used more of its budget with more
    servers, `other`, or `unknown` where the runs accounted no CPU per host;
    `SixteenFactThreadsCase`: `known` or `unknown` threads per level)."""
    low, high = str(ours.levels["S"]["low"]), str(ours.levels["S"]["high"])
    lo_cpu, hi_cpu = middleware_cpu.get(low, math.nan), middleware_cpu.get(high, math.nan)
    if not (math.isfinite(lo_cpu) and math.isfinite(hi_cpu)):
        cpu = "unknown"
    else:
        cpu = "more" if hi_cpu > lo_cpu else "other"
    known = low in threads and high in threads
    return {
        "SixteenFactCompareCase": (
            "same" if top_term(ours.variation) == top_term(seed.variation) else "different"
        ),
        "SixteenFactCpuCase": cpu,
        "SixteenFactCpuLow": fg.pct(lo_cpu, 0),
        "SixteenFactCpuHigh": fg.pct(hi_cpu, 0),
        "SixteenFactServerCpuLow": fg.pct(server_cpu.get(low, math.nan), 0),
        "SixteenFactServerCpuHigh": fg.pct(server_cpu.get(high, math.nan), 0),
        "SixteenFactThreadsCase": "known" if known else "unknown",
        "SixteenFactThreadsLow": str(threads[low]) if known else fg.MISSING,
        "SixteenFactThreadsHigh": str(threads[high]) if known else fg.MISSING,
    }
