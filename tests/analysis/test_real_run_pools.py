"""The real middleware in both designs between two memcached servers and memcaslap: its
per-pool statistics read back by the parser agree with its per-request ones."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from analysis import parse, pools
from testbed.services.memcached import memcached_command, wait_for_memcached
from testbed.services.middleware import command_flags, middleware_command
from testbed.services.ports import LOOPBACK

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(240)

SERVERS = (24085, 24086)
MIDDLEWARE = 24087


def middleware_jar() -> Path:
    jar = ROOT / "build" / "middleware.jar"
    assert jar.exists(), "build/middleware.jar missing: run `make build`"
    return jar


def run_middleware(tmp_path: Path, design: str, workers: int) -> parse.MiddlewareStats:
    servers = [
        subprocess.Popen(memcached_command(LOOPBACK, p, memory_mib=None, connections=None))
        for p in SERVERS
    ]
    mw = None
    stats = tmp_path / f"stats-{design}"
    try:
        for p, proc in zip(SERVERS, servers, strict=True):
            # Ready: our process owns the listener and answers the memcached protocol.
            wait_for_memcached(LOOPBACK, p, 30.0, proc)
        flags = command_flags(
            [f"{LOOPBACK}:{p}" for p in SERVERS],
            workers=workers,
            sharded=False,
            stats_dir=str(stats),
            design=design,
            replication=2,
            # A server that stalls with the machine must not count as failed here.
            server_timeout_ms=30000,
        )
        mw = subprocess.Popen(
            middleware_command(middleware_jar(), LOOPBACK, MIDDLEWARE, flags),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_memcached(LOOPBACK, MIDDLEWARE, 60.0, mw)
        cfg = tmp_path / "workload.cfg"
        cfg.write_text("key\n16 16 1\nvalue\n128 128 1\ncmd\n0 0.1\n1 0.9\n")
        subprocess.run(
            ["memcaslap", "-s", f"127.0.0.1:{MIDDLEWARE}", "-F", str(cfg), "-T", "1", "-c", "8",
             "-t", "3s", "-S", "1s", "-w", "1k"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    finally:
        if mw is not None:
            mw.send_signal(signal.SIGTERM)
            mw.wait(timeout=60)
        for s in servers:
            s.terminate()
            s.wait(timeout=10)
    return parse.read_stats_dir(stats)


def test_design_2016_pools_account_for_every_request(tmp_path: Path) -> None:
    stats = run_middleware(tmp_path, "2016", workers=3)
    assert stats.summary.get("clean_shutdown") is True
    assert stats.design == "2016"
    assert stats.threads() == {"net": 1, "read": 6, "write": 2}
    info = stats.pool_info()
    assert list(zip(info["pool"], info["server"], strict=True)) == [
        ("read", 0), ("write", 0), ("read", 1), ("write", 1),
    ]  # fmt: skip
    # Every window has a row per pool, idle ones too (windows.csv has busy windows only).
    per_window = stats.pools.groupby("window").size()
    assert (per_window == 4).all()
    assert list(per_window.index) == list(range(len(per_window)))
    assert set(stats.windows["window"]) <= set(per_window.index)
    req = stats.pool_requests
    assert set(req.loc[req["type"] == "set", "pool"]) == {"write"}
    assert set(req.loc[req["type"] == "get", "pool"]) == {"read"}
    # Single-key requests are one part each, plus one failover part per failed exchange.
    parts = req.groupby("type")["count"].sum()
    requests = stats.windows.groupby("type")["count"].sum()
    failed = int(stats.servers["errors"].sum())
    assert requests["set"] > 0
    assert parts["set"] == requests["set"]
    assert requests["get"] <= parts["get"] <= requests["get"] + failed
    # workers.csv numbers every pool thread; a pool's busy threads are its threads' sum.
    for _, pool in info.iterrows():
        mine = stats.workers[
            stats.workers["worker"].between(
                pool["first_worker"], pool["first_worker"] + pool["threads"] - 1
            )
        ]
        p = stats.pools[
            (stats.pools["pool"] == pool["pool"]) & (stats.pools["server"] == pool["server"])
        ]
        busy = mine.groupby("window")["busy_fraction"].sum().reindex(p["window"]).to_numpy()
        assert busy == pytest.approx(p["busy_threads_mean"].to_numpy(), abs=0.01)
    load = pools.pool_load(stats.pools.assign(run="r", point="p", repetition=1))
    assert load["busy_fraction"].between(0, 1).all()


def test_design_2018_has_one_shared_pool(tmp_path: Path) -> None:
    stats = run_middleware(tmp_path, "2018", workers=4)
    assert stats.design == "2018" and stats.threads() == {"net": 1, "shared": 4}
    assert set(stats.pools["pool"]) == {"shared"} and set(stats.pools["server"]) == {-1}
    parts = stats.pool_requests.groupby("type")["count"].sum()
    requests = stats.windows.groupby("type")["count"].sum()
    assert parts["set"] == requests["set"] and parts["get"] == requests["get"]
