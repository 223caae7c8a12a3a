"""The maximum-throughput family beside the original's findings: the numbers and cases the
section's prose reads."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.studies.s2016.max_findings import (
    cpu_numbers,
    like_numbers,
    split_numbers,
    threads_numbers,
    wait_numbers,
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
    assert like_numbers(best(T8=6000.0, T24=6200.0), mx) == {
        "SixteenMaxLikeCase": "compared",
        "SixteenMaxLikeThroughput": "6{,}200",
        "SixteenMaxLikeClients": "200",
    }
    untested = like_numbers(best(T8=6000.0), mx)
    assert untested["SixteenMaxLikeCase"] == "untested"
    assert untested["SixteenMaxLikeThroughput"] == "--"


def test_the_originals_claim_on_fewer_threads(ref: dict) -> None:
    n = threads_numbers(best(T8=3000.0, T24=6200.0), ref["max_throughput"], 0.05)
    # Its §1.2: about 8,000 and 12,000 ops/s with 8 and 16 threads against 13,872 with 24.
    assert n["SixteenOrigMaxSection"] == "§1.2"
    assert n["SixteenMaxOrigBelowThroughputs"] == "8{,}000 and 12{,}000"
    assert n["SixteenMaxOrigBelowThreads"] == "8 and 16"
    assert n["SixteenMaxOrigPlateau"] == "13{,}872"
    # Ours with T = 8: 48 % of ours with 24; the original's 8,000 is 58 % of its 13,872.
    assert n["SixteenMaxThreadsItems"] == (
        r"\SixteenThreadsItem{3{,}000}{8}{48\,\%}{8{,}000}{58\,\%}"
    )


@pytest.mark.parametrize(
    ("throughput", "case"),
    [
        ({"T8": 3000.0, "T24": 6200.0}, "holds"),
        # Within the tolerance counts as equal: here fewer threads are not slower.
        ({"T8": 6300.0, "T24": 6200.0}, "fails"),
        ({"T8": 6000.0, "T24": 6200.0}, "fails"),
        ({"T8": 3000.0, "T16": 6000.0, "T24": 6200.0}, "partial"),
        ({"T8": 3000.0}, "untested"),
        ({"T24": 6200.0}, "untested"),
    ],
)
def test_fewer_threads_slower_holds_fails_or_holds_in_part(
    ref: dict, throughput: dict[str, float], case: str
) -> None:
    n = threads_numbers(best(**throughput), ref["max_throughput"], 0.05)
    assert n["SixteenMaxThreadsCase"] == case
    smaller = sum(int(k[1:]) < 24 for k in throughput) if case != "untested" else 0
    assert n["SixteenMaxThreadsItems"].count(r"\SixteenThreadsItem") == smaller


def test_a_pool_size_the_original_gives_no_value_for_leaves_its_part_empty(ref: dict) -> None:
    n = threads_numbers(best(T12=3000.0, T24=6200.0), ref["max_throughput"], 0.05)
    assert n["SixteenMaxThreadsItems"] == r"\SixteenThreadsItem{3{,}000}{12}{48\,\%}{}{}"
    assert n["SixteenMaxThreadsCase"] == "holds"


def per_point(budget: float, used: tuple[float, float] = (0.9, 0.95)) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "point": ["a", "b"],
            "servers": 5,
            "middleware.workers": [8, 24],
            "scale": 0.5,
            "budgets_cores.middleware": budget,
            "cpu_util_middleware_mean": list(used),
            "cpu_util_server_mean": 0.3,
            "throttled_share_middleware_mean": 0.4,
        }
    )


def test_the_cpu_budget_and_its_use_over_the_family() -> None:
    n = cpu_numbers(per_point(0.25))
    assert n["SixteenMaxCpuCase"] == "cpu"  # the middleware at its budget, memcached not
    assert (n["SixteenMaxCpuBudget"], n["SixteenMaxCpuScale"]) == ("0.250", "0.50")
    assert (n["SixteenMaxCpuSlowdown"], n["SixteenMaxCpuBudgetCore"]) == ("2", r"25\,\%")
    # S(T+1) pool threads and the net-thread: 5·9+1 and 5·25+1.
    assert (n["SixteenMaxCpuThreadsLow"], n["SixteenMaxCpuThreadsHigh"]) == ("46", "126")
    assert (n["SixteenMaxCpuUsedLow"], n["SixteenMaxCpuUsedHigh"]) == (r"90\,\%", r"95\,\%")
    assert n["SixteenMaxCpuThrottledLow"] == n["SixteenMaxCpuThrottledHigh"] == r"40\,\%"
    assert n["SixteenMaxCpuServersHigh"] == r"30\,\%"
    # A middleware far from its budget is not called the limit.
    assert cpu_numbers(per_point(0.25, (0.3, 0.4)))["SixteenMaxCpuCase"] == "other"
    unbudgeted = cpu_numbers(per_point(math.nan, (math.nan, math.nan)))
    assert unbudgeted["SixteenMaxCpuCase"] == "unbudgeted"


def wait_inputs(queue_us: float, cpu: float, clients: int = 200) -> tuple:
    client = pd.DataFrame(
        {
            "workers": [24, 24, 8],
            "clients_total": [clients, 400, 260],
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
    ("queue_us", "cpu", "case"),
    [
        (3000.0, 0.95, "cpu"),  # inverted, in a middleware at its CPU budget
        (3000.0, 0.5, "inverted"),
        (500.0, 0.95, "agrees"),
        (1000.0, 0.95, "even"),
    ],
)
def test_where_a_get_waits_beside_the_originals_breakdown(
    ref: dict, queue_us: float, cpu: float, case: str
) -> None:
    n = wait_numbers(*wait_inputs(queue_us, cpu), ref["max_throughput"], ref["breakdown"])
    assert n["SixteenMaxWaitCase"] == case
    # Our T = 24 point nearest the original's 260 clients: 200.
    assert (n["SixteenMaxWaitClientsCase"], n["SixteenMaxWaitClients"]) == ("nearest", "200")
    assert (n["SixteenMaxWaitServer"], n["SixteenMaxWaitResponse"]) == ("1.000", "4.000")
    assert n["SixteenMaxWaitQueue"] == f"{queue_us / 1e3:.3f}"
    assert n["SixteenMaxWaitCpu"] == f"{100 * cpu:.0f}\\,\\%"
    # Ours against the original's 0.065 ms queue.
    ratio = queue_us / 1e3 / 0.065
    assert n["SixteenMaxWaitQueueRatio"] == (f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.1f}")
    assert n["SixteenMaxWaitQueueCase"] == "longer"
    # The original's Table 1: queue, memcached and response medians.
    assert (n["SixteenOrigWaitQueue"], n["SixteenOrigWaitServer"]) == ("0.065", "7.961")
    assert (n["SixteenOrigWaitResponse"], n["SixteenOrigBreakdownTable"]) == ("9.789", "Table 1")


def test_at_the_originals_client_count_no_nearest_is_named(ref: dict) -> None:
    n = wait_numbers(*wait_inputs(500.0, 0.9, 260), ref["max_throughput"], ref["breakdown"])
    assert (n["SixteenMaxWaitClientsCase"], n["SixteenMaxWaitClients"]) == ("same", "260")


def test_without_the_originals_pool_size_there_is_no_breakdown(ref: dict) -> None:
    pct, requests, ok, client = wait_inputs(3000.0, 0.95)
    mx = {**ref["max_throughput"], "threads_per_pool": 32}
    n = wait_numbers(pct, requests, ok, client, mx, ref["breakdown"])
    assert n["SixteenMaxWaitCase"] == "unrun"
    assert n["SixteenMaxWaitQueue"] == "--"
    assert (n["SixteenMaxWaitQueueRatio"], n["SixteenMaxWaitQueueCase"]) == ("--", "unknown")


@pytest.mark.parametrize(
    ("queue_us", "server_us", "case"),
    [
        (13145.0, 6686.0, "queue"),  # the queue outweighs memcached: not the original's
        (5833.0, 6616.0, "server"),  # the wait for memcached outweighs it, as in the original
        (6616.0, 6616.4, "even"),  # alike as printed, to the microsecond
        (math.nan, 6616.0, "even"),  # a part not measured decides nothing
    ],
)
def test_which_part_of_a_get_is_larger_at_the_chosen_configuration(
    queue_us: float, server_us: float, case: str
) -> None:
    part = {"queue": pd.Series({"p50": queue_us}), "server": pd.Series({"p50": server_us})}
    assert split_numbers(part) == {"SixteenMaxSplitCase": case}
    assert split_numbers({"queue": pd.Series(dtype=float), "server": part["server"]}) == {
        "SixteenMaxSplitCase": "even"
    }
