"""The interactive response time law on every run of the 2016 families. Throughput predicted
from N and the client response time R (X = N/(R + Z), Z = 0 for memaslap), its relative error
per run, and the think time Z that would make the law exact. Bookkeeping in the runs' own
time base (raw): the law holds in any one time base."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.report import factor_words as fw
from analysis.report import figures as fg
from analysis.validate import LAW_TOLERANCE, interactive_law_table


def law_table(runs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The law's columns on every family's ok client runs of all requests (`runs`: each
    family's runs table by its name) that have a throughput and a response time."""
    frames = []
    for family, r in runs.items():
        r = r[(r["side"] == "client") & (r["type"] == "all") & (r["status"] == "ok")]
        frames.append(r.assign(family=family))
    table = pd.concat(frames, ignore_index=True)
    table = table.dropna(subset=["throughput_ops", "response_us_mean"])
    table = table[table["throughput_ops"] > 0]
    return interactive_law_table(table)


def figure(law: pd.DataFrame, path: str) -> None:
    """Per run, family after family: the law's relative error (left) and the fitted think
    time (right)."""
    fig, axes = fg.figure(ncols=2, height=2.8)
    families = sorted(law["family"].unique())
    styles = fg.distinct_styles(len(families))
    for i, fam in enumerate(families):
        d = law[law["family"] == fam].reset_index(drop=True)
        x = np.arange(len(d)) + sum((law["family"] == f).sum() for f in families[:i])
        style = {**styles[i], "s": 10}
        axes[0][0].scatter(x, 100 * d["relative_error"], label=fw.family_words(fam), **style)
        axes[0][1].scatter(x, d["fitted_think_us"] / 1e3, label=fw.family_words(fam), **style)
    axes[0][0].set_ylabel("relative error of $N/R$ (%)")
    axes[0][1].set_ylabel("fitted think time $Z$ (ms)")
    for ax in axes[0]:
        ax.set_xlabel("run (in family order)")
        ax.axhline(0, color="grey", lw=0.8)
    fg.legend_below(fig, axes[0][0])
    fg.save(fig, path)


def tabular(law: pd.DataFrame) -> str:
    """Per family: runs, mean and largest absolute error, mean and largest fitted Z."""
    families = sorted(law["family"].unique())
    rows = []
    for fam in families:
        d = law[law["family"] == fam]
        rows.append([
            fg.escape(fw.family_words(fam)),
            fg.num(len(d)),
            fg.pct(d["relative_error"].abs().mean()),
            fg.pct(d["relative_error"].abs().max()),
            fg.num(d["fitted_think_us"].mean() / 1e3, 3),
            fg.num(d["fitted_think_us"].max() / 1e3, 3),
        ])  # fmt: skip
    return fg.tabular(
        ["Family", "Runs", "mean $|e|$", "max $|e|$", "mean $Z$ (ms)", "max $Z$ (ms)"],
        rows,
        "lrrrrr",
    )


def numbers(law: pd.DataFrame) -> dict[str, str]:
    """Runs, mean and largest absolute error, and the runs within the law's tolerance."""
    err = law["relative_error"].abs()
    return {
        "SixteenLawRuns": fg.num(len(law)),
        "SixteenLawMeanError": fg.pct(err.mean()),
        "SixteenLawMaxError": fg.pct(err.max()),
        "SixteenLawWithin": fg.num(int((err <= LAW_TOLERANCE).sum())),
        "SixteenLawTolerance": fg.num(100 * LAW_TOLERANCE),
    }
