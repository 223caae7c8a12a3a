"""Shared inputs of the 2016 report tests: the reference values, a hand-made
maximum-throughput family, and the figures the report functions draw, kept instead of saved
so a test can read their axes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.report import figures as fg

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="session")
def ref() -> dict:
    return yaml.safe_load((ROOT / "workflows" / "reference2016.yaml").read_text())


def legend_texts(fig: fg.plt.Figure) -> list[str]:
    """The labels of a figure's legends and of its axes' legends."""
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    return [t.get_text() for lg in legends if lg is not None for t in lg.get_texts()]


# The maximum-throughput family: pool sizes 8 and 24, 20 and 200 clients, one run each,
# every run at s = 0.5 (the study's throughputs twice the raw ones, its times half).
SCALE = 0.5
RAW_X = {(8, 20): 1000.0, (8, 200): 3000.0, (24, 20): 1200.0, (24, 200): 3100.0}
CLIENT_US, MIDDLEWARE_US = 5000.0, 2000.0  # raw mean response times of every point


def point_name(t: int, c: int) -> str:
    return f"workers={t},clients={c}"


def run_name(t: int, c: int) -> str:
    return f"max_throughput_2016/{point_name(t, c)}/rep1"


def _ci(name: str, value: float) -> dict[str, float]:
    return {f"{name}_mean": value, f"{name}_ci_low": value, f"{name}_ci_high": value}


def max_points() -> pd.DataFrame:
    rows = []
    for (t, c), x in RAW_X.items():
        common = {
            "point": point_name(t, c),
            "clients_total": c,
            "middleware.workers": t,
            "servers": 5,
            "scale": SCALE,
            "delays_ms.client_middleware": 1.0,
            "budgets_cores.middleware": 0.25,
            "cpu_util_middleware_mean": 0.95,
            "cpu_util_server_mean": 0.3,
            "throttled_share_middleware_mean": 0.4,
        }
        rows.append(
            {
                **common,
                "side": "client",
                "type": "all",
                **_ci("throughput_ops", x),
                **_ci("response_us_mean", CLIENT_US),
            }
        )
        # The middleware's GETs; its SETs (memaslap's untimed pre-set) are left out.
        parts = {f"{p}_us_mean": 400.0 for p in ("net", "queue", "worker", "server")}
        rows.append(
            {
                **common,
                "side": "middleware",
                "type": "get",
                **_ci("throughput_ops", x),
                **_ci("response_us_mean", MIDDLEWARE_US),
                **{k: v for p, u in parts.items() for k, v in _ci(p, u).items()},
            }
        )
        rows.append(
            {
                **common,
                "side": "middleware",
                "type": "set",
                **_ci("throughput_ops", 1.0),
                **_ci("response_us_mean", 99_999.0),
            }
        )
    return pd.DataFrame(rows)


def max_tables() -> dict[str, pd.DataFrame]:
    windows, hist, pools, requests = [], [], [], []
    for t, c in RAW_X:
        key = {"run": run_name(t, c), "point": point_name(t, c), "repetition": 1}
        windows.append({**key, "side": "middleware", "window": 1, "type": "get", "count": 10})
        windows.append({**key, "side": "client", "window": 1, "type": "get", "count": 10})
        # Clients: exact values; the middleware: 1000 µs buckets in its one stable window.
        for b, n in ((4000, 1), (5000, 2), (6000, 1)):
            hist.append(
                {**key, "side": "client", "window": -1, "type": "get", "bucket_us": b, "count": n}
            )
        for b, n in ((1000, 1), (2000, 2), (3000, 1)):
            hist.append(
                {
                    **key,
                    "side": "middleware",
                    "window": 1,
                    "type": "get",
                    "bucket_us": b,
                    "count": n,
                }
            )
        pools.append(
            {
                **key,
                "window": 1,
                "start_ms": 0,
                "end_ms": 1000,
                "pool": "read",
                "server": 0,
                "threads": t,
                "busy_threads_mean": 0.5 * t,
                "queue_length_mean": 1.0,
                "in_flight_mean": 1.0,
                "completed": 10,
            }
        )
        times = {
            f"{m}_us_{q}": v
            for m, v in (("queue", 3000.0), ("server", 1000.0), ("response", 4000.0))
            for q in ("mean", "p50", "p90", "p99")
        }
        requests.append(
            {
                **key,
                "window": 1,
                "pool": "read",
                "server": 0,
                "type": "get",
                "count": 10,
                **times,
                "queue_us_var": 0.0,
                "server_us_var": 0.0,
                "response_us_var": 0.0,
            }
        )
    names = [run_name(t, c) for t, c in RAW_X]
    runs = pd.DataFrame(
        {"run": names, "point": [n.split("/")[1] for n in names], "status": "ok", "stable": True}
    )
    return {
        "points": max_points(),
        "windows": pd.DataFrame(windows),
        "histograms": pd.DataFrame(hist),
        "runs": runs,
        "pools": pd.DataFrame(pools),
        "pool_requests": pd.DataFrame(requests),
    }


@pytest.fixture
def max_family() -> dict[str, pd.DataFrame]:
    return max_tables()
