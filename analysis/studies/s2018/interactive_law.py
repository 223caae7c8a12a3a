"""The interactive-law checks of the baselines: client throughput against N/(R+Z) with
Z = 0 for every point of both families, and seed 004's Fig. 6, the middleware's throughput
predicted from the requests inside it (analysis.models.modified_law)."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from analysis import validate
from analysis.models import modified_law
from analysis.report import figures as fg
from analysis.studies.s2018.baseline_maxima import SETUPS_M, WORKLOADS

LAW_SERIES = [
    (setup, wl, marker)
    for (setup, wl), marker in zip(
        [(s, w) for s in SETUPS_M for w in WORKLOADS], ["o", "^", "s", "D"], strict=True
    )
]


def interactive_law(direct: pd.DataFrame, mw: pd.DataFrame, path: str) -> list[str]:
    """The interactive law with Z = 0: client X against N/(R+Z) for every point of both
    families (figure at `path`); its macros."""
    numbers: list[str] = []
    law_in = pd.concat([direct, mw])
    law_in = law_in[(law_in["side"] == "client") & (law_in["throughput_ops_mean"] > 0)]
    law_in = law_in.dropna(subset=["response_us_mean_mean"])
    law = validate.interactive_law_table(
        law_in, throughput="throughput_ops_mean", response_us="response_us_mean_mean"
    )
    dev = law["relative_error"].abs()
    fig, axes = fg.figure(ncols=1, width=3.6, height=3.0)
    ax = axes[0][0]
    for fam, marker in [
        ("one_server", "o"),
        ("two_servers", "^"),
        ("one_middleware", "s"),
        ("two_middlewares", "D"),
    ]:
        d = law[law["level_setup"] == fam]
        if not d.empty:
            # The measured throughput's confidence interval, where the points carry one.
            xerr = fg.ci_errors(d, "throughput_ops") if "throughput_ops_ci_low" in d else None
            ax.errorbar(
                d["throughput_ops_mean"],
                d["predicted_throughput_ops"],
                xerr=xerr,
                linestyle="none",
                markersize=3.5,
                capsize=1.5,
                elinewidth=0.6,
                marker=marker,
                markerfacecolor="none",  # hollow: points of two setups at one place both show
                label=fam.replace("_", " "),
            )
    lim = float(
        np.nanmax([law["throughput_ops_mean"].max(), law["predicted_throughput_ops"].max(), 1])
    )
    ax.plot([0, lim * 1.05], [0, lim * 1.05], color="grey", lw=0.8, label="X = N/(R+Z)")
    ax.set(xlabel="measured X (client) [ops/s]", ylabel="N/(R+Z), Z = 0 [ops/s]")
    ax.legend(fontsize=6)
    fg.save(fig, path)
    numbers.append(fg.macro("BaseLawPoints", str(len(law))))
    numbers.append(fg.macro("BaseLawMaxDev", fg.pct(dev.max() if len(dev) else math.nan)))
    # The point of the largest deviation and the retransmission timeouts its clients waited
    # out (the validation appendix's explanation of such deviations).
    top = law.loc[dev.idxmax()] if len(dev) else None
    numbers.append(
        fg.macro(
            "BaseLawMaxDevPoint",
            fg.MISSING
            if top is None
            else f"{str(top['level_setup']).replace('_', ' ')}, {top['level_workload']},"
            f" {int(top['clients_total'])} clients",
        )
    )
    rto = top.get("rto_timeouts", math.nan) if top is not None else math.nan
    numbers.append(fg.macro("BaseLawMaxDevTimeouts", fg.num(rto)))
    numbers.append(fg.macro("BaseLawMedianDev", fg.pct(dev.median() if len(dev) else math.nan)))
    numbers.append(
        fg.macro(
            "BaseLawThinkUs",
            fg.num(law["fitted_think_us"].median() if len(law) else math.nan, 0),
        )
    )

    return numbers


def modified_interactive_law(m: pd.DataFrame, path: str) -> list[str]:
    """Seed 004's Fig. 6: the middleware's throughput predicted from the requests inside it
    (queue length and requests held by workers) over its response time, in the study's time
    (`m`: from mw_statistics.statistics_points; figure at `path`); its macros."""
    lengths = m.set_index("point")["queue_len_mean"]
    law = modified_law.law_table(m, lengths)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = fg.figure(ncols=1, width=3.6, height=3.0)
    ax = axes[0][0]
    for i, (setup, wl, marker) in enumerate(LAW_SERIES):
        d = law[(law["level_setup"] == setup) & (law["level_workload"] == wl)]
        if not d.empty:
            ax.scatter(
                d["throughput_ops_mean"],
                d["predicted_ops"],
                s=16,
                marker=marker,
                # Hollow markers: points of different series at the same place stay visible.
                facecolors="none",
                edgecolors=colours[i % len(colours)],
                label=f"{setup.replace('_', ' ')}, {wl}",
            )
    lim = float(np.nanmax([law["throughput_ops_mean"].max(), law["predicted_ops"].max(), 1]))
    ax.plot([0, lim * 1.05], [0, lim * 1.05], color="grey", lw=0.8, label="prediction = X")
    ax.set(
        xlabel=fg.study_label("measured X (middleware)", "ops/s"),
        ylabel="(X T$_w$ + Q) / R$_{mw}$ [ops/s]",
    )
    ax.legend(fontsize=6)
    ax.xaxis.set_major_locator(MaxNLocator(5))  # long tick labels must not overlap
    fg.save(fig, path)

    dev = law["relative_error"].abs()
    net = (m["net_us_mean_mean"] / m["response_us_mean_mean"]).dropna()
    few = law[law["clients_total"] == law["clients_total"].min()]["relative_error"].abs()
    many = law[law["clients_total"] == law["clients_total"].max()]["relative_error"].abs()
    return [
        fg.macro("ModLawPoints", str(len(law))),
        fg.macro("ModLawMedianDev", fg.pct(dev.median() if len(dev) else math.nan)),
        fg.macro("ModLawMaxDev", fg.pct(dev.max() if len(dev) else math.nan)),
        fg.macro(
            "ModLawMeanSigned", fg.pct(law["relative_error"].median() if len(law) else math.nan)
        ),
        fg.macro("ModLawFewClients", fg.num(law["clients_total"].min() if len(law) else math.nan)),
        fg.macro("ModLawManyClients", fg.num(law["clients_total"].max() if len(law) else math.nan)),
        fg.macro("ModLawDevFew", fg.pct(few.median() if len(few) else math.nan)),
        fg.macro("ModLawDevMany", fg.pct(many.median() if len(many) else math.nan)),
        fg.macro("ModLawNetShare", fg.pct(net.median() if len(net) else math.nan)),
    ]
