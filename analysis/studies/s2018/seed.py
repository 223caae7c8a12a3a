"""The two 2018 reports beside our measurements.

Seeds 002 and 004 measured the same middleware design, each on its own Azure deployment. The
reference file (workflows/reference2018.yaml) holds seed 004's values at its top level and
seed 002's under `seed002`. The functions here take our points in the study's time
(analysis.scale_model.in_study_time) and the reference mapping, and return long tables: one row
per compared quantity, with our value and each seed's (NaN where a seed printed none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.scale_model import TIME_BASE

SEED002 = "seed002"
SEED002_TABLES = (
    "baselines_direct",
    "baselines_middleware",
    "writes",
    "interactive_law",
    "bottleneck",
)
# Quantities of the maximum-throughput tables (seed 002 §3.3, seed 004 Table 5): throughputs
# in ops/s, times in ms.
MAX_QUANTITIES = ("clients", "workers", "client_x", "mw_x", "client_r", "mw_r", "mw_queue")
# Quantities of the full-system table (seed 002 §4.2, seed 004 Table 7).
FULL_QUANTITIES = ("clients", "mw_x", "il_x", "client_x", "queue_ms", "queue_len", "server_ms")
BESIDE_COLUMNS = ["quantity", "ours", "seed002", "seed004"]


class ReferenceFileError(ValueError):
    """The reference file lacks a table the comparison needs."""


def seed002(reference: Mapping) -> Mapping:
    """Seed 002's tables of the reference file; a clear error names any that is missing."""
    tables = reference.get(SEED002)
    if not isinstance(tables, Mapping):
        raise ReferenceFileError(f"the reference file has no `{SEED002}` section")
    missing = [t for t in SEED002_TABLES if t not in tables]
    if missing:
        raise ReferenceFileError(f"`{SEED002}` lacks the tables {', '.join(missing)}")
    return tables


def _in_study_time(points: pd.DataFrame) -> None:
    if TIME_BASE not in points.columns or not (points[TIME_BASE] == "study").all():
        raise ValueError("points must be in the study's time (analysis.scale_model.in_study_time)")


def _value(mapping: Mapping, key: object) -> float:
    v = mapping.get(key) if isinstance(mapping, Mapping) else None
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def best_points(
    points: pd.DataFrame, by: Sequence[str], queue_length: pd.Series | None = None
) -> pd.DataFrame:
    """Per group of `by`, the point of highest client throughput with both sides' values.

    `points`: one row per point and side (every request type together), in the study's
    time. Columns of the result: `point`, `clients`, `workers`, `client_x`, `mw_x` (ops/s),
    `client_r`, `mw_r`, `mw_queue` (= `queue_ms`), `server_ms` (ms), `il_x` (the throughput
    the interactive law derives from the middlewares' response time, with the think time the
    clients see beyond the middleware at the group's lightest load), and `queue_len` from
    `queue_length` (per point) where given."""
    _in_study_time(points)
    client = points[points["side"] == "client"].dropna(subset=["throughput_ops_mean"])
    mw = points[points["side"] == "middleware"].set_index("point")
    rows = []
    for key, g in client.groupby(list(by), sort=True):
        g = g.sort_values("clients_total")
        b = g.loc[g["throughput_ops_mean"].idxmax()]
        m = mw.loc[b["point"]] if b["point"] in mw.index else pd.Series(dtype=float)
        low = g.iloc[0]
        r_low = mw["response_us_mean_mean"].get(low["point"], math.nan)
        think_us = max(low["response_us_mean_mean"] - r_low, 0.0) if pd.notna(r_low) else 0.0
        r_mw = float(m.get("response_us_mean_mean", math.nan))
        n = int(b["clients_total"])
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        row.update(
            {
                "point": b["point"],
                "clients": n,
                "workers": int(b["middleware.workers"]),
                "client_x": float(b["throughput_ops_mean"]),
                "mw_x": float(m.get("throughput_ops_mean", math.nan)),
                "client_r": float(b["response_us_mean_mean"]) / 1e3,
                "mw_r": r_mw / 1e3,
                "mw_queue": float(m.get("queue_us_mean_mean", math.nan)) / 1e3,
                "server_ms": float(m.get("server_us_mean_mean", math.nan)) / 1e3,
                "il_x": n / ((r_mw + think_us) / 1e6) if r_mw > 0 else math.nan,
                "queue_len": math.nan
                if queue_length is None
                else float(queue_length.get(b["point"], math.nan)),
            }
        )
        row["queue_ms"] = row["mw_queue"]
        rows.append(row)
    return pd.DataFrame(rows)


def max_throughput_beside(best: pd.DataFrame, reference: Mapping) -> pd.DataFrame:
    """The baseline with middlewares at its maximum: per setup (`level_setup`) and workload
    (`level_workload`) of `best` (from best_points), our value of each quantity beside seed
    002's (§3.3) and seed 004's (Table 5)."""
    s2 = seed002(reference)["baselines_middleware"]
    s4 = reference.get("baselines_middleware", {})
    rows = []
    for _, b in best.iterrows():
        setup, workload = b["level_setup"], b["level_workload"]
        t2 = s2.get(setup, {}).get(workload, {})
        t4 = s4.get(setup, {}).get(workload, {})
        for q in MAX_QUANTITIES:
            rows.append(
                {
                    "setup": setup,
                    "workload": workload,
                    "quantity": q,
                    "ours": float(b[q]),
                    "seed002": _value(t2, q),
                    "seed004": _value(t4, q),
                }
            )
    return pd.DataFrame(rows, columns=["setup", "workload", *BESIDE_COLUMNS])


def full_system_beside(best: pd.DataFrame, reference: Mapping) -> pd.DataFrame:
    """The full system (write-only, three servers, two middlewares) at each worker count's
    maximum: our value of each quantity beside seed 002's (§4.2) and seed 004's (Table 7).
    `best` from best_points grouped by `middleware.workers`; rows per worker count in either
    source."""
    s2 = seed002(reference)["writes"]
    s4 = {k: v for k, v in reference.get("writes", {}).items() if k != "source"}
    ours = {int(b["workers"]): b for _, b in best.iterrows()}
    workers = sorted({*ours, *(int(k) for k in s2 if k != "source"), *(int(k) for k in s4)})
    rows = []
    for w in workers:
        b = ours.get(w)
        for q in FULL_QUANTITIES:
            rows.append(
                {
                    "workers": w,
                    "quantity": q,
                    "ours": math.nan if b is None else float(b[q]),
                    "seed002": _value(s2.get(w, {}), q),
                    "seed004": _value(s4.get(w, {}), q),
                }
            )
    return pd.DataFrame(rows, columns=["workers", *BESIDE_COLUMNS])


def direct_beside(reference: Mapping, setup: str, workload: str) -> tuple[float, float]:
    """Seed 002's maximum throughput without middleware (§2.3) as (low, high): equal where
    the seed gives one value, the two values where it gives two and does not choose."""
    v = seed002(reference)["baselines_direct"].get(setup, {}).get(workload)
    values = [float(x) for x in v] if isinstance(v, list) else [_value({0: v}, 0)]
    return (min(values), max(values))


def law_deviations_ms(
    points: pd.DataFrame, setup: str | None = None, workload: str | None = None
) -> pd.DataFrame:
    """Seed 002's interactive-law deviation per point: R_client − N / X_middleware (Z = 0),
    in ms of the study's time. Points without both sides are left out. `setup` and
    `workload` name them where the table has no `level_setup` or `level_workload`."""
    _in_study_time(points)
    client = points[points["side"] == "client"].set_index("point")
    mw = points[points["side"] == "middleware"].set_index("point")
    rows = []
    for point, c in client.iterrows():
        x_mw = mw["throughput_ops_mean"].get(point, math.nan)
        r = c["response_us_mean_mean"]
        if not (pd.notna(x_mw) and x_mw > 0 and pd.notna(r)):
            continue
        n = int(c["clients_total"])
        rows.append(
            {
                "setup": c["level_setup"] if setup is None else setup,
                "workload": c["level_workload"] if workload is None else workload,
                "workers": int(c["middleware.workers"]),
                "clients": n,
                "deviation_ms": r / 1e3 - n / x_mw * 1e3,
                "response_ms": r / 1e3,
            }
        )
    cols = ["setup", "workload", "workers", "clients", "deviation_ms", "response_ms"]
    return pd.DataFrame(rows, columns=cols)


def law_beside(ours: pd.DataFrame, reference: Mapping) -> pd.DataFrame:
    """Per setup and workload of `ours` (from law_deviations_ms): the number of points, the
    median and the largest absolute deviation (ms) of ours and of seed 002's tables, and how
    many (workers, clients) cells both measured."""
    table = seed002(reference)["interactive_law"]
    rows = []
    for (setup, workload), g in ours.groupby(["setup", "workload"], sort=True):
        cells = {
            (int(w), int(n)): float(d)
            for w, by_n in table.get(setup, {}).get(workload, {}).items()
            for n, d in by_n.items()
        }
        theirs = pd.Series(list(cells.values()), dtype=float)
        mine = set(zip(g["workers"].astype(int), g["clients"].astype(int), strict=True))
        rows.append(
            {
                "setup": setup,
                "workload": workload,
                "ours_points": len(g),
                "ours_median_ms": float(g["deviation_ms"].median()),
                "ours_max_abs_ms": float(g["deviation_ms"].abs().max()),
                "ours_max_abs_share": float((g["deviation_ms"].abs() / g["response_ms"]).max()),
                "seed002_cells": len(cells),
                "seed002_median_ms": float(theirs.median()) if len(theirs) else math.nan,
                "seed002_max_abs_ms": float(theirs.abs().max()) if len(theirs) else math.nan,
                "common_cells": len(mine & set(cells)),
            }
        )
    # The columns stand even without rows (no usable points): the report keys on them.
    columns = ["setup", "workload", "ours_points", "ours_median_ms", "ours_max_abs_ms",
               "ours_max_abs_share", "seed002_cells", "seed002_median_ms",
               "seed002_max_abs_ms", "common_cells"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def relative_error(predicted: float, measured: float) -> float:
    """(predicted − measured) / measured; NaN without a positive measurement."""
    return (predicted - measured) / measured if measured > 0 else math.nan


def mva_beside(ours: pd.DataFrame, reference: Mapping) -> pd.DataFrame:
    """Per setup and workload: our MVA's throughput error and bottleneck at the largest
    client count (`ours`: setup, workload, clients, x_model, x_measured, bottleneck), beside
    seed 004's (Table 14, its stated bottleneck) and the bottleneck seed 002 states."""
    s4 = reference.get("models", {})
    s2 = seed002(reference)["bottleneck"]
    rows = []
    for (setup, workload), g in ours.groupby(["setup", "workload"], sort=True):
        top = g.loc[g["clients"].idxmax()]
        t4 = s4.get("mva", {}).get(setup, {}).get(workload, {})
        rows.append(
            {
                "setup": setup,
                "workload": workload,
                "clients": int(top["clients"]),
                "ours_error": relative_error(float(top["x_model"]), float(top["x_measured"])),
                "ours_bottleneck": str(top["bottleneck"]),
                "seed004_error": relative_error(_value(t4, "mva_x"), _value(t4, "measured_x"))
                if t4
                else math.nan,
                "seed004_bottleneck": s4.get("mva_bottleneck", {}).get(workload, ""),
                "seed002_bottleneck": s2.get(setup, {}).get(workload, ""),
            }
        )
    # The columns stand even without rows (no usable points): the report keys on them.
    columns = ["setup", "workload", "clients", "ours_error", "ours_bottleneck",
               "seed004_error", "seed004_bottleneck", "seed002_bottleneck"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


# Columns of the seed-004 points the report's figures draw beside ours.
FIGURE_COLUMNS = ["setup", "workload", "side", "clients", "workers", "throughput", "response_ms"]


def baseline_figure_points(reference: Mapping) -> pd.DataFrame:
    """Seed 004's baseline maxima as points to draw beside our curves, in its (the study's)
    time: without middleware (Table 3: client throughput only, at the client count its
    `clients` field gives per workload, "6 / 192" in the order of the workloads) and with
    middlewares (Table 5: both sides' throughput and response time at its `clients` and
    `workers`). `setup` is one_server, two_servers, one_middleware or two_middlewares;
    `workers` is NaN without middleware and `response_ms` where the seed prints none."""
    rows = []
    direct = reference.get("baselines_direct", {})
    for setup, entry in direct.items():
        if not isinstance(entry, Mapping):
            continue
        workloads = [k for k in entry if k != "clients"]
        counts = [int(c) for c in str(entry.get("clients", "")).split("/") if c.strip()]
        for i, workload in enumerate(workloads):
            clients = counts[i] if i < len(counts) else (counts[0] if counts else math.nan)
            rows.append(
                [setup, workload, "client", clients, math.nan, _value(entry, workload), math.nan]
            )
    mw = reference.get("baselines_middleware", {})
    for setup, entry in mw.items():
        if not isinstance(entry, Mapping):
            continue
        for workload, values in entry.items():
            for side, prefix in (("client", "client"), ("middleware", "mw")):
                rows.append(
                    [
                        setup,
                        workload,
                        side,
                        _value(mw, "clients"),
                        _value(mw, "workers"),
                        _value(values, f"{prefix}_x"),
                        _value(values, f"{prefix}_r"),
                    ]
                )
    return pd.DataFrame(rows, columns=FIGURE_COLUMNS)


def baseline_queue_points(reference: Mapping) -> pd.DataFrame:
    """Seed 004's time in the middleware's queue with middlewares (Table 5, ms, at its
    `clients` and `workers`) per setup and workload, as points beside our statistics."""
    mw = reference.get("baselines_middleware", {})
    rows = [
        [setup, workload, _value(mw, "clients"), _value(mw, "workers"), _value(v, "mw_queue")]
        for setup, entry in mw.items()
        if isinstance(entry, Mapping)
        for workload, v in entry.items()
    ]
    return pd.DataFrame(rows, columns=["setup", "workload", "clients", "workers", "queue_ms"])


def writes_figure_points(reference: Mapping) -> pd.DataFrame:
    """Seed 004's write experiment at each worker count's maximum (Table 7) as points to
    draw beside ours: `workers`, `clients`, the client and middleware throughput (ops/s),
    and the middleware's time in the queue and waiting for memcached (ms)."""
    writes = {k: v for k, v in reference.get("writes", {}).items() if k != "source"}
    rows = [
        {
            "workers": int(w),
            "clients": _value(v, "clients"),
            "client_x": _value(v, "client_x"),
            "mw_x": _value(v, "mw_x"),
            "queue_ms": _value(v, "queue_ms"),
            "server_ms": _value(v, "server_ms"),
        }
        for w, v in writes.items()
    ]
    columns = ["workers", "clients", "client_x", "mw_x", "queue_ms", "server_ms"]
    return pd.DataFrame(rows, columns=columns).sort_values("workers", ignore_index=True)
