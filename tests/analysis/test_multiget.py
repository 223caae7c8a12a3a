"""Sharded against non-sharded multi-GETs: time split, where sharding pays, tails."""

import math

import pandas as pd
import pytest

from analysis.report import figures as fg
from analysis.studies.s2018 import multiget as mg


def _points() -> pd.DataFrame:
    rows = []
    # (sharding, size, client mean µs, middleware GETs/s, queue, server, worker, net)
    for sharding, size, mean, rate, times in [
        ("sharded", 1, 1000.0, 100.0, (10.0, 900.0, 50.0, 40.0)),
        ("non-sharded", 1, 1010.0, 100.0, (10.0, 900.0, 50.0, 40.0)),
        ("sharded", 6, 3000.0, 50.0, (100.0, 2500.0, 300.0, 100.0)),
        ("non-sharded", 6, 6000.0, 40.0, (100.0, 5500.0, 300.0, 100.0)),
    ]:
        kind = "get" if size == 1 else "multiget"
        point = f"sharding={sharding},size={size}"
        base = {"point": point, "level_sharding": sharding, "level_size": str(size)}
        rows.append(
            {
                **base,
                "side": "client",
                "type": kind,
                "throughput_ops_mean": rate,
                "response_us_mean_mean": mean,
            }
        )
        q, s, w, n = times
        rows.append(
            {
                **base,
                "side": "middleware",
                "type": kind,
                "throughput_ops_mean": rate,
                "response_us_mean_mean": q + s + w + n,
                "queue_us_mean_mean": q,
                "server_us_mean_mean": s,
                "worker_us_mean_mean": w,
                "net_us_mean_mean": n,
            }
        )
        # SETs ride along and must not be taken for the point's GETs.
        rows.append(
            {
                **base,
                "side": "client",
                "type": "set",
                "throughput_ops_mean": 1e6,
                "response_us_mean_mean": 1.0,
            }
        )
    return pd.DataFrame(rows)


def test_time_split_shares_add_up_and_name_the_servers() -> None:
    split = mg.time_split(_points())
    shares = split[[f"{c}_share" for c in mg.COMPONENTS]].sum(axis=1)
    assert shares.tolist() == pytest.approx([1.0] * 4)
    six = split[(split["sharding"] == "non-sharded") & (split["size"] == 6)].iloc[0]
    assert six["server_us_mean"] == 5500.0
    # The servers take 83 % or more of every point's time and the queue 3.3 % at most.
    assert mg.split_case(split) == "holds"


def test_split_case_against_the_studys_reading() -> None:
    split = mg.time_split(_points())
    assert mg.split_case(split.iloc[0:0]) == "none"
    queued = split.assign(queue_us_mean_share=[0.02, 0.02, 0.2, 0.02])
    assert mg.split_case(queued) == "queue"
    low = split.assign(server_us_mean_share=[0.9, 0.9, 0.4, 0.6])
    assert mg.split_case(low) == "fails"
    least = mg.least_server_share(low)
    assert (least["sharding"], least["size"]) == (split.iloc[2]["sharding"], split.iloc[2]["size"])
    # The thresholds hold at their values: half the time at the servers is most of it.
    edge = split.assign(server_us_mean_share=[0.5] * 4, queue_us_mean_share=[0.1] * 4)
    assert mg.split_case(edge) == "holds"


def test_comparison_and_verdicts_per_metric() -> None:
    pct = pd.DataFrame(
        {
            "sharding": ["sharded", "non-sharded", "sharded", "non-sharded"],
            "size": [1, 1, 6, 6],
            "p50": [900.0, 900.0, 2000.0, 6000.0],
            "p90": [1500.0, 1500.0, 9000.0, 7000.0],
            "p99": [2000.0, 2000.0, 20000.0, 9000.0],
        }
    )
    table = mg.comparison(_points(), pct)
    assert table["size"].tolist() == [1, 6]
    six = table.set_index("size").loc[6]
    assert six["mean_gain"] == pytest.approx(0.5)
    assert six["keys_per_s_gain"] == pytest.approx(0.25)
    v = {x.metric: x for x in mg.verdicts(table)}
    assert v["mean"].pays == (6,) and v["mean"].even == (1,)
    assert v["p99"].costs == (6,) and v["p99"].even == (1,)
    p99 = next(g for g in mg.verdict_groups(list(v.values())) if "the 99th percentile" in g.words)
    assert (p99.shape, p99.costs, p99.even) == ("mixed", (6,), (1,))


@pytest.mark.parametrize(
    ("pays", "costs", "even", "shape"),
    [
        ((1, 3), (), (), "improves"),
        ((), (1,), (), "worsens"),
        ((), (), (1, 3), "even"),
        ((), (), (), "even"),
        ((3,), (6, 9), (1,), "mixed"),
        ((3,), (), (1,), "mixed"),
        ((), (6,), (1,), "mixed"),
        ((3,), (6,), (), "mixed"),
    ],
)
def test_a_verdicts_shape_follows_its_split_of_sizes(pays, costs, even, shape) -> None:
    (group,) = mg.verdict_groups([mg.Verdict("p50", "the median", pays, costs, even)])
    assert group.shape == shape and (group.pays, group.costs, group.even) == (pays, costs, even)


def test_a_list_reads_as_one() -> None:
    assert fg.listed([]) == ""
    assert fg.listed([6]) == "6"
    assert fg.listed([3, 6]) == "3 and 6"
    assert fg.listed([1, 3, 9]) == "1, 3 and 9"


def test_tail_case_names_the_longer_tail() -> None:
    assert mg.tail_case(8.0, 1.5) == "sharded"
    assert mg.tail_case(1.5, 8.0) == "nonsharded"
    assert mg.tail_case(2.0, 2.02) == "even"  # within the margin
    assert mg.tail_case(2.0, 2.2) == "nonsharded"  # beyond it
    assert mg.tail_case(math.nan, 2.0) == "none"


def test_token_bucket_queue_in_values() -> None:
    # 8 Mbit/s for 50 ms is 50 000 bytes: 12.2 values of 4096 bytes.
    assert mg.queue_values(8.0, 50.0, 4096) == pytest.approx(50_000 / 4096)
    with pytest.raises(mg.MultigetError):
        mg.queue_values(0.0, 50.0, 4096)


def test_missing_columns_are_a_clear_error() -> None:
    with pytest.raises(mg.MultigetError, match="lacks"):
        mg.time_split(_points().drop(columns=["server_us_mean_mean"]))


def _loss_tables(counts: dict[tuple[bool, int], tuple[int, int]]) -> tuple[pd.DataFrame, ...]:
    """Manifests and runs of one run per (sharded, size): (requests, timeouts)."""
    manifests, runs = [], []
    for i, ((sharded, size), (requests, timeouts)) in enumerate(counts.items()):
        run = f"r{i}"
        manifests.append(
            {
                "run": run,
                "status": "ok",
                "middleware.sharded": sharded,
                "workload.multiget": size,
                "rto_timeouts": float(timeouts),
                "spurious_rtos": 0.0,
                "retrans_segs": 3.0 * timeouts,
                "qdisc_drops": 2.0 * timeouts,
            }
        )
        runs += [
            {"run": run, "side": "client", "type": "set", "count": requests // 2},
            {"run": run, "side": "client", "type": "multiget", "count": requests // 2},
            {"run": run, "side": "middleware", "type": "multiget", "count": 10**9},
        ]
    return pd.DataFrame(manifests), pd.DataFrame(runs)


def test_loss_rates_count_timeouts_per_1000_client_requests() -> None:
    manifests, runs = _loss_tables({(True, 9): (4000, 60), (False, 9): (4000, 8)})
    rates = mg.loss_rates(manifests, runs).set_index("sharding")
    assert rates.loc["sharded", "rto_per_1k"] == pytest.approx(15.0)
    assert rates.loc["non-sharded", "rto_per_1k"] == pytest.approx(2.0)
    assert rates.loc["sharded", "drops_per_1k"] == pytest.approx(30.0)
    assert rates.loc["sharded", "requests"] == 4000  # the middleware's rows do not count
    # Runs recorded without counters are left out, not counted as zero.
    manifests.loc[0, "rto_timeouts"] = math.nan
    assert list(mg.loss_rates(manifests, runs)["sharding"]) == ["non-sharded"]


def test_rto_case_weighs_the_timeouts_against_the_tail() -> None:
    def case(sharded: int, non_sharded: int, size: int = 9) -> str:
        m, r = _loss_tables({(True, 9): (1000, sharded), (False, 9): (1000, non_sharded)})
        return mg.rto_case(mg.rates_at(size, mg.loss_rates(m, r)))

    assert case(15, 2) == "supports"
    assert case(3, 1) == "few"  # fewer than the 10 requests per 1000 beyond the 99th percentile
    assert case(10, 1) == "supports"
    assert case(15, 20) == "unsupported"
    assert case(15, 15) == "unsupported"
    assert case(15, 2, size=6) == "uncounted"  # no counted run at that size
    # Nothing counted at either setting (drops are twice the timeouts here): no sentence
    # on rates of zero, the section says none happened.
    assert case(0, 0) == "none"
    empty = mg.loss_rates(pd.DataFrame(), pd.DataFrame())
    assert mg.rates_at(9, empty) is None and mg.rto_case(None) == "uncounted"


def test_rates_at_a_size_need_both_sharding_levels() -> None:
    m, r = _loss_tables({(True, 9): (1000, 15), (False, 9): (1000, 2), (True, 6): (1000, 1)})
    at = mg.rates_at(9, mg.loss_rates(m, r))
    assert at is not None and at.loc["sharded", "rto_per_1k"] == pytest.approx(15.0)
    assert mg.rates_at(6, mg.loss_rates(m, r)) is None


def test_metrics_with_the_same_split_share_one_group() -> None:
    verdicts = [
        mg.Verdict("mean", "the mean response time", (3, 6), (), (1,)),
        mg.Verdict("p99", "the 99th percentile", (3,), (6,), (1,)),
        mg.Verdict("p50", "the median", (3, 6), (), (1,)),
    ]
    groups = mg.verdict_groups(verdicts)
    assert [g.words for g in groups] == [
        ("the mean response time", "the median"),
        ("the 99th percentile",),
    ]
    assert [(g.pays, g.costs, g.even) for g in groups] == [((3, 6), (), (1,)), ((3,), (6,), (1,))]
