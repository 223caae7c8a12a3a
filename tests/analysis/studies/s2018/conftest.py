"""Shared pieces of the 2018 study's tests: the reference file and a builder of small points
tables (one row per point and side, every request type together, as measured)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="session")
def reference2018() -> dict:
    return yaml.safe_load((ROOT / "workflows" / "reference2018.yaml").read_text())


def point_rows(
    point: str,
    clients: int,
    workers: int,
    client: tuple[float, float],
    mw: tuple[float, float, float, float],
    scale: float = 1.0,
    **extra: object,
) -> list[dict]:
    """A point's client row (X ops/s, R µs) and middleware row (X, R, queue, server µs), with
    no confidence intervals (one repetition); `extra` columns (levels, settings) on both."""
    common = {
        "point": point,
        "type": "all",
        "clients_total": clients,
        "middleware.workers": workers,
        "middlewares": 1,
        "scale": scale,
        **extra,
    }
    nan = math.nan
    return [
        {
            **common,
            "side": "client",
            "throughput_ops_mean": client[0],
            "throughput_ops_ci_low": nan,
            "throughput_ops_ci_high": nan,
            "response_us_mean_mean": client[1],
            "response_us_mean_ci_low": nan,
            "response_us_mean_ci_high": nan,
        },
        {
            **common,
            "side": "middleware",
            "throughput_ops_mean": mw[0],
            "throughput_ops_ci_low": nan,
            "throughput_ops_ci_high": nan,
            "response_us_mean_mean": mw[1],
            "response_us_mean_ci_low": nan,
            "response_us_mean_ci_high": nan,
            "queue_us_mean_mean": mw[2],
            "queue_us_mean_ci_low": nan,
            "queue_us_mean_ci_high": nan,
            "server_us_mean_mean": mw[3],
            "server_us_mean_ci_low": nan,
            "server_us_mean_ci_high": nan,
            "worker_us_mean_mean": mw[1] - mw[2] - mw[3],
            "net_us_mean_mean": 10.0,
        },
    ]


@pytest.fixture
def make_points() -> Callable[..., pd.DataFrame]:
    """Builds a points table from `point_rows` argument tuples: make_points([(...), ...],
    **extra for every point)."""

    def build(specs: list[tuple], **extra: object) -> pd.DataFrame:
        return pd.DataFrame([row for spec in specs for row in point_rows(*spec, **extra)])

    return build


# What every baseline point shares: emulated hosts with capped links (Mbit/s as run), 4 KiB
# values, one client machine; measured at s = 0.5 (study throughput 2 X, study times R / 2).
BASELINE_SETTINGS = {
    "host_kind": "emulated",
    "caps_mbit.client": 10.0,
    "caps_mbit.middleware": 40.0,
    "caps_mbit.server": 5.0,
    "link_client_mbit": 9.6,
    "link_middleware_mbit": 38.0,
    "link_server_mbit": 4.8,
    "workload.multiget": 0,
    "workload.key_size": 12,
    "workload.data_size": 4096,
    "client_machines": 1,
    "middleware.sharded": False,
    "rto_timeouts": 0.0,
}
WORKLOAD_RATIO = {"read-only": "0:1", "write-only": "1:0"}


def _levels(setup: str, workload: str, servers: int, middlewares: int) -> dict:
    return {
        **BASELINE_SETTINGS,
        "level_setup": setup,
        "level_workload": workload,
        "servers": servers,
        "middlewares": middlewares,
        "workload.ratio": WORKLOAD_RATIO[workload],
    }


@pytest.fixture
def baselines() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The two baselines as measured, and the middleware family's queue and trimmed windows.

    Without middleware (client rows only): X = 1000 (6 clients) and 2000 (24) per server,
    R = N / X (the interactive law exact) except one server's reads at 24 clients, 10 %
    slower. With middlewares: X = 1000 * (2 at 48 clients) * (1.5 at 32 workers) per
    middleware, client R = N / X, the middleware's R 200 µs less, 40 % of it in the queue
    and 30 % waiting for memcached; queue length N / 8 per middleware."""
    direct, mw, queue, windows = [], [], [], []
    for setup, servers in (("one_server", 1), ("two_servers", 2)):
        for wl in ("read-only", "write-only"):
            for n in (6, 24):
                x = 1000.0 * (2 if n == 24 else 1) * servers
                r = n / x * 1e6 * (1.1 if (setup, wl, n) == ("one_server", "read-only", 24) else 1)
                point = f"{setup}-{wl}-{n}"
                rows = point_rows(point, n, 0, (x, r), (x, r, 0, 0), 0.5)
                direct.append({**rows[0], **_levels(setup, wl, servers, 0)})
    for setup, middlewares in (("one_middleware", 1), ("two_middlewares", 2)):
        for wl in ("read-only", "write-only"):
            for workers in (8, 32):
                for n in (6, 48):
                    x = 1000.0 * (2 if n == 48 else 1) * (1.5 if workers == 32 else 1)
                    x *= middlewares
                    r = n / x * 1e6
                    point = f"{setup}-{wl}-{workers}-{n}"
                    mw_r = r - 200
                    times = (x, mw_r, 0.4 * mw_r, 0.3 * mw_r)
                    rows = point_rows(point, n, workers, (x, r), times, 0.5)
                    mw += [{**row, **_levels(setup, wl, 1, middlewares)} for row in rows]
                    run = f"run-{point}"
                    for i in range(middlewares):
                        queue.append({"run": run, "point": point, "source": f"mw{i}",
                                      "window": 0, "queue_length_mean": n / 8})  # fmt: skip
                    windows.append({"run": run, "side": "middleware", "window": 0})
    return tuple(pd.DataFrame(t) for t in (direct, mw, queue, windows))  # type: ignore[return-value]


@pytest.fixture
def base_windows(baselines: tuple[pd.DataFrame, ...]) -> pd.DataFrame:
    """The middlewares' windows of the baseline with middlewares, per request type: two
    windows of 100 requests each, a net-thread time of 20 µs, a worker time of 300 µs and
    500 µs waiting for memcached (as measured), beside each point's window of all types."""
    rows = []
    mw = baselines[1]
    for point in mw["point"].unique():
        for window in (0, 1):
            for kind, x in (("all", 200.0), ("get", 200.0)):
                rows.append(
                    {"run": f"run-{point}", "point": point, "side": "middleware",
                     "window": window, "type": kind, "count": 100, "throughput_ops": x,
                     "net_us_mean": 20.0, "queue_us_mean": 100.0, "worker_us_mean": 300.0,
                     "server_us_mean": 500.0, "response_us_mean": 920.0}
                )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture
def write_experiment(
    make_points: Callable[..., pd.DataFrame],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The write experiment as measured at s = 0.5: two middlewares of 8 workers at 6 and 48
    clients (points `a`, `b`), their windows per request type (run `ra`: 100 and 300 ops/s,
    run `rb`: 900 and 700, SETs a quarter) and the queue per middleware and window."""
    points = make_points(
        [
            # The middlewares' throughput is their windows' mean (200 and 800 ops/s).
            ("a", 6, 8, (400, 2000), (200, 1500, 100, 1200), 0.5),
            ("b", 48, 8, (1600, 8000), (800, 7000, 4000, 2000), 0.5),
        ],
        middlewares=2,
        level_workload="write-only",
    )
    windows, queue = [], []
    for point, run, per_window in (("a", "ra", (100, 300)), ("b", "rb", (900, 700))):
        for window, x in enumerate(per_window):
            for kind, share in (("set", 0.25), ("get", 0.75), ("all", 1.0)):
                windows.append(
                    {"run": run, "point": point, "side": "middleware", "window": window,
                     "type": kind, "count": 10, "throughput_ops": x * share}
                )  # fmt: skip
            for source in ("mw1", "mw2"):
                queue.append({"run": run, "point": point, "source": source,
                              "window": window, "queue_length_mean": 1.5})  # fmt: skip
    return points, pd.DataFrame(windows), pd.DataFrame(queue)


def _multiget_points() -> pd.DataFrame:
    """Sizes 1 and 6, sharded and non-sharded, as measured at s = 0.5: 100 requests/s at
    either side (and 10 SETs/s beside), the client's mean R 1000 µs per key sharded and 1200
    non-sharded, the middleware's 10 µs in the queue, 800 µs per key at the servers, 50 in
    the worker and 40 in the net-thread."""
    nan = math.nan
    rows = []
    for sharding, per_key in (("sharded", 1000.0), ("non-sharded", 1200.0)):
        for size in (1, 6):
            kind = "get" if size == 1 else "multiget"
            common = {
                "point": f"{sharding}-{size}", "level_sharding": sharding,
                "level_size": str(size), "scale": 0.5, "servers": 3, "middlewares": 1,
                "client_machines": 1, "middleware.sharded": sharding == "sharded",
                "middleware.read_balance": "least-outstanding", "caps_mbit.server": 5.0,
                "caps_mbit.client": 10.0, "caps_mbit.middleware": 40.0,
                "workload.data_size": 4096, "workload.key_size": 12,
            }  # fmt: skip
            r_client = per_key * size
            server = 800.0 * size
            rows += [
                {**common, "side": "client", "type": kind, "keys": size,
                 "throughput_ops_mean": 100.0, "response_us_mean_mean": r_client,
                 "response_us_mean_ci_low": nan, "response_us_mean_ci_high": nan},
                {**common, "side": "client", "type": "set", "keys": 1,
                 "throughput_ops_mean": 10.0, "response_us_mean_mean": 500.0},
                {**common, "side": "middleware", "type": kind, "keys": size,
                 "throughput_ops_mean": 100.0,
                 "response_us_mean_mean": 10.0 + server + 50.0 + 40.0,
                 "queue_us_mean_mean": 10.0, "server_us_mean_mean": server,
                 "worker_us_mean_mean": 50.0, "net_us_mean_mean": 40.0},
            ]  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture
def multiget_family() -> dict[str, pd.DataFrame]:
    """The multiget family as measured: points, histograms (the client's of the whole run,
    the middleware's per window: window 0 stable, window 5 not), trimmed windows, manifests
    and runs. Client histograms: 50 requests at 1 ms, 45 at 2 ms and 5 at 4 ms (sharded) or
    at 8 ms (non-sharded); the middleware's: 100 requests at 0.9 ms in the stable window."""
    points = _multiget_points()
    hist, runs, manifests = [], [], []
    for point in points["point"].unique():
        sharding, size = point.rsplit("-", 1)
        kind = "get" if size == "1" else "multiget"
        run = f"run-{point}"
        tail = 4000.0 if sharding == "sharded" else 8000.0
        base = {"run": run, "point": point, "type": kind}
        for bucket, count in ((1000.0, 50), (2000.0, 45), (tail, 5)):
            hist.append({**base, "side": "client", "window": -1, "bucket_us": bucket,
                         "count": count})  # fmt: skip
        for window, bucket in ((0, 900.0), (5, 50_000.0)):
            hist.append({**base, "side": "middleware", "window": window, "bucket_us": bucket,
                         "count": 100})  # fmt: skip
        runs.append({"run": run, "side": "client", "count": 10_000})
        manifests.append(
            {"run": run, "status": "ok", "middleware.sharded": sharding == "sharded",
             "workload.multiget": int(size), "rto_timeouts": 20.0 if sharding == "sharded" else 5.0,
             "spurious_rtos": 0.0, "retrans_segs": 30.0, "qdisc_drops": 40.0}
        )  # fmt: skip
    windows = pd.DataFrame({"run": [f"run-{p}" for p in points["point"].unique()]})
    windows = windows.assign(side="middleware", window=0)
    return {
        "points": points,
        "histograms": pd.DataFrame(hist),
        "windows": windows,
        "manifests": pd.DataFrame(manifests),
        "runs": pd.DataFrame(runs),
    }
