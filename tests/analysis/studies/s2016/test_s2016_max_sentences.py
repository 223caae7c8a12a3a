"""The maximum-throughput family beside the original's findings, in sentences."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.studies.s2016.max_sentences import (
    cpu_sentence,
    like_sentence,
    threads_sentence,
    wait_sentence,
)


def best(**throughput: float) -> pd.DataFrame:
    """Highest throughput per pool size (`T8=...`), each at 200 clients."""
    t = [int(k[1:]) for k in throughput]
    return pd.DataFrame(
        {"clients_total": 200, "throughput_ops_mean": list(throughput.values()), "point": "p"},
        index=pd.Index(t, name="workers"),
    )


def test_like_with_like_at_the_originals_pool_size(ref: dict) -> None:
    mx = ref["max_throughput"]
    assert like_sentence(best(T8=6000.0, T24=6200.0), mx) == (
        r"Like with like, at the original's $T = 24$ ours reaches at most 6{,}200 ops/s (at 200"
        r" clients), 46.0\,\% of the original's maximum of 13{,}467 ops/s at 260 clients and 24"
        " threads per pool."
    )
    assert like_sentence(best(T8=6000.0), mx).startswith("We did not run the original's $T = 24$")


def test_fewer_threads_slower_agrees_fails_or_holds_in_part(ref: dict) -> None:
    mx = ref["max_throughput"]
    agrees = threads_sentence(best(T8=3000.0, T24=6200.0), mx, 0.05)
    assert agrees.startswith(
        "The original found fewer threads per pool slower (its §1.2: about 8{,}000 and 12{,}000"
        " ops/s with 8 and 16 threads against 13{,}872 with 24)"
    )
    assert agrees.endswith(
        r" 3{,}000 ops/s with $T = 8$ (48\,\% of that; the original's 8{,}000 is 58\,\% of its"
        " 13{,}872): this agrees with the original."
    )
    # Within the tolerance counts as equal: here fewer threads are not slower.
    fails = threads_sentence(best(T8=6300.0, T24=6200.0), mx, 0.05)
    assert "The original's finding does not reproduce" in fails
    assert fails.endswith("our highest throughput of all is with $T = 8$.")
    part = threads_sentence(best(T8=3000.0, T16=6000.0, T24=6200.0), mx, 0.05)
    assert part.endswith(": the original's finding holds only in part.")
    assert "not tested here" in threads_sentence(best(T8=3000.0), mx, 0.05)


def per_point(budget: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "point": ["a", "b"],
            "servers": 5,
            "middleware.workers": [8, 24],
            "scale": 0.5,
            "budgets_cores.middleware": budget,
            "cpu_util_middleware_mean": [0.9, 0.95],
            "cpu_util_server_mean": 0.3,
            "throttled_share_middleware_mean": 0.4,
        }
    )


def test_the_cpu_budget_and_its_use_over_the_family() -> None:
    text = cpu_sentence(per_point(0.25))
    assert text.startswith(
        "The scale model gives the 2016 middleware a CPU budget of 0.250 cores of this machine,"
        " its study vCPUs times $s = 0.50$"
    )
    # S(T+1) pool threads and the net-thread: 5·9+1 and 5·25+1.
    assert r"it is 25\,\% of one core, shared by 46 to 126 threads" in text
    assert r"The middleware used 90\,\% to 95\,\% of that budget" in text
    assert r"its quota ran out in 40\,\% of the scheduler's periods" in text
    assert text.endswith("only more threads sharing the same budget.")
    assert cpu_sentence(per_point(math.nan)) == (
        "The middleware ran without a CPU budget in this family, so no use of one is shown."
    )


def wait_inputs(queue_us: float, cpu: float) -> tuple:
    client = pd.DataFrame(
        {
            "workers": [24, 24, 8],
            "clients_total": [200, 400, 260],
            "point": ["a", "b", "c"],
            "cpu_util_middleware_mean": cpu,
        }
    )
    times = {
        f"{m}_us_{q}": v
        for m, v in (("queue", queue_us), ("server", 1000.0), ("response", 4000.0))
        for q in ("mean", "p50", "p90", "p99")
    }
    requests = pd.DataFrame(
        [
            {
                "run": "f/a/rep1",
                "point": "a",
                "repetition": 1,
                "pool": "read",
                "type": "get",
                "count": 5,
                **times,
                "queue_us_var": 0.0,
                "server_us_var": 0.0,
                "response_us_var": 0.0,
            }
        ]
    )
    pct = pd.DataFrame({"point": ["a", "b"], "p50_mean": [4000.0, 9000.0]})
    return pct, requests, {"f/a/rep1"}, client


@pytest.mark.parametrize(
    ("queue_us", "cpu", "ending"),
    [
        (
            3000.0,
            0.95,
            r"ours waits on its CPU (95\,\% of its budget used at this point), its"
            " requests queueing for read threads that themselves wait for a share of it.",
        ),
        (3000.0, 0.5, "ours waits in its own queues."),
        (500.0, 0.95, "As in the original, the wait for memcached outweighs the queue."),
    ],
)
def test_where_a_get_waits_beside_the_originals_breakdown(
    ref: dict, queue_us: float, cpu: float, ending: str
) -> None:
    text = wait_sentence(*wait_inputs(queue_us, cpu), ref["max_throughput"], ref["breakdown"])
    # Our T = 24 point nearest the original's 260 clients: 200.
    assert text.startswith(
        r"At the original's pool size ($T = 24$ and 200 clients, our client count nearest to its"
        r" 260) a \texttt{get} waits "
    )
    assert (
        r"1.000\,ms for memcached at the median, of a median middleware response time of"
        r" 4.000\,ms; the original's were 0.065, 7.961 and 9.789\,ms (Table 1)."
    ) in text
    assert text.endswith(ending)


def test_without_the_originals_pool_size_there_is_no_breakdown(ref: dict) -> None:
    pct, requests, ok, client = wait_inputs(3000.0, 0.95)
    mx = {**ref["max_throughput"], "threads_per_pool": 32}
    assert wait_sentence(pct, requests, ok, client, mx, ref["breakdown"]) == (
        "We ran no point with $T = 32$ to set beside the original's breakdown."
    )
