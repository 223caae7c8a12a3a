"""The validation appendix's generated parts: the per-family summary (a tabular), the rows
of the per-run table (macros the section's longtable uses, as a longtable cannot \\input
its body) and the numbers the text cites. Captions are in paper/sections/validation.tex."""

from __future__ import annotations

import math

import pandas as pd

from analysis.calibration import MAX_STEAL_SHARE
from analysis.latex import escape
from analysis.report import factor_words as fw
from analysis.report import figures as fg
from analysis.validate import LAW_TOLERANCE, NEAR_BOUND, UNSTABLE_REASONS
from common import stability
from common.machinespeed import MAX_SPREAD as MAX_SPEED_SPREAD


def _short(run: str) -> str:
    """family/point/repN as the point's level values and the repetition."""
    _, point, rep = run.split("/")
    values = [part.split("=", 1)[1] for part in point.split(",")]
    return escape(" ".join(values).replace("_", " ")) + f" r{rep.removeprefix('rep')}"


def _num(value: float, fmt: str) -> str:
    return fg.MISSING if pd.isna(value) else format(value, fmt)


def _percent(value: float) -> str:
    return fg.MISSING if pd.isna(value) else rf"{100 * value:.1f}\,\%"


RUN_HEAD = (
    r"\toprule Point and repetition & X [ops/s] & Win. & Trend $p$ & CI $\pm$ & Law err. & "
    r"Bound & Flags \\ \midrule"
)


def run_rows(table: pd.DataFrame) -> str:
    """`\\ValidationRunHead` and `\\ValidationRunRows`: the header and one block per family
    of the per-run longtable (eight columns)."""
    lines = []
    for family, rows in table.groupby("family", sort=True):
        # The identifier beside the words: it names the run's directory.
        name = escape(fw.family_words(str(family)))
        lines.append(
            rf"\multicolumn{{8}}{{@{{}}l}}{{{name} (\texttt{{{escape(str(family))}}})}} \\"
        )
        for _, r in rows.iterrows():
            lines.append(
                rf"\quad {_short(r['run'])} & "
                rf"{_num(r['throughput_ops'], '.0f')} & {r['windows']} & "
                rf"{_num(r['trend_p'], '.2f')} & {_percent(r['rel_half_width'])} & "
                rf"{_num(r['law_error'], '+.3f')} & {_num(r['bound_fraction'], '.2f')} & "
                rf"{escape(r['flags'])} \\"
            )
    return fg.longtable_macros("ValidationRun", RUN_HEAD, lines)


def summary_tabular(summary: pd.DataFrame) -> str:
    """Per family: runs, stable, unstable by failed criterion, failed, reruns."""
    header = ["Family", "Runs", "Stable", "Unstable", "trend", "imprecise", "too few win.",
              "steal", "speed", "Failed", "Reruns"]  # fmt: skip
    rows = [
        [escape(fw.family_words(str(r["family"])))]
        + [
            str(int(r[c]))
            for c in ("runs", "stable", "unstable", *UNSTABLE_REASONS, "steal", "speed")
        ]
        + [str(int(r["failed"])), str(int(r["reruns"]))]
        for _, r in summary.iterrows()
    ]
    if len(summary):
        totals = summary.drop(columns="family").sum()
        rows.append([r"\midrule all"] + [str(int(totals[c])) for c in summary.columns[1:]])
    return fg.tabular(header, rows, "@{}lrrrrrrrrrr@{}")


def lengths_tabular(lengths: pd.DataFrame) -> str:
    """Per family: runs, measured seconds, CI half-widths and the lengths the precision
    criterion asks for (analysis.validate.run_lengths)."""
    header = ["Family", "Runs", "Meas. [s]", r"CI $\pm$ med.", r"CI $\pm$ p90",
              "Needs [s] med.", "Needs [s] p90"]  # fmt: skip
    rows = [
        [
            escape(fw.family_words(str(r["family"]))),
            str(int(r["runs"])),
            _num(r["measured_s"], ".1f"),
            _percent(r["half_width"]),
            _percent(r["half_width_p90"]),
            _num(r["needed_s"], ".1f"),
            _num(r["needed_s_p90"], ".1f"),
        ]
        for _, r in lengths.iterrows()
    ]
    return fg.tabular(header, rows, "@{}lrrrrrr@{}")


def _median(values: pd.Series) -> str:
    return _num(values.median(), ".0f") if values.notna().any() else fg.MISSING


def law_numbers(table: pd.DataFrame) -> dict[str, str]:
    """Why runs deviate from the interactive law: how many of them waited out TCP
    retransmission timeouts (`rto_timeouts`, where a link's token bucket drops packets),
    with the median per run beside the other runs', and how many are excluded anyway."""
    ok = table[table["status"] == "ok"]
    law = ok["flags"].str.contains("law")
    rto = pd.to_numeric(ok.get("rto_timeouts", pd.Series(index=ok.index)), errors="coerce")
    return {
        "ValidationLawTimeouts": str(int((law & (rto > 0)).sum())),
        "ValidationLawTimeoutsMedian": _median(rto[law]),
        "ValidationOtherTimeoutsMedian": _median(rto[~law]),
        "ValidationLawExcluded": str(int((law & ok["excluded"].astype(bool)).sum())),
    }


def numbers(table: pd.DataFrame) -> str:
    ok = table[table["status"] == "ok"]
    stable_share = ok["stable"].mean() if len(ok) else math.nan
    macros = {
        "ValidationRuns": len(table),
        "ValidationCompleted": len(ok),
        "ValidationFailed": int((table["status"] != "ok").sum()),
        "ValidationUnstable": int(table["flags"].str.contains("unstable").sum()),
        "ValidationExcluded": int(table["excluded"].sum()),
        "ValidationReruns": int(table["reruns"].sum()) if "reruns" in table else 0,
        "ValidationStableShare": _percent(stable_share),
        "ValidationLawViolations": int(table["flags"].str.contains("law").sum()),
        "ValidationAtBound": int(table["flags"].str.contains("at bound").sum()),
        "ValidationUnstableSteal": int(
            (table["flags"].str.contains("unstable") & table["flags"].str.contains("steal")).sum()
        ),
        "ValidationStealLimit": rf"{100 * MAX_STEAL_SHARE:g}\,\%",
        "ValidationUnstableSpeed": int(
            (table["flags"].str.contains("unstable") & table["flags"].str.contains("speed")).sum()
        ),
        "ValidationSpeedLimit": rf"{100 * MAX_SPEED_SPREAD:g}\,\%",
        "ValidationSpeedSpreadMedian": _percent(ok["speed_spread"].median())
        if "speed_spread" in ok
        else fg.MISSING,
        "ValidationMedianWindows": _num(ok["windows"].median(), ".0f"),
        "ValidationMedianHalfWidth": _percent(ok["rel_half_width"].median()),
        "ValidationMaxLawError": _num(ok["law_error"].abs().max(), ".3f"),
        "ValidationMinWindows": str(stability.MIN_WINDOWS),
        "ValidationMinBatches": str(stability.MIN_BATCHES),
        "ValidationTrendAlpha": f"{stability.TREND_ALPHA:g}",
        "ValidationMaxHalfWidth": rf"{100 * stability.MAX_REL_HALF_WIDTH:g}\,\%",
        "ValidationLawLimit": f"{LAW_TOLERANCE:g}",
        "ValidationNearBound": f"{NEAR_BOUND:g}",
        "ValidationMaxBound": _num(ok["bound_fraction"].max(), ".2f"),
        **law_numbers(table),
    }
    return "".join(fg.macro(k, str(v)) for k, v in macros.items())
