"""Snakemake script: the GET/multi-GET section: client response-time mean and percentiles
against the multi-get size, the middleware's time split, the size-6 histograms on common
buckets with their overflow, the keys per second beside the study, and where sharding pays.
Times and rates in the study's time (times * s, rates / s)."""

import math

import numpy as np
import pandas as pd
from r2018_common import camel, log_to, reference, usable

from analysis import linkload
from analysis.aggregate import aggregate_points
from analysis.histograms import (
    MIDDLEWARE_BUCKET_US,
    Bound,
    common_edges,
    grouped_quantiles,
    rebin,
)
from analysis.report import figures as rf
from analysis.scaling import in_study_time, with_scale
from analysis.studies.s2018 import multiget as mg
from testbed.emulation import rto_min_ms, tbf_args

QUANTILES = (0.25, 0.5, 0.75, 0.9, 0.99)
METRICS = ("p25", "p50", "p75", "p90", "p99")
# The client's histograms are HdrHistogram's (highest value per bucket), the middleware's
# 100 µs buckets by lower bound.
BOUNDS: dict[str, Bound] = {"client": "upper", "middleware": "lower"}
SIDES = ("client", "middleware")
HIST_SIZE = 6  # the study's histograms are of six-key multi-GETs
HIST_BUCKETS = 60
# One colour and marker per series, the same in every figure.
STYLE = {
    "mean": ("k", "o"),
    "p25": ("C0", "v"),
    "p50": ("C1", "s"),
    "p75": ("C2", "D"),
    "p90": ("C3", "^"),
    "p99": ("C4", "P"),
}
# Colour, marker and line style of the time split's series. The whole request is drawn
# first, wide and pale, so the part that makes up most of it stays visible on top.
SPLIT_STYLE = {
    "total_us": ("k", "o", "-"),
    "server_us_mean": ("C3", "s", "--"),
    "queue_us_mean": ("C0", "v", ":"),
    "worker_us_mean": ("C2", "D", "-."),
    "net_us_mean": ("C1", "^", "-"),
}
WHOLE_STYLE = {"lw": 4.0, "alpha": 0.3, "ms": 7.0, "zorder": 1}
PART_STYLE = {"lw": 1.0, "ms": 3.5, "zorder": 3}
# How the middleware picks the server of a GET or non-sharded multi-GET, in words.
READ_BALANCE = {
    "round-robin": "round-robin",
    "least-outstanding": "as the one with the fewest outstanding requests",
}
SIDE_COLOUR = {"client": "C9", "middleware": "C8"}
YLABEL = "response time [ms], study time"
XLABEL = "keys per multi-GET"


def stable_histograms(hist: pd.DataFrame, windows: pd.DataFrame) -> pd.DataFrame:
    """Client whole-run histograms, and the middleware's over its stable windows only."""
    client = hist[(hist["side"] == "client") & (hist["window"] < 0)]
    stable = windows.loc[windows["side"] == "middleware", ["run", "window"]].drop_duplicates()
    mw = hist[hist["side"] == "middleware"].merge(stable, on=["run", "window"], how="inner")
    return pd.concat([client, mw], ignore_index=True)


def percentile_figure(
    mean_rt: pd.DataFrame, agg: pd.DataFrame, sizes: list[int], path: str
) -> None:
    fig, axes = rf.figure(ncols=2, nrows=1, height=2.9)
    axes[0][1].sharey(axes[0][0])
    for ax, sharding in zip(axes[0], mg.SHARDING, strict=True):
        m = mean_rt[mean_rt["sharding"] == sharding]
        if m.empty:
            ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
        else:
            y = m["response_us_mean_mean"].to_numpy(float) / 1e3
            lo = np.nan_to_num(y - m["response_us_mean_ci_low"].to_numpy(float) / 1e3)
            hi = np.nan_to_num(m["response_us_mean_ci_high"].to_numpy(float) / 1e3 - y)
            colour, marker = STYLE["mean"]
            ax.errorbar(
                m["size"],
                y,
                yerr=[lo, hi],
                capsize=2,
                marker=marker,
                ms=3.5,
                color=colour,
                label="mean",
            )
            a = agg[(agg["sharding"] == sharding) & (agg["side"] == "client")]
            a = a.sort_values("size")
            for q in METRICS:
                yq = a[f"{q}_mean"].to_numpy(float) / 1e3
                ql = np.nan_to_num(yq - a[f"{q}_ci_low"].to_numpy(float) / 1e3)
                qh = np.nan_to_num(a[f"{q}_ci_high"].to_numpy(float) / 1e3 - yq)
                colour, marker = STYLE[q]
                ax.errorbar(
                    a["size"],
                    yq,
                    yerr=[ql, qh],
                    capsize=2,
                    marker=marker,
                    ms=3.5,
                    lw=0.8,
                    linestyle=":",
                    color=colour,
                    label=f"{q[1:]}th percentile",
                )
        ax.set(xlabel=XLABEL, ylabel=YLABEL, title=sharding)
        ax.set_xticks(sizes)
        ax.set_ylim(bottom=0)
    axes[0][1].set_ylabel("")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if not handles:
        handles, labels = axes[0][1].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=6)
    rf.save(fig, path)


def split_figure(split: pd.DataFrame, sizes: list[int], path: str) -> None:
    fig, axes = rf.figure(ncols=2, nrows=1, height=2.7)
    axes[0][1].sharey(axes[0][0])
    names = {**{c: f"time {w}" for c, w in mg.COMPONENTS.items()}, "total_us": "whole request"}
    for ax, sharding in zip(axes[0], mg.SHARDING, strict=True):
        s = split[split["sharding"] == sharding].sort_values("size")
        if s.empty:
            ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
        for col, (colour, marker, linestyle) in SPLIT_STYLE.items():
            y = s[col].to_numpy(float) / 1e3
            ok = y > 0  # a logarithmic axis cannot show zero
            ax.plot(
                s["size"].to_numpy()[ok],
                y[ok],
                marker=marker,
                color=colour,
                linestyle=linestyle,
                label=names[col],
                **(WHOLE_STYLE if col == "total_us" else PART_STYLE),  # type: ignore[arg-type]
            )
        ax.set_yscale("log")
        ax.set(xlabel=XLABEL, ylabel="mean time per request [ms], study time", title=sharding)
        ax.set_xticks(sizes)
    axes[0][1].set_ylabel("")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=6)
    rf.save(fig, path)


def histogram_figure(six: pd.DataFrame, pct: pd.DataFrame, unit_us: float, path: str) -> dict:
    """Size-6 histograms on common buckets up to the largest 99th percentile of the four
    panels; what lies above is one separate, labelled bar. Returns the figure's numbers."""
    top = float(pct["p99"].max()) if not pct.empty else math.nan
    edges = common_edges(1.05 * top, unit_us, HIST_BUCKETS)
    width = float(edges[1] - edges[0])
    gap = 2 * width
    over_w = 4 * width
    over_x = edges[-1] + gap
    fig, axes = rf.figure(ncols=2, nrows=2, height=4.6)
    ref_ax = axes[0][0]
    for ax in axes.flat[1:]:
        ax.sharex(ref_ax)
        ax.sharey(ref_ax)
    overflow: dict[tuple[str, str], float] = {}
    for r, sharding in enumerate(mg.SHARDING):
        for c, side in enumerate(SIDES):
            ax = axes[r][c]
            g = six[(six["sharding"] == sharding) & (six["side"] == side)]
            ax.set_title(f"{sharding}, {side}")
            if g.empty:
                ax.text(0.5, 0.5, "no six-key histogram", ha="center", transform=ax.transAxes)
                continue
            pooled = g.groupby("bucket_us")["count"].sum()
            b = rebin(pooled.index.to_numpy(float), pooled.to_numpy(float), edges)
            frac, over = b.fractions()
            overflow[(sharding, side)] = over
            ax.stairs(
                frac,
                edges / 1e3,
                fill=True,
                color=SIDE_COLOUR[side],
                alpha=0.8,
                label=f"requests, {side}",
            )
            ax.bar(
                (over_x + over_w / 2) / 1e3,
                over,
                width=over_w / 1e3,
                color="0.6",
                hatch="///",
                edgecolor="0.3",
                lw=0.5,
                label=f"all above {edges[-1] / 1e3:.2f} ms",
            )
            ax.annotate(
                f"{100 * over:.1f} %",
                ((over_x + over_w / 2) / 1e3, over),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=6,
            )
            p = pct[(pct["sharding"] == sharding) & (pct["side"] == side)]
            for q, ls in (("p50", "-"), ("p99", "--")):
                if not p.empty and math.isfinite(p[q].iloc[0]):
                    colour, marker = STYLE[q]
                    x = min(float(p[q].iloc[0]), edges[-1]) / 1e3
                    ax.axvline(x, color=colour, ls=ls, lw=0.9)
                    ax.plot(
                        [x],
                        [1.0],
                        marker=marker,
                        color=colour,
                        ms=4,
                        clip_on=False,
                        transform=ax.get_xaxis_transform(),
                        label=f"{q[1:]}th percentile",
                    )
    ticks = [t for t in ref_ax.get_xticks() if 0 <= t <= edges[-1] / 1e3]
    for ax in axes.flat:
        ax.set_xlim(0, (over_x + over_w + width) / 1e3)
        ax.set_xticks([*ticks, (over_x + over_w / 2) / 1e3])
        ax.set_xticklabels([f"{t:g}" for t in ticks] + ["above"])
        ax.set_ylim(bottom=0)
    ref_ax.set_ylim(top=ref_ax.get_ylim()[1] * 1.12)  # room for the overflow's label
    for ax in axes[1]:
        ax.set_xlabel(YLABEL)
    for ax in axes[:, 0]:
        ax.set_ylabel("share of requests")
    labels: dict[str, object] = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            labels.setdefault(lab, h)
    if labels:
        fig.legend(
            list(labels.values()), list(labels), loc="outside lower center", ncols=5, fontsize=6
        )
    rf.save(fig, path)
    return {"edges": edges, "width": width, "overflow": overflow}


def main(sm) -> None:  # noqa: ANN001 - the Snakemake object
    log_to(sm.log[0])
    ref = reference(sm.input.reference)["multiget"]
    out = sm.output
    numbers: list[str] = []

    raw_pts = usable(pd.read_parquet(sm.input.points), sm.input.points, sm.input.validation)
    pts = in_study_time(raw_pts)
    sizes = sorted(mg.get_rows(pts, "client")["size"].unique().tolist())
    level = mg.get_rows(pts, "client").set_index("point")[["sharding", "size"]]
    hist = pd.read_parquet(sm.input.histograms)
    hist = hist[hist["type"].isin(["get", "multiget"])]
    hist = stable_histograms(hist, pd.read_parquet(sm.input.windows))
    hist = in_study_time(with_scale(hist, raw_pts, on="point")).join(level, on="point")
    hist = hist.dropna(subset=["sharding"])

    # Percentiles per run from its histograms, then mean and interval over repetitions.
    per_run = grouped_quantiles(hist, ["run", "side", "sharding", "size"], QUANTILES, BOUNDS)
    per_run["repetition"] = per_run["run"]
    agg = (
        aggregate_points(per_run, by=("side", "sharding", "size"), metrics=METRICS)
        if not per_run.empty
        else pd.DataFrame(columns=["side", "sharding", "size"])
    )
    mean_rt = mg.get_rows(pts, "client")
    percentile_figure(mean_rt, agg, sizes, out.fig_percentiles)

    # Where the middleware's time goes.
    split = mg.time_split(pts)
    split_figure(split, sizes, out.fig_split)
    numbers.append(rf.macro("MgetSplitSentence", mg.split_sentence(split)))
    if not split.empty:
        s_share = split["server_us_mean_share"]
        numbers.append(rf.macro("MgetServerShareMin", rf.pct(s_share.min())))
        numbers.append(rf.macro("MgetServerShareMax", rf.pct(s_share.max())))
        numbers.append(rf.macro("MgetQueueShareMax", rf.pct(split["queue_us_mean_share"].max())))
        big = split[split["size"] == max(sizes)]
        for _, row in big.iterrows():
            numbers.append(
                rf.macro(
                    camel("Mget", row["sharding"], "Largest", "Server", "Ms"),
                    rf.num(row["server_us_mean"] / 1e3, 2),
                )
            )
    numbers.append(rf.macro("MgetLargestSize", str(max(sizes))))

    # Histograms of the study's size (or the largest measured) on common buckets.
    hist_size = HIST_SIZE if HIST_SIZE in sizes else max(sizes)
    six = hist[hist["size"] == hist_size]
    six_pct = grouped_quantiles(six, ["side", "sharding"], QUANTILES, BOUNDS)
    unit = MIDDLEWARE_BUCKET_US * (float(six["scale"].max()) if not six.empty else 1.0)
    h = histogram_figure(six, six_pct, unit, out.fig_hist)
    numbers.append(rf.macro("MgetHistSize", str(hist_size)))
    numbers.append(rf.macro("MgetHistBuckets", str(len(h["edges"]) - 1)))
    numbers.append(rf.macro("MgetHistWidthMs", rf.num(h["width"] / 1e3, 2)))
    numbers.append(rf.macro("MgetHistTopMs", rf.num(h["edges"][-1] / 1e3, 2)))
    over = h["overflow"].values()
    numbers.append(rf.macro("MgetHistOverflowMax", rf.pct(max(over, default=math.nan))))

    # Tails at the histogram size, client side.
    cl = six_pct[six_pct["side"] == "client"].set_index("sharding")
    ratio = mg.tail_ratio(cl)
    r_s, r_n = (float(ratio.get(k, math.nan)) for k in mg.SHARDING)
    numbers.append(rf.macro("MgetTailSentence", mg.tail_sentence(hist_size, r_s, r_n)))
    rates = mg.loss_rates(pd.read_parquet(sm.input.manifests), pd.read_parquet(sm.input.runs))
    numbers.append(rf.macro("MgetRtoSentence", mg.rto_sentence(hist_size, rates)))
    for k, r in zip(mg.SHARDING, (r_s, r_n), strict=True):
        numbers.append(rf.macro(camel("Mget", k, "Tail", "Ratio"), rf.num(r, 1)))
        for q, word in (("p50", "Median"), ("p99", "NinetyNinth")):
            v = float(cl[q].get(k, math.nan)) / 1e3 if q in cl else math.nan
            numbers.append(rf.macro(camel("Mget", k, "Hist", word, "Ms"), rf.num(v, 2)))

    # Where sharding pays: per metric, the sizes where it is better by more than the margin.
    client_pct = agg[agg["side"] == "client"].rename(columns={f"{q}_mean": q for q in METRICS})
    table = mg.comparison(pts, client_pct)
    numbers.append(rf.macro("MgetMargin", rf.pct(mg.MARGIN, 0)))
    by_size = table.set_index("size") if not table.empty else table
    for size, theirs in ref["non_sharded_lower_ms"].items():
        word = camel(size)
        numbers.append(rf.macro(f"MgetStudyGap{word}Ms", rf.num(theirs, 0)))
        ours = math.nan
        if int(size) in by_size.index:
            row = by_size.loc[int(size)]
            ours = (row[f"mean_{mg.SHARDED}"] - row[f"mean_{mg.NON_SHARDED}"]) / 1e3
        numbers.append(rf.macro(f"MgetGap{word}Ms", rf.num(ours, 2)))
    numbers.append(rf.macro("MgetVerdicts", mg.verdicts_paragraph(mg.verdicts(table))))

    # The servers' links: their utilisation per point (measured rates, payload only).
    util = []
    for _, g in raw_pts.groupby("point"):
        sets, gets, keys = linkload.point_rates(g[g["side"] == "client"])
        util.append(linkload.utilisation(g.iloc[0].to_dict(), sets, gets, keys).get("server"))
    util = [u for u in util if u is not None and math.isfinite(u)]
    numbers.append(rf.macro("MgetServerLinkMin", rf.pct(min(util, default=math.nan), 0)))
    numbers.append(rf.macro("MgetServerLinkMax", rf.pct(max(util, default=math.nan), 0)))
    # What the servers' links drop, and what a retransmission costs in the study's time.
    first = raw_pts.iloc[0]
    cap = float(first["caps_mbit.server"])
    scale = float(first["scale"]) if "scale" in first and pd.notna(first["scale"]) else 1.0
    tbf = tbf_args(cap, scale)
    latency_ms = float(tbf[tbf.index("latency") + 1].removesuffix("ms"))
    value = int(first["workload.data_size"])
    numbers.append(rf.macro("MgetServerCapMbit", rf.num(cap, 2)))
    numbers.append(rf.macro("MgetTbfLatencyMs", rf.num(latency_ms)))
    numbers.append(rf.macro("MgetTbfValues", rf.num(mg.queue_values(cap, latency_ms, value))))
    numbers.append(rf.macro("MgetValueBytes", rf.num(value)))
    # The hosts' routes carry the minimum RTO dilated by 1/s (testbed.emulation).
    rto_ms = rto_min_ms(scale) or mg.RTO_MIN_MS
    numbers.append(rf.macro("MgetRtoMs", rf.num(rto_ms)))
    numbers.append(rf.macro("MgetRtoStudyMs", rf.num(rto_ms * scale, 1)))
    numbers.append(rf.macro("MgetScale", rf.num(scale, 2)))
    balance = str(first.get("middleware.read_balance") or "round-robin")
    numbers.append(rf.macro("MgetReadBalance", rf.escape(READ_BALANCE.get(balance, balance))))

    # Table: per size and sharding, client mean and percentiles, keys per second.
    rows = []
    mw = mg.get_rows(pts, "middleware").set_index(["sharding", "size"])
    raw_mw = mg.get_rows(raw_pts, "middleware").set_index(["sharding", "size"])
    a = agg[agg["side"] == "client"].set_index(["sharding", "size"])
    for sharding in mg.SHARDING:
        for size in sizes:
            c = mean_rt[(mean_rt["sharding"] == sharding) & (mean_rt["size"] == size)]
            if c.empty:
                continue
            key = (sharding, size)
            keys_s = mw["throughput_ops_mean"].get(key, math.nan) * size
            keys_raw = raw_mw["throughput_ops_mean"].get(key, math.nan) * size
            p = {q: a[f"{q}_mean"].get(key, math.nan) / 1e3 for q in ("p50", "p90", "p99")}
            r_ms = c["response_us_mean_mean"].iloc[0] / 1e3
            theirs = ref["keys_per_s"].get(sharding, {}).get(int(size), math.nan)
            rows.append(
                [
                    sharding,
                    str(size),
                    rf.num(r_ms, 2),
                    *[rf.num(v, 2) for v in p.values()],
                    rf.num(keys_s),
                    rf.num(keys_raw),
                    rf.num(theirs),
                ]
            )
            numbers.append(rf.macro(camel("Mget", sharding, size, "Ms"), rf.num(r_ms, 2)))
    header = [
        "sharding",
        "keys",
        "R cl. [ms]",
        "p50",
        "p90",
        "p99",
        "keys/s mw",
        "raw",
        "study keys/s",
    ]
    rf.write(out.table, rf.tabular(header, rows, "lrrrrrrrr"))
    numbers.append(rf.macro("MgetStudySource", rf.escape(ref["source"])))
    numbers.append(rf.macro("MgetSizes", ", ".join(str(s) for s in sizes)))
    rf.write(out.numbers, "".join(numbers))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
