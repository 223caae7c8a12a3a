"""The validation appendix's generated parts: the per-family summary (a tabular), the rows
of the per-run table (macros the section's longtable uses, as a longtable cannot \\input
its body) and the numbers the text cites. Captions are in paper/sections/validation.tex."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis.calibration import MAX_STEAL_SHARE
from analysis.latex import escape
from analysis.report import factor_words as fw
from analysis.report import figures as fg
from analysis.validate import LAW_TOLERANCE, NEAR_BOUND, UNSTABLE_REASONS
from common import stability
from common.machinespeed import MAX_SPREAD as MAX_SPEED_SPREAD
from common.studies import STUDY_WORDS


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


# The share of a run's requests beyond its 99th percentile, the tail a p99 rests on.
TAIL_SHARE = 0.01
# The quantile over a study's runs that `ValidationRequestsLow` reads: a tenth of them hold
# fewer requests.
FEW_REQUESTS_QUANTILE = 0.1


def _span(values: pd.Series, digits: int = 3) -> str:
    """The least and the largest of `values` as `a to b` (one value where they agree), each
    to `digits` significant digits; a dash without values."""
    values = values.dropna()
    if values.empty:
        return fg.MISSING
    low, high = (format(float(v), f".{digits}g") for v in (values.min(), values.max()))
    return low if low == high else f"{low} to {high}"


def _about(value: float) -> str:
    """A count to two significant digits (at least the units), thousands grouped."""
    if not math.isfinite(value):
        return fg.MISSING
    digits = max(0, len(str(abs(round(value)))) - 2)
    return fg.num(round(value, -digits), 0)


def run_length_numbers(table: pd.DataFrame, studies: Mapping[str, str]) -> dict[str, str]:
    """How much a point's run measures, per study (`studies`: family -> study id), over the
    study's completed runs at its own scale factor (the most common among them; the scale
    check's runs at other factors stand apart):

    * `ValidationLengthWall<Study>`: the measured seconds of a run measured once, least to
      largest (a rerun for precision measures longer);
    * `ValidationLengthStudy<Study>`: the same in the study's time, seconds times $s$;
    * `ValidationRequests<Study>`: the median requests of the runs the validation kept
      (throughput times measured seconds), `ValidationRequestsLow<Study>` the count a tenth of
      them fall below (FEW_REQUESTS_QUANTILE);
    * `ValidationTail<Study>` and `ValidationTailLow<Study>`: the requests beyond the 99th
      percentile in such runs (TAIL_SHARE of them), what a run's p99 rests on.

    A dash where the study has no such run, or the table no scale."""
    out = {}
    names = ("LengthWall", "LengthStudy", "Requests", "RequestsLow", "Tail", "TailLow")
    for study, word in STUDY_WORDS.items():
        values = dict.fromkeys(names, fg.MISSING)
        rows = table[
            table["family"].map(lambda f, s=study: studies.get(str(f)) == s)
            & (table["status"] == "ok")
        ]
        if "scale" in rows and "measured_s" in rows:
            rows = rows[rows["scale"].notna() & rows["measured_s"].notna()]
        else:
            rows = rows.iloc[0:0]
        if not rows.empty:
            rows = rows[rows["scale"] == rows["scale"].mode().iloc[0]]
            once = rows[rows["reruns"] == 0] if "reruns" in rows else rows
            once = rows if once.empty else once
            values["LengthWall"] = _span(once["measured_s"])
            values["LengthStudy"] = _span(once["measured_s"] * once["scale"])
            kept = rows[~rows["excluded"].astype(bool)] if "excluded" in rows else rows
            requests = (kept["throughput_ops"] * kept["measured_s"]).dropna()
            if not requests.empty:
                median = float(requests.median())
                low = float(requests.quantile(FEW_REQUESTS_QUANTILE))
                values["Requests"], values["RequestsLow"] = _about(median), _about(low)
                values["Tail"] = _about(TAIL_SHARE * median)
                values["TailLow"] = _about(TAIL_SHARE * low)
        out |= {f"Validation{name}{word}": v for name, v in values.items()}
    return out


def numbers(table: pd.DataFrame, studies: Mapping[str, str] | None = None) -> str:
    """Every macro the text cites from the validation; `studies` (family -> study id) gives
    the run lengths per study (run_length_numbers), dashes without it."""
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
        **run_length_numbers(table, studies or {}),
    }
    return "".join(fg.macro(k, str(v)) for k, v in macros.items())
