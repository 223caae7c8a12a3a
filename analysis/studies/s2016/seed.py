"""Seed 001's factorial design (reference2016.yaml, models.factorial) beside ours: its
printed data as a frame, its allocation of variation recomputed, and the comparison table's
rows and sentences."""

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


def compare_sentence(
    ours: factorial.FactorialResult,
    seed: factorial.FactorialResult,
    middleware_cpu: Mapping[str, float],
    server_cpu: Mapping[str, float],
    threads: Mapping[str, int],
) -> str:
    """Which term dominates each design, and what our runs' CPU use says about servers."""
    mine, theirs = top_term(ours.variation), top_term(seed.variation)
    head = (
        f"Both analyses find {fg.escape(mine)} the term that explains most of the "
        "throughput's variation."
        if mine == theirs
        else f"The study's throughput varies most with {fg.escape(theirs)} "
        f"({fg.pct(seed.variation[theirs])} recomputed), ours with {fg.escape(mine)} "
        f"({fg.pct(ours.variation[mine])})."
    )
    low, high = str(ours.levels["S"]["low"]), str(ours.levels["S"]["high"])
    lo_cpu, hi_cpu = middleware_cpu.get(low, math.nan), middleware_cpu.get(high, math.nan)
    if not (math.isfinite(lo_cpu) and math.isfinite(hi_cpu)):
        return head + " Our runs did not account CPU use per host, so they cannot say why."
    thread_text = (
        f" ({threads[low]} and {threads[high]} read and write threads)"
        if low in threads and high in threads
        else ""
    )
    used = (
        f" Our middleware used {fg.pct(lo_cpu, 0)} of its CPU budget with {low} servers and "
        f"{fg.pct(hi_cpu, 0)} with {high}{thread_text}, its memcached servers "
        f"{fg.pct(server_cpu.get(low, math.nan), 0)} and "
        f"{fg.pct(server_cpu.get(high, math.nan), 0)} of theirs"
    )
    if hi_cpu > lo_cpu:
        return (
            head + used + ": in the scale model more servers mean more threads in a "
            "middleware whose CPU budget is nearly spent, not more capacity; the study's "
            "middleware ran on an eight-core machine."
        )
    return head + used + "."
