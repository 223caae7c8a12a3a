"""The GET/multi-GET section: its figures, the keys per second beside the study, where
sharding pays, the tails at the histograms' size, and the servers' links and retransmissions
behind them, as a table and number macros. Times and rates in the study's time (times * s,
rates / s)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NamedTuple

import pandas as pd

from analysis import linkload
from analysis.histograms import MIDDLEWARE_BUCKET_US, grouped_quantiles
from analysis.report import figures as fg
from analysis.scale_model import in_study_time, scale_of
from analysis.studies.s2018 import multiget as mg
from analysis.studies.s2018.macros import camel
from analysis.studies.s2018.multiget_figures import (
    Histograms,
    histogram_figure,
    percentile_figure,
    split_figure,
)
from analysis.studies.s2018.multiget_percentiles import (
    BOUNDS,
    METRICS,
    QUANTILES,
    mean_percentiles,
    study_histograms,
)

HIST_SIZE = 6  # the study's histograms are of six-key multi-GETs
# How the middleware picks the server of a GET or non-sharded multi-GET, in words.
READ_BALANCE = {
    "round-robin": "round-robin",
    "least-outstanding": "as the one with the fewest outstanding requests",
}
TABLE_HEADER = [
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


class Figures(NamedTuple):
    """Where the section's figures go."""

    percentiles: str
    hist: str
    split: str


class Multiget(NamedTuple):
    """The section's LaTeX outputs, by the names of the rule's outputs."""

    table: str
    numbers: str


# The testbed's emulation, passed in: the analysis does not import the testbed.
TbfArgs = Callable[[float, float], list[str]]
RtoMin = Callable[[float], float | None]


def split_macros(split: pd.DataFrame, sizes: list[int]) -> list[str]:
    """Where the middleware's time goes (`split`: mg.time_split), at the largest size too;
    how that compares with the study (mg.split_case) and where the servers take the least."""
    case = mg.split_case(split)
    low = mg.least_server_share(split) if case == "fails" else None
    sharding = fg.MISSING if low is None else fg.escape(low["sharding"])
    numbers = [
        fg.macro("MgetSplitCase", case),
        fg.macro("MgetSplitLeastSharding", sharding),
        fg.macro("MgetSplitLeastSize", fg.MISSING if low is None else str(int(low["size"]))),
    ]
    if not split.empty:
        s_share = split["server_us_mean_share"]
        numbers.append(fg.macro("MgetServerShareMin", fg.pct(s_share.min())))
        numbers.append(fg.macro("MgetServerShareMax", fg.pct(s_share.max())))
        numbers.append(fg.macro("MgetQueueShareMax", fg.pct(split["queue_us_mean_share"].max())))
        big = split[split["size"] == max(sizes)]
        for _, row in big.iterrows():
            numbers.append(
                fg.macro(
                    camel("Mget", row["sharding"], "Largest", "Server", "Ms"),
                    fg.num(row["server_us_mean"] / 1e3, 2),
                )
            )
    numbers.append(fg.macro("MgetLargestSize", str(max(sizes))))
    return numbers


def histogram_macros(hist_size: int, h: Histograms) -> list[str]:
    """The histogram figure's size, buckets and the largest share above them."""
    over = h.overflow.values()
    return [
        fg.macro("MgetHistSize", str(hist_size)),
        fg.macro("MgetHistBuckets", str(len(h.edges) - 1)),
        fg.macro("MgetHistWidthMs", fg.num(h.width / 1e3, 2)),
        fg.macro("MgetHistTopMs", fg.num(h.edges[-1] / 1e3, 2)),
        fg.macro("MgetHistOverflowMax", fg.pct(max(over, default=math.nan))),
    ]


def tail_macros(agg: pd.DataFrame, hist_size: int, rates: pd.DataFrame) -> list[str]:
    """Tails at the histogram size, client side, and the retransmissions behind them (`rates`:
    mg.loss_rates) per 1000 requests; which tail is longer (mg.tail_case) and what the
    timeouts say about it (mg.rto_case). The percentiles are the table's (`agg`:
    mean_percentiles, the mean of the runs' own), so that text and table print one value."""
    numbers = []
    six = agg[(agg["side"] == "client") & (agg["size"] == hist_size)].set_index("sharding")
    cl = pd.DataFrame({q: six[f"{q}_mean"] for q in ("p50", "p99") if f"{q}_mean" in six})
    ratio = mg.tail_ratio(cl)
    r_s, r_n = (float(ratio.get(k, math.nan)) for k in mg.SHARDING)
    numbers.append(fg.macro("MgetTailCase", mg.tail_case(r_s, r_n)))
    at = mg.rates_at(hist_size, rates)
    numbers.append(fg.macro("MgetRtoCase", mg.rto_case(at)))
    numbers.append(fg.macro("MgetTailPerThousand", fg.num(mg.TAIL_SHARE * 1000)))
    for k in mg.SHARDING:
        for short, word in (("rto", "Rto"), ("spurious", "Spurious"), ("drops", "Drops")):
            v = math.nan if at is None else float(at.loc[k, f"{short}_per_1k"])
            numbers.append(fg.macro(camel("Mget", k, word, "Per", "Thousand"), fg.num(v, 1)))
    for k, r in zip(mg.SHARDING, (r_s, r_n), strict=True):
        numbers.append(fg.macro(camel("Mget", k, "Tail", "Ratio"), fg.num(r, 1)))
        for q, word in (("p50", "Median"), ("p99", "NinetyNinth")):
            v = float(cl[q].get(k, math.nan)) / 1e3 if q in cl else math.nan
            numbers.append(fg.macro(camel("Mget", k, "Hist", word, "Ms"), fg.num(v, 2)))
    return numbers


def gap_macros(pts: pd.DataFrame, agg: pd.DataFrame, ref: Mapping) -> list[str]:
    """Where sharding pays: per metric, the sizes where it is better by more than the
    margin; and the gap between the two at the sizes the study states one."""
    numbers = []
    client_pct = agg[agg["side"] == "client"].rename(columns={f"{q}_mean": q for q in METRICS})
    table = mg.comparison(pts, client_pct)
    numbers.append(fg.macro("MgetMargin", fg.pct(mg.MARGIN, 0)))
    by_size = table.set_index("size") if not table.empty else table
    for size, theirs in ref["non_sharded_lower_ms"].items():
        word = camel(size)
        numbers.append(fg.macro(f"MgetStudyGap{word}Ms", fg.num(theirs, 0)))
        ours = math.nan
        if int(size) in by_size.index:
            row = by_size.loc[int(size)]
            ours = (row[f"mean_{mg.SHARDED}"] - row[f"mean_{mg.NON_SHARDED}"]) / 1e3
        numbers.append(fg.macro(f"MgetGap{word}Ms", fg.num(ours, 2)))
    numbers.append(fg.macro("MgetVerdicts", verdict_items(mg.verdicts(table))))
    return numbers


def verdict_items(verdicts: list[mg.Verdict]) -> str:
    """Where sharding pays, as the section's items, one per group of metrics with the same
    split of sizes (mg.verdict_groups): `\\MgetVerdict{position}{number}{shape}{metrics}{pays}
    {costs}{even}`, position `first` or `next`, number `one` or `many` metrics, shape as
    mg.VerdictGroup.shape, and the metrics and the sizes of each kind as lists."""
    return " ".join(
        rf"\MgetVerdict{{{'first' if i == 0 else 'next'}}}"
        f"{{{'one' if len(g.words) == 1 else 'many'}}}{{{g.shape}}}{{{fg.listed(g.words)}}}"
        f"{{{fg.listed(g.pays)}}}{{{fg.listed(g.costs)}}}{{{fg.listed(g.even)}}}"
        for i, g in enumerate(mg.verdict_groups(verdicts))
    )


def link_macros(raw_pts: pd.DataFrame, tbf_args: TbfArgs, rto_min_ms: RtoMin) -> list[str]:
    """The servers' links: their utilisation per point (measured rates, payload only), what
    they drop (`tbf_args`: the emulation's queue of a cap) and what a retransmission costs
    in the study's time (`rto_min_ms`: the routes' minimum RTO at a scale)."""
    numbers = []
    util = []
    for _, g in raw_pts.groupby("point"):
        sets, gets, keys = linkload.point_rates(g[g["side"] == "client"])
        util.append(linkload.utilisation(g.iloc[0].to_dict(), sets, gets, keys).get("server"))
    util = [u for u in util if u is not None and math.isfinite(u)]
    numbers.append(fg.macro("MgetServerLinkMin", fg.pct(min(util, default=math.nan), 0)))
    numbers.append(fg.macro("MgetServerLinkMax", fg.pct(max(util, default=math.nan), 0)))
    # What the servers' links drop, and what a retransmission costs in the study's time.
    first = raw_pts.iloc[0]
    cap = float(first["caps_mbit.server"])
    scale = float(scale_of(raw_pts, "table of points").iloc[0])
    tbf = tbf_args(cap, scale)
    latency_ms = float(tbf[tbf.index("latency") + 1].removesuffix("ms"))
    value = int(first["workload.data_size"])
    numbers.append(fg.macro("MgetServerCapMbit", fg.num(cap, 2)))
    numbers.append(fg.macro("MgetTbfLatencyMs", fg.num(latency_ms)))
    numbers.append(fg.macro("MgetTbfValues", fg.num(mg.queue_values(cap, latency_ms, value))))
    numbers.append(fg.macro("MgetValueBytes", fg.num(value)))
    # The hosts' routes carry the minimum RTO dilated by 1/s (testbed.emulation).
    rto_ms = rto_min_ms(scale) or mg.RTO_MIN_MS
    numbers.append(fg.macro("MgetRtoMs", fg.num(rto_ms)))
    numbers.append(fg.macro("MgetRtoStudyMs", fg.num(rto_ms * scale, 1)))
    numbers.append(fg.macro("MgetScale", fg.num(scale, 2)))
    balance = str(first.get("middleware.read_balance") or "round-robin")
    numbers.append(fg.macro("MgetReadBalance", fg.escape(READ_BALANCE.get(balance, balance))))
    return numbers


def keys_table(
    pts: pd.DataFrame,
    raw_pts: pd.DataFrame,
    agg: pd.DataFrame,
    sizes: list[int],
    ref: Mapping,
) -> tuple[str, list[str]]:
    """Per size and sharding: the client's mean response time and percentiles, and keys per
    second (study time and raw) beside the study's; its macros."""
    numbers = []
    rows = []
    mean_rt = mg.get_rows(pts, "client")
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
                    fg.num(r_ms, 2),
                    *[fg.num(v, 2) for v in p.values()],
                    fg.num(keys_s),
                    fg.num(keys_raw),
                    fg.num(theirs),
                ]
            )
            numbers.append(fg.macro(camel("Mget", sharding, size, "Ms"), fg.num(r_ms, 2)))
    return fg.tabular(TABLE_HEADER, rows, "lrrrrrrrr"), numbers


def report(
    raw_pts: pd.DataFrame,
    hist: pd.DataFrame,
    windows: pd.DataFrame,
    manifests: pd.DataFrame,
    runs: pd.DataFrame,
    ref: Mapping,
    figures: Figures,
    tbf_args: TbfArgs,
    rto_min_ms: RtoMin,
) -> Multiget:
    """The section from the family's points as measured (`raw_pts`, those the validation
    kept), histograms, trimmed windows, manifests and runs, and the reference file's
    `multiget` section; figures are saved at `figures`."""
    pts = in_study_time(raw_pts)
    sizes = sorted(mg.get_rows(pts, "client")["size"].unique().tolist())
    level = mg.get_rows(pts, "client").set_index("point")[["sharding", "size"]]
    hist = study_histograms(hist, windows, raw_pts, level)
    agg = mean_percentiles(hist)
    percentile_figure(mg.get_rows(pts, "client"), agg, sizes, figures.percentiles)

    split = mg.time_split(pts)
    split_figure(split, sizes, figures.split)
    numbers = split_macros(split, sizes)

    # Histograms of the study's size (or the largest measured) on common buckets.
    hist_size = HIST_SIZE if HIST_SIZE in sizes else max(sizes)
    six = hist[hist["size"] == hist_size]
    six_pct = grouped_quantiles(six, ["side", "sharding"], QUANTILES, BOUNDS)
    # The middleware's bucket width in the study's time; as measured where none is drawn.
    unit = (
        MIDDLEWARE_BUCKET_US * float(scale_of(six).max()) if not six.empty else MIDDLEWARE_BUCKET_US
    )
    h = histogram_figure(six, six_pct, unit, figures.hist)
    numbers += histogram_macros(hist_size, h)
    numbers += tail_macros(agg, hist_size, mg.loss_rates(manifests, runs))
    numbers += gap_macros(pts, agg, ref)
    numbers += link_macros(raw_pts, tbf_args, rto_min_ms)
    table, macros = keys_table(pts, raw_pts, agg, sizes, ref)
    numbers += macros
    numbers.append(fg.macro("MgetStudySource", fg.escape(ref["source"])))
    numbers.append(fg.macro("MgetSizes", ", ".join(str(s) for s in sizes)))
    return Multiget(table, "".join(numbers))
