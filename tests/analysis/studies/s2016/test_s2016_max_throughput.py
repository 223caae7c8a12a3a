"""The maximum-throughput family's report on a hand-made family: the configuration chosen,
its table beside the original's, the grid per pool size, and the numbers."""

from __future__ import annotations

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2016 import max_throughput as mt
from analysis.studies.s2016.tables import read_only_points
from tests.analysis.studies.s2016.conftest import point_name


def test_the_grid_sets_ours_per_pool_size_beside_the_originals(ref: dict) -> None:
    client = pd.DataFrame(
        {
            "workers": [8, 8, 24, 24],
            "clients_total": [20, 200, 20, 200],
            "throughput_ops_mean": [2000.0, 6000.0, 2400.0, 6200.0],
            "point": list("abcd"),
        }
    )
    load = pd.DataFrame({"point": ["a", "b", "c"], "busy_read": [0.2, 0.9, 0.3]})
    mx = ref["max_throughput"]
    lines = mt.grid_table(client, load, mx).splitlines()
    assert r"20 & 2{,}000 & 20\,\% & 2{,}400 & 30\,\% \\" in lines
    assert r"200 & 6{,}000 & 90\,\% & 6{,}200 & -- \\" in lines  # no load recorded
    span = r"\multicolumn{2}{c}"
    assert rf"Highest & {span}{{6{{,}}000}} & {span}{{6{{,}}200}} \\" in lines
    section = fg.escape(mx["section"])
    assert rf"Original ({section}) & {span}{{8{{,}}000}} & {span}{{13{{,}}872}} \\" in lines
    assert rf"its kind & {span}{{plateau}} & {span}{{peak at 280}} \\" in lines
    # Pool sizes we did not run: a line each, across the measured columns.
    across = r"\multicolumn{4}{l}"
    assert rf"Original, $T=16$ & {across}{{12{{,}}000 (plateau; not run here)}} \\" in lines
    assert rf"Original, $T=32$ & {across}{{13{{,}}235 (peak at 220; not run here)}} \\" in lines


def test_read_load_is_the_busiest_read_pool_over_the_ok_runs() -> None:
    rows = [
        {
            "run": f"f/p/rep{r}",
            "point": "p",
            "repetition": r,
            "window": 1,
            "start_ms": 0,
            "end_ms": 1000,
            "pool": "read",
            "server": s,
            "threads": 4,
            "busy_threads_mean": busy,
            "queue_length_mean": 0.0,
            "in_flight_mean": 0.0,
            "completed": 1,
        }
        for r, s, busy in ((1, 0, 2.0), (1, 1, 3.0), (2, 0, 4.0))
    ]
    load = mt.read_load(pd.DataFrame(rows), {"f/p/rep1"})
    assert load.to_dict("records") == [{"point": "p", "busy_read": 0.75}]
    assert list(mt.read_load(pd.DataFrame(rows), set()).columns) == ["point", "busy_read"]


def test_percentiles_are_the_middlewares_gets_per_point(max_family: dict) -> None:
    points = read_only_points(max_family["points"])
    pct = mt.percentiles(max_family["histograms"], max_family["windows"], points)
    row = pct.set_index("point").loc[point_name(8, 200)]
    # Halfway through the bucket that holds the median, 2000 to 3000 µs.
    assert (row["p50_mean"], row["clients_total"], row["side"]) == (2500.0, 200, "middleware")


def test_the_configuration_table_sets_ours_beside_the_original(ref: dict) -> None:
    chosen = pd.Series({"throughput_ops_mean": 6000.0, "clients_total": 200, "workers": 8})
    p = pd.Series({"p50_mean": 1250.0, "p90_mean": 1800.0})
    part = {"queue": pd.Series({"p50": 1500.0, "p90": 2000.0}), "server": pd.Series(dtype=float)}
    mx, b = ref["max_throughput"], ref["breakdown"]
    text = mt.config_tabular(chosen, 3000.0, p, p * 2, part, part, mx, b)
    assert r"Throughput (ops/s) & 6{,}000 & 3{,}000 & 13{,}467 & §1.2 \\" in text
    assert r"Threads per read pool & 8 &  & 24 & §1.2 \\" in text
    assert r"$t_\mathrm{MW}$, middleware response, p90 (ms) & 1.800 & 3.600 & 19.676" in text
    assert r"$t_\mathrm{Queue}$, time in the read queue, p50 (ms) & 1.500 & 1.500 & 0.065" in text
    # No server times: dashes beside the original's.
    assert r"memcached, p50 (ms) & -- & -- & 7.961 & Table 1 \\" in text


def test_the_report_chooses_the_cheapest_near_the_highest_and_says_so(
    max_family: dict, ref: dict, saved: dict
) -> None:
    figures = {f: f"{f}.pdf" for f in mt.FIGURES}
    report = mt.report(max_family, ref, figures)
    assert set(saved) == set(figures.values())
    n = report.numbers
    # Study time doubles the raw throughputs (s = 0.5): T=24 reaches 6,200 ops/s, but T=8's
    # 6,000 is within 5 % of it with fewer threads.
    assert (n["SixteenMaxWorkers"], n["SixteenMaxClients"]) == ("8", "200")
    assert (n["SixteenMaxThroughput"], n["SixteenMaxThroughputRaw"]) == ("6{,}000", "3{,}000")
    assert (n["SixteenMaxPeakWorkers"], n["SixteenMaxPeakThroughput"]) == ("24", "6{,}200")
    assert n["SixteenMaxRatio"] == r"46.0\,\%"  # 6,200 of the original's 13,467 at T = 24
    assert n["SixteenMaxQueueShare"] == r"20.0\,\%"  # 200 of 1000 µs in the middleware
    assert (n["SixteenMaxResponseMedian"], n["SixteenMaxQueueMedian"]) == ("1.250", "1.500")
    assert (n["SixteenMaxPoolSizes"], n["SixteenMaxClientCounts"], n["SixteenMaxPoints"]) == (
        "2",
        "2",
        "4",
    )
    # Our highest at the original's T = 24; T = 8 is within 5 % of it, so not slower: the
    # original's finding on the number of threads fails here.
    assert (n["SixteenMaxLikeCase"], n["SixteenMaxLikeThroughput"]) == ("compared", "6{,}200")
    assert n["SixteenMaxThreadsCase"] == "fails"
    assert (n["SixteenMaxCpuCase"], n["SixteenMaxWaitCase"]) == ("cpu", "cpu")
    assert (n["SixteenSidesCase"], n["SixteenSidesRoundTripOfGap"]) == ("outside", r"67\,\%")
    assert n["SixteenOrigReadThreads"] == "120"
    assert n["SixteenGammaClientShape"] != fg.MISSING
    assert r"Threads per read pool & 8 &  & 24" in report.config
    assert r"Highest & \multicolumn{2}{c}{6{,}000}" in report.grid
