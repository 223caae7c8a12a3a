"""The 2016 2^3·r factorial design (servers, replication, writes) on throughput and response
time measured at the clients: effects, confidence intervals, allocation of variation and the
residual checks; beside it seed 001's design (Table 4), recomputed from its printed runs
(Appendix A)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from analysis.aggregate import CI_LEVEL
from analysis.models import factorial
from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2016 import seed as seed2016

FACTORS = {"level_servers": "S", "level_replication": "Rep", "level_writes": "w"}
HIGH = {"S": "7", "Rep": "full", "w": "10"}
ALPHA = 1 - CI_LEVEL


def blank(path: str) -> None:
    """An empty figure in place of residual checks that cannot be drawn (the section says
    why instead of showing it)."""
    fig, axes = fg.figure(height=1.2)
    axes[0][0].axis("off")
    fg.save(fig, path)


def seed_comparison(
    block: Mapping, ours: factorial.FactorialResult | None, data: pd.DataFrame
) -> tuple[str, dict[str, str]]:
    """Seed 001's Table 4 (`block`: models.factorial of reference2016.yaml) beside our
    throughput design, its allocation recomputed from its Appendix A: the tabular and its
    numbers."""
    seed, check = seed2016.recompute(block)
    tabular = fg.tabular(
        ["Term", "$q$ ours", "Var. ours", "$q$ study", "Var. printed", "Var. recomputed"],
        seed2016.comparison_rows(ours, seed, check, block["effects"]),
        "lrrrrr",
    )
    top = seed2016.top_term(seed.variation)
    numbers = dict(
        SixteenSeedFactTable=fg.escape(block["table"]),
        SixteenSeedFactDataTable=fg.escape(block["data"]["table"]),
        SixteenSeedFactRuns=fg.num(len(seed.observations)),
        SixteenSeedFactThreads=fg.num(block["config"]["threads_per_pool"]),
        SixteenSeedFactClients=fg.num(block["config"]["clients"]),
        SixteenSeedFactReplications=fg.num(seed.replications),
        SixteenSeedFactSumPrinted=fg.num(check.printed_sum, 3),
        SixteenSeedFactSumRecomputed=fg.num(check.recomputed_sum, 3),
        SixteenSeedFactEffectDifference=fg.num(check.effect_difference, 1),
        SixteenSeedFactTopTerm=fg.escape(top),
        SixteenSeedFactTopPrinted=fg.pct(check.printed[top]),
        SixteenSeedFactTopRecomputed=fg.pct(check.recomputed[top]),
        SixteenSeedFactTopRatio=fg.num(check.ratio(top), 3),
        SixteenSeedFactServersPrinted=fg.pct(check.printed["S"]),
        SixteenSeedFactServersRecomputed=fg.pct(check.recomputed["S"]),
        SixteenSeedFactWritesRecomputed=fg.pct(check.recomputed["w"]),
        SixteenSeedFactWritesEffect=fg.num(seed.effects["w"]),
        SixteenSeedFactErrorPrinted=fg.pct(check.printed["error"]),
        SixteenSeedFactErrorRecomputed=fg.pct(check.recomputed["error"]),
    )
    if ours is None:
        return tabular, numbers
    runs = data.assign(S=data["S"].astype(str))
    workers = runs["middleware.workers"] if "middleware.workers" in runs else pd.Series()
    threads = {
        str(s): int(s) * (int(t) + 1)
        for s, t in zip(runs["S"], workers, strict=False)
        if not pd.isna(t)
    }
    ci = ours.confidence_intervals["w"]
    numbers.update(
        SixteenFactServersShare=fg.pct(ours.variation["S"]),
        SixteenFactWritesShare=fg.pct(ours.variation["w"]),
        SixteenFactWritesEffect=fg.num(ours.effects["w"]),
        SixteenFactWritesCase=(
            ("significant" if ours.significant()["w"] else "insignificant")
            if not math.isnan(ci[0])
            else "untested"
        ),
        **seed2016.compare_numbers(
            ours,
            seed,
            seed2016.cpu_by_servers(runs, "cpu_util_middleware"),
            seed2016.cpu_by_servers(runs, "cpu_util_server"),
            threads,
        ),
    )
    return tabular, numbers


def design_data(runs: pd.DataFrame) -> pd.DataFrame:
    """The ok client runs of all requests with the factors named S, Rep and w, and the
    response time in ms; in the study's time."""
    # Effects in the study's time (throughput / s, times * s by the runs' scale).
    runs = in_study_time(runs)
    runs = runs[(runs["side"] == "client") & (runs["type"] == "all") & (runs["status"] == "ok")]
    data = runs.rename(columns=FACTORS).reset_index(drop=True)
    data["response_ms"] = data["response_us_mean"] / 1e3
    return data


def analyse(data: pd.DataFrame) -> tuple[dict[str, factorial.FactorialResult], str | None]:
    """The design on throughput and on response time, or why it cannot be analysed."""
    results: dict[str, factorial.FactorialResult] = {}
    problem = None
    try:
        for response in ("throughput_ops", "response_ms"):
            results[response] = factorial.analyse(
                data, response, list(FACTORS.values()), high=HIGH, alpha=ALPHA, order="started_at"
            )
    except factorial.DesignError as err:
        problem = str(err)
    return results, problem


def estimable(tp: factorial.FactorialResult) -> bool:
    """Whether the error term is a finding."""
    # With one repetition the error is zero by construction: not estimable, not a finding.
    return tp.replications >= 2


def error_share(res: factorial.FactorialResult, known: bool) -> str:
    """The error's share of the variation, where it is `known` (estimable)."""
    return fg.pct(res.variation["error"]) if known else "n/a"


def effects_tabular(
    tp: factorial.FactorialResult, rt: factorial.FactorialResult
) -> tuple[str, bool]:
    """Effects, intervals and shares of variation on throughput and response time, and
    whether the design has no intervals (one repetition): then their columns are left out."""
    rows = []
    for term in ["mean", *tp.terms]:
        cells = [fg.escape(term)]
        for res, digits in ((tp, 0), (rt, 3)):
            lo, hi = res.confidence_intervals[term]
            mark = "*" if term != "mean" and res.significant()[term] else ""
            cells += [
                fg.num(res.effects[term], digits) + mark,
                f"[{fg.num(lo, digits)}, {fg.num(hi, digits)}]",
                fg.pct(res.variation[term]) if term != "mean" else "",
            ]
        rows.append(cells)
    err_x = error_share(tp, estimable(tp))
    err_r = error_share(rt, estimable(tp))
    rows.append(["error", "", "", err_x, "", "", err_r])
    header = [
        "Term",
        "$q$ ($X$, ops/s)",
        f"CI {fg.num(100 * (1 - ALPHA))}\\,\\%",
        "Var.",
        "$q$ ($R$, ms)",
        "CI",
        "Var.",
    ]
    # One repetition gives no intervals: a column of dashes says less than the caption.
    intervals = [lo for res in (tp, rt) for lo, _ in res.confidence_intervals.values()]
    no_intervals = all(math.isnan(lo) for lo in intervals)
    if no_intervals:
        rows = [[x for i, x in enumerate(r) if i not in (2, 5)] for r in rows]
        header = [x for i, x in enumerate(header) if i not in (2, 5)]
    return fg.tabular(header, rows, "l" + "r" * (len(header) - 1)), no_intervals


def levels(tp: factorial.FactorialResult | None) -> dict[str, str]:
    """The factors' low and high levels, which the table's caption names (dashes without a
    design)."""
    out = {}
    for factor, name in (("S", "Servers"), ("Rep", "Replication"), ("w", "Writes")):
        for end in ("low", "high"):
            value = str(tp.levels[factor][end]) if tp else fg.MISSING
            out[f"SixteenFact{end.capitalize()}{name}"] = value
    return out


@dataclass(frozen=True)
class Report:
    table: str
    seed_table: str
    numbers: dict[str, str]


def report(runs: pd.DataFrame, block: Mapping, diagnostics_path: str) -> Report:
    """Our design from the family's raw runs beside seed 001's (`block`: models.factorial of
    reference2016.yaml); draws the residual checks at `diagnostics_path`. `SixteenFactCase`:
    `replicated`, `single` (one repetition: no error term), or `incomplete` (not analysed,
    for the reason `SixteenFactProblem`; the table is then empty and the figure blank)."""
    data = design_data(runs)
    results, problem = analyse(data)
    numbers: dict[str, str] = {"SixteenFactAlpha": fg.num(100 * (1 - ALPHA))}
    if problem:
        numbers.update(
            SixteenFactCase="incomplete",
            SixteenFactProblem=fg.escape(problem),
            SixteenFactReplications=fg.MISSING,
            SixteenFactIntervalsCase="none",
            **levels(None),
        )
        blank(diagnostics_path)
        seed_table, seed_numbers = seed_comparison(block, None, data)
        numbers.update(seed_numbers)
        return Report("% not analysed (SixteenFactCase: incomplete)\n", seed_table, numbers)
    tp, rt = results["throughput_ops"], results["response_ms"]
    table, no_intervals = effects_tabular(tp, rt)
    numbers.update(
        SixteenFactCase="replicated" if estimable(tp) else "single",
        SixteenFactIntervalsCase="none" if no_intervals else "given",
        **levels(tp),
    )
    factorial.plot_diagnostics(tp, diagnostics_path)
    top = max(tp.terms, key=lambda t: tp.variation[t])
    numbers.update(
        SixteenFactReplications=fg.num(tp.replications),
        SixteenFactTopTerm=fg.escape(top),
        SixteenFactTopShare=fg.pct(tp.variation[top]),
        SixteenFactErrorShare=error_share(tp, estimable(tp)),
    )
    seed_table, seed_numbers = seed_comparison(block, tp, data)
    numbers.update(seed_numbers)
    return Report(table, seed_table, numbers)
