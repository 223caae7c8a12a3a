"""Snakemake script: the GET/multi-GET section: response-time mean and percentiles against
the multi-get size (sharded and non-sharded, percentiles from the histograms), histograms of
size 6 on both sides with common buckets, and keys per second beside the study; times and
rates in the study's time (times * s, rates / s), the raw keys per second beside."""

import math

import numpy as np
import pandas as pd
from r2018_common import camel, log_to, reference

from analysis.aggregate import aggregate_points
from analysis.report import figures as rf
from analysis.scaling import in_study_time, with_scale

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
log_to(sm.log[0])
ref = reference(sm.input.reference)["multiget"]
out = sm.output
QUANTILES = (25, 50, 75, 90, 99)
SHARDING = ["sharded", "non-sharded"]
numbers = []

# Every throughput and time in the study's time (each row by its runs' scale); `raw_pts`
# keeps the measured values for the raw column beside.
raw_pts = pd.read_parquet(sm.input.points)
pts = in_study_time(raw_pts)
pts = pts[pts["type"].isin(["get", "multiget"])].copy()
pts["size"] = pts["level_size"].astype(int)
hist = pd.read_parquet(sm.input.histograms)
hist = in_study_time(with_scale(hist, raw_pts, on="point"))
hist = hist[hist["type"].isin(["get", "multiget"])]
level = pts.drop_duplicates("point").set_index("point")[["level_sharding", "size"]]
hist = hist.join(level, on="point")


def quantiles(values: np.ndarray, counts: np.ndarray) -> dict[str, float]:
    order = np.argsort(values)
    v, c = values[order], np.cumsum(counts[order])
    if len(c) == 0 or c[-1] == 0:
        return {f"p{q}": math.nan for q in QUANTILES}
    return {f"p{q}": float(v[np.searchsorted(c, q / 100 * c[-1])]) for q in QUANTILES}


# Percentiles per run from the whole-run histograms (client: the generator's HdrHistogram;
# middleware: its 100 µs buckets, whose lower bounds understate by up to 100 µs).
per_run = []
for (run, side, sharding, size), g in hist.groupby(["run", "side", "level_sharding", "size"]):
    row = {"run": run, "side": side, "level_sharding": sharding, "size": size}
    row.update(quantiles(g["bucket_us"].to_numpy(float), g["count"].to_numpy(float)))
    row["repetition"] = run
    per_run.append(row)
per_run = pd.DataFrame(per_run)
metrics = [f"p{q}" for q in QUANTILES]
agg = (
    aggregate_points(per_run, by=("side", "level_sharding", "size"), metrics=metrics)
    if not per_run.empty
    else pd.DataFrame(columns=["side", "level_sharding", "size"])
)

# Mean response time per point and side: the GET-type row with the most requests (a size-1
# point reports plain GETs, larger sizes multi-GETs).
mean_rt = (
    pts.sort_values("throughput_ops_mean", ascending=False)
    .drop_duplicates(["point", "side"])
    .sort_values("size")
)

fig, axes = rf.figure(ncols=2, nrows=1, height=2.9)
for ax, sharding in zip(axes[0], SHARDING, strict=True):
    m = mean_rt[(mean_rt["level_sharding"] == sharding) & (mean_rt["side"] == "client")]
    if m.empty:
        ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
    else:
        y = m["response_us_mean_mean"].to_numpy(float) / 1e3
        lo = np.nan_to_num(y - m["response_us_mean_ci_low"].to_numpy(float) / 1e3)
        hi = np.nan_to_num(m["response_us_mean_ci_high"].to_numpy(float) / 1e3 - y)
        ax.errorbar(
            m["size"],
            y,
            yerr=[lo, hi],
            capsize=2,
            marker="o",
            ms=3,
            color="k",
            label="mean, client",
        )
        a = agg[(agg["level_sharding"] == sharding) & (agg["side"] == "client")].sort_values("size")
        for q in QUANTILES:
            yq = a[f"p{q}_mean"].to_numpy(float) / 1e3
            ql = np.nan_to_num(yq - a[f"p{q}_ci_low"].to_numpy(float) / 1e3)
            qh = np.nan_to_num(a[f"p{q}_ci_high"].to_numpy(float) / 1e3 - yq)
            ax.errorbar(
                a["size"],
                yq,
                yerr=[ql, qh],
                capsize=2,
                marker="^",
                ms=3,
                lw=0.8,
                linestyle=":",
                label=f"p{q}, client",
            )
    ax.set(xlabel="keys per multi-get", ylabel="response time [ms], study time", title=sharding)
    ax.set_xticks(sorted(pts["size"].unique()))
    ax.set_ylim(bottom=0)
handles, labels = axes[0][0].get_legend_handles_labels()
if not handles:
    handles, labels = axes[0][1].get_legend_handles_labels()
if handles:
    fig.legend(handles, labels, loc="outside right upper", fontsize=6)
rf.save(fig, out.fig_percentiles)

# Histograms of size 6 with common buckets of the middleware's 100 µs (in the study's time:
# 100 µs * s) up to 1.5 times the largest 90th percentile (at most 200); the last bucket
# collects everything above.
six = hist[hist["size"] == 6]
width = 100.0 * (float(six["scale"].max()) if not six.empty else 1.0)
top = max(
    (
        quantiles(g["bucket_us"].to_numpy(float), g["count"].to_numpy(float))["p90"]
        for _, g in six.groupby(["side", "level_sharding"])
    ),
    default=math.nan,
)
nb = int(min(200, max(10, math.ceil(1.5 * top / width)))) if math.isfinite(top) else 10
edges = np.arange(nb + 1) * width
fig, axes = rf.figure(ncols=2, nrows=2, height=4.4)
for r, sharding in enumerate(SHARDING):
    for c, side in enumerate(["client", "middleware"]):
        ax = axes[r][c]
        g = six[(six["level_sharding"] == sharding) & (six["side"] == side)]
        if g.empty:
            ax.text(0.5, 0.5, "no size-6 histogram", ha="center", transform=ax.transAxes)
        else:
            v = np.minimum(g["bucket_us"].to_numpy(float), edges[-1] - 1)
            counts, _ = np.histogram(v, bins=edges, weights=g["count"].to_numpy(float))
            ax.stairs(
                counts / counts.sum(),
                edges / 1e3,
                fill=True,
                color="C0" if side == "client" else "C1",
            )
        ax.set(
            xlabel="response time [ms], study time (last bucket: all above)",
            ylabel="fraction",
            title=f"{sharding}, {side}",
        )
rf.save(fig, out.fig_hist)
numbers.append(rf.macro("MgetHistBuckets", str(nb)))
numbers.append(rf.macro("MgetHistWidthUs", rf.num(width, 1 if width < 10 else 0)))

# Table: per size and sharding, client mean and percentiles, keys per second at the middlewares.
rows = []
mwx = mean_rt[mean_rt["side"] == "middleware"]
raw_x = raw_pts.set_index(["point", "side", "type"])["throughput_ops_mean"]
for sharding in SHARDING:
    for size in sorted(pts["size"].unique()):
        c = mean_rt[
            (mean_rt["level_sharding"] == sharding)
            & (mean_rt["side"] == "client")
            & (mean_rt["size"] == size)
        ]
        a = agg[
            (agg["level_sharding"] == sharding) & (agg["side"] == "client") & (agg["size"] == size)
        ]
        w = mwx[(mwx["level_sharding"] == sharding) & (mwx["size"] == size)]
        if c.empty:
            continue
        keys_s = w["throughput_ops_mean"].iloc[0] * size if not w.empty else math.nan
        keys_raw = (
            raw_x.get((w["point"].iloc[0], "middleware", w["type"].iloc[0]), math.nan) * size
            if not w.empty
            else math.nan
        )
        p = {q: (a[f"p{q}_mean"].iloc[0] / 1e3 if not a.empty else math.nan) for q in QUANTILES}
        theirs = ref["keys_per_s"].get(sharding, {}).get(int(size), math.nan)
        rows.append(
            [
                sharding,
                str(size),
                rf.num(c["response_us_mean_mean"].iloc[0] / 1e3, 2),
                *[rf.num(p[q], 2) for q in (50, 90, 99)],
                rf.num(keys_s),
                rf.num(keys_raw),
                rf.num(theirs),
            ]
        )
        numbers.append(
            rf.macro(
                camel("Mget", sharding, size, "Ms"),
                rf.num(c["response_us_mean_mean"].iloc[0] / 1e3, 2),
            )
        )
rf.write(
    out.table,
    rf.table(
        [
            "sharding",
            "keys",
            "R cl. [ms]",
            "p50",
            "p90",
            "p99",
            "keys/s mw",
            "raw",
            "study keys/s",
        ],
        rows,
        "lrrrrrrrr",
        "Multi-gets: client mean response time and percentiles (ms, from the whole-run "
        "histograms) and keys per second served by the middlewares' GETs, in the study's "
        "time (times $\\cdot s$, keys per second $/s$, $s$ the runs' scale factor; raw: keys "
        f"per second as measured), beside the study ({ref['source']}).",
        "tab:mget",
    ),
)
numbers.append(rf.macro("MgetSizes", ", ".join(str(s) for s in sorted(pts["size"].unique()))))
rf.write(out.numbers, "".join(numbers))
