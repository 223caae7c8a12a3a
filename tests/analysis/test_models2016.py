"""Models of the 2016 design: per-pool statistics, the M/M/m with one server per thread, and
the MVA network with read pools, write threads and memcached servers. Inputs are statistics in
the contract's format (data/stats2016: two servers, four read threads each)."""

from __future__ import annotations

import csv
import math
import shutil

import pandas as pd
import pytest

from analysis import parse, pools
from analysis.models import mva
from analysis.studies.s2016 import mmm as mmm2016
from analysis.studies.s2016 import mva as mva2016
from tests.analysis.conftest import DATA
from tests.analysis.test_parse import make_run

STATS = DATA / "stats2016"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> parse.RunTables:
    run = make_run(tmp_path_factory.mktemp("run"))
    stats_dir = run / "middlewares" / "mw1" / "stats"
    shutil.rmtree(stats_dir)
    shutil.copytree(STATS, stats_dir)
    return parse.load_run(run)


def rows(name: str) -> list[dict[str, str]]:
    with (STATS / name).open() as fh:
        return list(csv.DictReader(fh))


# --- per-pool statistics -------------------------------------------------------------------


def test_pool_load_and_the_busiest_pool(tables: parse.RunTables) -> None:
    load = pools.pool_load(tables.pools).set_index(["pool", "server"])
    assert load.loc[("read", 0), "threads"] == 4
    assert load.loc[("read", 0), "busy_fraction"] == pytest.approx(2.911 / 4, abs=1e-3)
    assert load.loc[("write", 1), "busy_fraction"] == pytest.approx(0.170)
    completed = [int(r["completed"]) for r in rows("pools.csv") if r["pool"] == "write"]
    assert load.xs("write", level="pool")["completed_per_s"].sum() == pytest.approx(
        sum(completed) / 6
    )
    top = pools.busiest_pools(tables.pools).iloc[0]
    assert (top["busiest"], top["busy_write"]) == ("read 0", pytest.approx(0.183))
    assert math.isnan(top["busy_shared"])


def test_part_times_weight_percentiles_by_parts(tables: parse.RunTables) -> None:
    raw = [r for r in rows("pool_requests.csv") if r["type"] == "set"]
    n = sum(int(r["count"]) for r in raw)
    p50 = sum(int(r["count"]) * float(r["queue_us_p50"]) for r in raw) / n
    mean = sum(int(r["count"]) * float(r["queue_us_mean"]) for r in raw) / n
    got = pools.part_times(tables.pool_requests, "queue").set_index("type")
    assert got.loc["set", "count"] == n
    assert got.loc["set", "p50"] == pytest.approx(p50)
    assert got.loc["set", "mean"] == pytest.approx(mean)
    # Pooled over windows and pools: at least the within-row spread.
    assert got.loc["set", "std"] >= math.sqrt(4410.001) * 0.999
    server = pools.part_times(tables.pool_requests, "server", by=("pool",), pools=("read",))
    assert set(server["pool"]) == {"read"}
    with pytest.raises(ValueError, match="metric must be one of"):
        pools.part_times(tables.pool_requests, "worker")


def test_write_thread_time_is_busy_time_per_set(tables: parse.RunTables) -> None:
    raw = [r for r in rows("pools.csv") if r["pool"] == "write"]
    busy_us = sum(float(r["busy_threads_mean"]) * 1e6 for r in raw)  # one-second windows
    assert pools.write_thread_time_us(tables.pools) == pytest.approx(
        busy_us / sum(int(r["completed"]) for r in raw)
    )
    assert math.isnan(pools.write_thread_time_us(tables.pools[tables.pools["pool"] == "read"]))


# --- M/M/m of the GETs, m = S·T read threads ----------------------------------------------


def test_mmm_inputs_count_the_read_threads_and_hold_time_per_get_part(
    tables: parse.RunTables,
) -> None:
    windows = tables.tidy()
    i = mmm2016.inputs(windows, tables.pool_requests, memcached=2, workers=4)
    # Only the read threads serve GETs: 2 servers × 4, the 2 write threads left out.
    assert i.servers == 8
    worker = {(r["window"], r["type"]): float(r["worker_us_mean"]) for r in rows("windows.csv")}
    parts = [r for r in rows("pool_requests.csv") if r["pool"] == "read"]
    n = sum(int(r["count"]) for r in parts)
    held = sum(
        int(r["count"]) * (float(r["server_us_mean"]) + worker[(r["window"], r["type"])])
        for r in parts
    )
    assert i.service_time_us == pytest.approx(held / n)
    per_window: dict[str, float] = {}
    for r in rows("windows.csv"):
        if r["type"] in ("get", "multiget"):
            per_window[r["window"]] = per_window.get(r["window"], 0) + float(r["throughput_ops"])
    assert i.arrival_rate == pytest.approx(sum(per_window.values()) / len(per_window))
    result = mmm2016.solve(i)
    assert result.servers == 8 and result.utilization < 1
    assert result.mean_response_time == pytest.approx(1 / i.service_rate + result.mean_waiting_time)


def test_mmm_servers_are_the_read_threads() -> None:
    assert mmm2016.servers(5, 24) == 120
    assert mmm2016.servers(3, 8, middlewares=2) == 48


def test_mmm_measured_side(tables: parse.RunTables) -> None:
    windows = tables.tidy()
    got = mmm2016.measured(windows, tables.pool_requests, tables.queue, arrival_rate=10_000.0)
    raw = [r for r in rows("windows.csv") if r["type"] in ("get", "multiget")]
    n = sum(int(r["count"]) for r in raw)
    mean = sum(int(r["count"]) * float(r["response_us_mean"]) for r in raw) / n
    assert got["mean_response_time"] == pytest.approx(mean / 1e6)
    assert got["mean_jobs_in_system"] == pytest.approx(10_000.0 * mean / 1e6)
    queue = [float(r["queue_length_mean"]) for r in rows("queue.csv")]
    assert got["mean_jobs_in_queue"] == pytest.approx(sum(queue) / len(queue))
    assert 0 < got["mean_waiting_time"] < got["mean_response_time"]


def test_mmm_servers_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="positive"):
        mmm2016.servers(0, 24)


# --- MVA network -----------------------------------------------------------------------------

TIMES = mva2016.ServiceTimes(
    client=2e-3, net_thread=20e-6, read=40e-6, write=150e-6, memcached=400e-6
)


def test_visit_ratios_follow_writes_and_replication() -> None:
    d = mva2016.Design(servers=5, workers=24, replication=3, write_share=0.1)
    v = mva2016.visits(d)
    assert 5 * v["read"] == pytest.approx(0.9) and 5 * v["write"] == pytest.approx(0.1)
    # A GET reads one server, a SET writes to R of them.
    assert 5 * v["memcached"] == pytest.approx(0.9 + 0.1 * 3)
    net = mva2016.network(d, TIMES)
    names = [s.name for s in net.stations]
    assert names[:2] == ["client", "net-thread"] and "write4" in names and "read4" in names
    assert next(s for s in net.stations if s.name == "read0").servers == 24
    read_only = mva2016.network(d.__class__(5, 24, 1, 0.0), TIMES)
    assert not any(s.name.startswith("write") for s in read_only.stations)


def test_prediction_is_consistent_per_request_type() -> None:
    d = mva2016.Design(servers=3, workers=4, replication=3, write_share=0.1)
    p = mva2016.predict(d, TIMES, clients=60)
    st = p.result.stations
    mc = st["memcached0"].response_time
    assert p.middleware_response_set == pytest.approx(
        st["net-thread"].response_time + st["write0"].response_time + 3 * mc
    )
    # The cycle is the client delay plus the type-weighted middleware response times.
    cycle = TIMES.client + 0.9 * p.middleware_response_get + 0.1 * p.middleware_response_set
    assert p.response_time == pytest.approx(cycle)
    assert p.throughput * p.response_time == pytest.approx(60)  # Little, no think time
    assert p.utilization["memcached"] == pytest.approx(p.throughput * (0.9 + 0.3) / 3 * 400e-6)


@pytest.mark.parametrize(
    ("times", "bound", "kind"),
    [
        # Read threads slow: S·T read threads serve the 90 % GETs.
        (dict(read=4e-3), 3 * 4 / (0.9 * 4e-3), "read"),
        # One write thread per server serves the 10 % SETs.
        (dict(write=5e-3), 3 / (0.1 * 5e-3), "write"),
        # Every request passes the single net-thread.
        (dict(net_thread=500e-6), 1 / 500e-6, "net-thread"),
    ],
)
def test_throughput_saturates_at_the_bottleneck(times: dict, bound: float, kind: str) -> None:
    d = mva2016.Design(servers=3, workers=4, replication=1, write_share=0.1)
    t = mva2016.ServiceTimes(**{**TIMES.__dict__, **times})
    p = mva2016.predict(d, t, clients=400)
    assert p.bottleneck == kind
    assert p.throughput == pytest.approx(bound, rel=0.02)
    assert p.throughput <= bound * (1 + 1e-9)
    assert p.throughput <= mva.bounds(mva2016.network(d, t), 400).throughput_upper * (1 + 1e-9)


def test_read_busy_includes_the_wait_for_memcached() -> None:
    d = mva2016.Design(servers=2, workers=4, replication=1, write_share=0.0)
    p = mva2016.predict(d, TIMES, clients=4)
    mc = p.result.stations["memcached0"].response_time
    assert p.read_busy == pytest.approx(p.throughput / 2 * (TIMES.read + mc) / 4)
    assert p.read_busy > p.utilization["read"]
    assert math.isnan(p.utilization["write"])


def test_design_and_times_are_checked() -> None:
    with pytest.raises(ValueError, match=r"replication 4 is not 1\.\.3"):
        mva2016.Design(3, 8, 4, 0.05)
    with pytest.raises(ValueError, match="write share"):
        mva2016.Design(3, 8, 1, 5)
    with pytest.raises(ValueError, match="memcached must be a number"):
        mva2016.ServiceTimes(0.0, 0.0, 0.0, 0.0, math.nan)
    d = mva2016.Design(3, 8, 1, 0.05)
    with pytest.raises(ValueError, match="needs a write service time"):
        mva2016.network(d, mva2016.ServiceTimes(0.0, 1e-5, 1e-5, math.nan, 1e-4))


def test_service_times_from_statistics(tables: parse.RunTables) -> None:
    mw = tables.tidy()
    mw = mw[mw["side"] == "middleware"]
    client = mw.assign(side="client", response_us_mean=mw["response_us_mean"] + 1500.0)
    t = mva2016.service_times(pd.concat([mw, client]), tables.pools, tables.pool_requests)
    assert t.client == pytest.approx(1500e-6)
    assert t.net_thread == pytest.approx(19.6e-6)
    raw = rows("windows.csv")
    gets = [r for r in raw if r["type"] != "set"]
    n = sum(int(r["count"]) for r in gets)
    assert t.read * 1e6 == pytest.approx(
        sum(int(r["count"]) * float(r["worker_us_mean"]) for r in gets) / n
    )
    reads = [r for r in rows("pool_requests.csv") if r["pool"] == "read"]
    n = sum(int(r["count"]) for r in reads)
    assert t.memcached * 1e6 == pytest.approx(
        sum(int(r["count"]) * float(r["server_us_mean"]) for r in reads) / n
    )
    assert t.write * 1e6 == pytest.approx(pools.write_thread_time_us(tables.pools))
