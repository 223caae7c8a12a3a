"""Model parameters from measurements, and predicted-against-measured tables."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from analysis.models import mva, queueing


def arrival_rate(tidy: pd.DataFrame) -> float:
    """λ: the mean throughput over windows (all types of one side summed per window)."""
    per_window = tidy.groupby(["run", "window"])["throughput_ops"].sum()
    return float(per_window.groupby(level="run").mean().mean())


def service_rate_max_window(tidy: pd.DataFrame) -> float:
    """μ: the highest throughput of any window."""
    return float(tidy.groupby(["run", "window"])["throughput_ops"].sum().max())


def service_rate_max_run(tidy: pd.DataFrame) -> float:
    """μ as seed 004 took it: the highest average throughput of any run (windows of one side,
    all types summed per window, averaged per run)."""
    per_window = tidy.groupby(["run", "window"])["throughput_ops"].sum()
    return float(per_window.groupby(level="run").mean().max())


def service_time_per_worker_us(middleware_tidy: pd.DataFrame) -> float:
    """Mean time a worker holds a request: its own time plus the time waiting for servers,
    weighted by request counts (the service time of one M/M/m server)."""
    t = middleware_tidy.dropna(subset=["worker_us_mean", "server_us_mean"])
    n = t["count"].sum()
    if n == 0:
        raise ValueError("no middleware windows with worker and server times")
    return float(((t["worker_us_mean"] + t["server_us_mean"]) * t["count"]).sum() / n)


def component_service_times_us(middleware_tidy: pd.DataFrame) -> dict[str, float]:
    """Count-weighted mean net-thread, queue, worker and server times in microseconds."""
    n = middleware_tidy["count"].sum()
    cols = {
        "netthread": "net_us_mean",
        "queue": "queue_us_mean",
        "worker": "worker_us_mean",
        "server": "server_us_mean",
        "response": "response_us_mean",
    }
    return {
        name: float((middleware_tidy[col] * middleware_tidy["count"]).sum() / n)
        for name, col in cols.items()
    }


def _rows(model: str, predicted: Mapping[str, float], measured: Mapping[str, float]) -> list[dict]:
    rows = []
    for metric, value in predicted.items():
        m = measured.get(metric)
        rel = (value - m) / m if m not in (None, 0) else float("nan")
        rows.append(
            {
                "model": model,
                "metric": metric,
                "predicted": value,
                "measured": m if m is not None else float("nan"),
                "relative_error": rel,
            }
        )
    return rows


def mm1_vs_measured(lam: float, mu: float, measured: Mapping[str, float]) -> pd.DataFrame:
    """Predicted M/M/1 metrics beside measured ones (same keys as `queueing.MM1Result`)."""
    res = queueing.mm1(lam, mu).to_dict()
    keep = {k: float(v) for k, v in res.items() if isinstance(v, float)}
    return pd.DataFrame(_rows("M/M/1", keep, measured))


def mmm_vs_measured(lam: float, mu: float, m: int, measured: Mapping[str, float]) -> pd.DataFrame:
    res = queueing.mmm(lam, mu, m).to_dict()
    keep = {k: float(v) for k, v in res.items() if isinstance(v, float)}
    return pd.DataFrame(_rows(f"M/M/{m}", keep, measured))


def mva_vs_measured(
    network: mva.Network, clients: int, think_time: float, measured: Mapping[str, float]
) -> pd.DataFrame:
    """System and per-station predictions; measured keys look like `throughput`,
    `response_time`, `<station>.utilization`, `<station>.response_time`, ..."""
    res = mva.solve(network, clients, think_time)
    predicted = {"throughput": res.throughput, "response_time": res.response_time}
    for name, st in res.stations.items():
        for metric in ("response_time", "queue_length", "utilization", "throughput"):
            predicted[f"{name}.{metric}"] = getattr(st, metric)
    return pd.DataFrame(_rows(f"MVA N={clients}", predicted, measured))
