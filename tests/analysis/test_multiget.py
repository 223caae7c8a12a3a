"""Sharded against non-sharded multi-GETs: time split, where sharding pays, tails."""

import math

import pandas as pd
import pytest

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
    assert "servers take most" in mg.split_sentence(split)


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
    assert v["p99"].costs == (6,)
    assert mg.verdict_sentence(v["p99"]) == (
        "Sharding worsens the 99th percentile at 6 keys and leaves it within the margin at 1 key."
    )


@pytest.mark.parametrize(
    ("pays", "costs", "even", "expected"),
    [
        ((1, 3), (), (), "Sharding improves the median at every size."),
        ((), (1,), (), "Sharding worsens the median at every size."),
        ((), (), (1, 3), "Sharding leaves the median within the margin at every size."),
        (
            (3,),
            (6, 9),
            (1,),
            "Sharding improves the median at 3 keys, worsens it at 6 and 9 keys and leaves "
            "it within the margin at 1 key.",
        ),
    ],
)
def test_verdict_sentences_read_as_prose_for_any_split(pays, costs, even, expected) -> None:
    assert mg.verdict_sentence(mg.Verdict("p50", "the median", pays, costs, even)) == expected


def test_tail_sentence_names_the_longer_tail() -> None:
    assert "sharded requests have the longer tail" in mg.tail_sentence(6, 8.0, 1.5)
    assert "non-sharded requests have the longer tail" in mg.tail_sentence(6, 1.5, 8.0)
    assert "equally far" in mg.tail_sentence(6, 2.0, 2.02)
    assert "cannot be compared" in mg.tail_sentence(6, math.nan, 2.0)


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


def test_rto_sentence_weighs_the_timeouts_against_the_tail() -> None:
    def sentence(sharded: int, non_sharded: int) -> str:
        m, r = _loss_tables({(True, 9): (1000, sharded), (False, 9): (1000, non_sharded)})
        return mg.rto_sentence(9, mg.loss_rates(m, r))

    assert "supports this explanation" in sentence(15, 2)
    assert "15.0 times per 1000 sharded requests" in sentence(15, 2)
    assert "do not explain the sharded tail" in sentence(3, 1)
    assert "no more for sharded requests" in sentence(15, 20)
    empty = mg.loss_rates(pd.DataFrame(), pd.DataFrame())
    assert "did not count retransmissions" in mg.rto_sentence(9, empty)


def test_metrics_with_the_same_split_share_one_sentence() -> None:
    verdicts = [
        mg.Verdict("mean", "the mean response time", (3, 6), (), (1,)),
        mg.Verdict("p50", "the median", (3, 6), (), (1,)),
        mg.Verdict("p99", "the 99th percentile", (3,), (6,), (1,)),
    ]
    assert mg.verdicts_paragraph(verdicts) == (
        "Sharding improves the mean response time and the median at 3 and 6 keys and leaves "
        "them within the margin at 1 key. It improves the 99th percentile at 3 keys, worsens "
        "it at 6 keys and leaves it within the margin at 1 key."
    )
