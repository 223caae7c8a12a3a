"""Agreement of a new measurement with a reference dataset (analysis/dataset.py): per family
and point, the ratio of the new mean to the archived one for throughput and response time,
with a 95 % confidence interval (the verdicts that changed: analysis.findings.compare_builds).

The ratio's interval is computed on the log scale by the delta method,
var(log r) = s1²/(n1·m1²) + s0²/(n0·m0²), with Student's t at n1 + n0 − 2 degrees of freedom;
it needs two repetitions on each side, and is missing otherwise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.latex import escape

METRICS = {"throughput": "throughput_ops", "response": "response_us_mean"}
KEY = ["point", "side", "type"]


def ratios(new: pd.DataFrame, old: pd.DataFrame, family: str) -> pd.DataFrame:
    """One row per point both measured (clients' view, all request types): the ratios
    new/archived of throughput and response time with their intervals."""

    def clients(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[(frame["side"] == "client") & (frame["type"] == "all")]

    merged = clients(new).merge(clients(old), on=KEY, suffixes=("_new", "_old"))
    out = pd.DataFrame({"family": family, "point": merged["point"]})
    for name, metric in METRICS.items():
        m1, m0 = merged[f"{metric}_mean_new"], merged[f"{metric}_mean_old"]
        s1, s0 = merged[f"{metric}_std_new"], merged[f"{metric}_std_old"]
        n1, n0 = merged["repetitions_new"], merged["repetitions_old"]
        ratio = m1 / m0
        se = np.sqrt(s1**2 / (n1 * m1**2) + s0**2 / (n0 * m0**2))
        dof = (n1 + n0 - 2).where((n1 >= 2) & (n0 >= 2))
        t = pd.Series(stats.t.ppf(0.975, dof.fillna(1)), index=merged.index).where(dof.notna())
        out[f"{name}_ratio"] = ratio.to_numpy()
        out[f"{name}_low"] = (ratio * np.exp(-t * se)).to_numpy()
        out[f"{name}_high"] = (ratio * np.exp(t * se)).to_numpy()
    return out


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per family: points compared, the median and range of each ratio, and how many points'
    intervals hold 1 (agree) of those with an interval."""
    out = []
    for family, group in rows.groupby("family", sort=True):
        row: dict[str, Any] = {"family": family, "points": len(group)}
        for name in METRICS:
            ratio = group[f"{name}_ratio"].dropna()
            with_ci = group.dropna(subset=[f"{name}_low", f"{name}_high"])
            holds = (with_ci[f"{name}_low"] <= 1) & (with_ci[f"{name}_high"] >= 1)
            row.update(
                {
                    f"{name}_median": float(ratio.median()) if len(ratio) else math.nan,
                    f"{name}_min": float(ratio.min()) if len(ratio) else math.nan,
                    f"{name}_max": float(ratio.max()) if len(ratio) else math.nan,
                    f"{name}_with_ci": len(with_ci),
                    f"{name}_agree": int(holds.sum()),
                }
            )
        out.append(row)
    return pd.DataFrame(out)


def table(frame: pd.DataFrame) -> str:
    """The appendix's tabular: per family, points compared and each ratio's median and range,
    with the points whose interval holds 1 out of those with an interval."""

    def cell(row: pd.Series, name: str) -> str:
        if math.isnan(row[f"{name}_median"]):
            return "-- & --"
        agree = (
            f"{row[f'{name}_agree']}/{row[f'{name}_with_ci']}" if row[f"{name}_with_ci"] else "--"
        )
        return (
            f"{row[f'{name}_median']:.3f} [{row[f'{name}_min']:.2f}, {row[f'{name}_max']:.2f}]"
            f" & {agree}"
        )

    rows = [
        rf"\texttt{{{escape(r.family)}}} & {r.points} & "
        rf"{cell(r, 'throughput')} & {cell(r, 'response')} \\"
        for _, r in frame.iterrows()
    ]
    return "\n".join(
        [
            r"\begin{tabular}{@{}lrlrlr@{}}",
            r"\toprule",
            r"Family & Points & Throughput ratio & CI holds 1 & Response-time ratio"
            r" & CI holds 1 \\",
            r"\midrule",
            *(rows or [r"\multicolumn{6}{@{}l}{No point was measured in both.} \\"]),
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )
