"""Readers for every raw output of a run, and the tidy tables built from them.

`load_run(dir)` reads a run directory written by `mwlab run` and returns `RunTables`;
`RunTables.write_parquet(dir)` stores them. Columns are documented in analysis/README.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.parse.columns import PERCENTILES, RUN, WINDOW
from analysis.parse.cpu import cpu_columns
from analysis.parse.errors import ParseError
from analysis.parse.manifest import read_manifest
from analysis.parse.memaslap import MemaslapResult, read_memaslap
from analysis.parse.memtier import MemtierResult, read_memtier
from analysis.parse.middleware import COLUMNS, MiddlewareStats, read_stats_dir
from analysis.parse.network import network_columns

__all__ = [
    "MemaslapResult",
    "MemtierResult",
    "MiddlewareStats",
    "ParseError",
    "RunTables",
    "load_run",
    "load_runs",
    "read_manifest",
    "read_memaslap",
    "read_memtier",
    "read_stats_dir",
    "tidy",
]

# The middleware's mean time per part of a request.
_PARTS = ["net_us_mean", "queue_us_mean", "worker_us_mean", "server_us_mean"]
WINDOW_COLUMNS = [
    *RUN,
    "source",
    *WINDOW,
    "response_us_mean",
    "response_us_std",
    *PERCENTILES,
    *_PARTS,
    "misses",
    "errors",
]
TIDY_COLUMNS = [
    *RUN,
    "window",
    "start_ms",
    "end_ms",
    "type",
    "keys",
    "sources",
    "count",
    "throughput_ops",
    "response_us_mean",
    "response_us_std",
    *_PARTS,
    "misses",
    "errors",
]
_MEAN_COLUMNS = ["response_us_mean", *_PARTS]


@dataclass(frozen=True)
class RunTables:
    runs: pd.DataFrame  # one row per run: manifest and point parameters
    windows: pd.DataFrame  # run × side × source × window × type × keys
    client_totals: pd.DataFrame  # run × source × type: the client's whole-run summary
    queue: pd.DataFrame  # run × middleware × window
    servers: pd.DataFrame  # run × middleware × window × server
    workers: pd.DataFrame  # run × middleware × window × worker
    histograms: pd.DataFrame  # run × side × source × window × type × keys × bucket
    pools: pd.DataFrame  # run × middleware × window × pool × server
    pool_requests: pd.DataFrame  # run × middleware × window × pool × server × type × keys
    middlewares: pd.DataFrame  # run × middleware: design and thread counts (summary.json)

    def tidy(self) -> pd.DataFrame:
        """One row per run × window × type × keys × side (sources combined)."""
        return tidy(self.windows)

    def write_parquet(self, out: str | Path) -> dict[str, Path]:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        written = {}
        tables = {f.name: getattr(self, f.name) for f in fields(self)}
        tables["tidy"] = self.tidy()
        for name, df in tables.items():
            path = out / f"{name}.parquet"
            df.to_parquet(path, index=False)
            written[name] = path
        return written

    @classmethod
    def concat(cls, parts: list[RunTables]) -> RunTables:
        return cls(
            **{
                f.name: pd.concat([getattr(p, f.name) for p in parts], ignore_index=True)
                for f in fields(cls)
            }
        )


def _var_to_std(var: pd.Series) -> pd.Series:
    return np.sqrt(var.clip(lower=0))


def tidy(windows: pd.DataFrame) -> pd.DataFrame:
    """Combines the sources of each side: counts and throughputs add up, means are weighted by
    request counts, and the standard deviation is the pooled one where every source has it."""
    if windows.empty:
        return pd.DataFrame(columns=TIDY_COLUMNS)
    keys = ["run", "point", "repetition", "side", "window", "type", "keys"]
    w = windows.copy()
    w["_n"] = w["count"].astype(float)
    for col in _MEAN_COLUMNS:
        w[f"_s_{col}"] = w[col] * w["_n"]
        w[f"_has_{col}"] = w[col].notna() | (w["_n"] == 0)
    # E[x^2] per source for the pooled variance
    w["_sq"] = (w["response_us_std"] ** 2 + w["response_us_mean"] ** 2) * w["_n"]
    g = w.groupby(keys, sort=True, dropna=False)
    out = g.agg(
        start_ms=("start_ms", "min"),
        end_ms=("end_ms", "max"),
        sources=("source", "nunique"),
        count=("count", "sum"),
        throughput_ops=("throughput_ops", "sum"),
        misses=("misses", lambda s: s.sum(min_count=1)),
        errors=("errors", lambda s: s.sum(min_count=1)),
        _n=("_n", "sum"),
        _sq=("_sq", lambda s: s.sum(min_count=len(s))),
        **{f"_s_{c}": (f"_s_{c}", lambda s: s.sum(min_count=1)) for c in _MEAN_COLUMNS},
        **{f"_has_{c}": (f"_has_{c}", "all") for c in _MEAN_COLUMNS},
    ).reset_index()
    n = out["_n"].where(out["_n"] > 0)
    for col in _MEAN_COLUMNS:
        out[col] = (out[f"_s_{col}"] / n).where(out[f"_has_{col}"])
    out["response_us_std"] = _var_to_std(out["_sq"] / n - out["response_us_mean"] ** 2)
    return out[TIDY_COLUMNS]


def _client_frames(run: str, meta: dict, client_dir: Path) -> tuple[pd.DataFrame, ...]:
    source = client_dir.name
    json_file, text_file = client_dir / "result.json", client_dir / "memaslap.txt"
    if json_file.exists():
        res = read_memtier(json_file)
        win = res.windows.copy()
        win["response_us_std"] = np.nan
        win["misses"] = np.nan
        win["errors"] = np.nan
        totals = res.totals.copy()
        # Both generators' whole-run HdrHistograms, read from the same compressed field.
        hist = res.histograms.copy()
        hist["window"] = -1
    elif text_file.exists():
        ms = read_memaslap(text_file)
        win = ms.windows.copy()
        if not win.empty:
            origin = memaslap_origin_ms(client_dir, ms)
            win["start_ms"] = origin + 1000 * win["start_s"]
            win["end_ms"] = origin + 1000 * win["end_s"]
            win["errors"] = np.nan
            for col in ("response_us_p50", "response_us_p90", "response_us_p99"):
                win[col] = np.nan
        totals = ms.totals.copy()
        totals["keys"] = 1
        hist = ms.histograms[ms.histograms["type"] != "total"].copy()
        hist["window"] = -1
        hist["keys"] = 1
    else:
        raise ParseError(client_dir, "holds neither result.json nor memaslap.txt")
    for df in (win, totals, hist):
        df.insert(0, "source", source)
        df.insert(0, "side", "client")
        for k, v in reversed(meta.items()):
            df.insert(0, k, v)
    return win, totals, hist


def memaslap_origin_ms(client_dir: Path, result: MemaslapResult) -> float:
    """Epoch ms at which memaslap started timing, from the `launch.json` the testbed writes
    beside its output; NaN for runs without one (their windows are then cut by index).

    `exit_ms` (when the process ended) places it best: memaslap stops timing, sleeps one
    second, prints its totals and exits. `start_ms` (when the process started) comes before
    memaslap opens its connections one after another (and, with no SETs in its mix, pre-sets
    its keys), so its windows start that much later than the file says."""
    path = client_dir / "launch.json"
    if not path.exists():
        return np.nan
    try:
        launch = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ParseError(path, f"not a launch record: {err}") from None
    times = {k: launch.get(k) for k in ("start_ms", "exit_ms")} if isinstance(launch, dict) else {}
    if not any(isinstance(v, int | float) and not isinstance(v, bool) for v in times.values()):
        raise ParseError(path, "holds neither a numeric 'start_ms' nor 'exit_ms'")
    if isinstance(times["exit_ms"], int | float):
        return float(times["exit_ms"]) - 1000 * (result.run_time_s + MEMASLAP_EXIT_S)
    return float(times["start_ms"])


# memaslap's pause between the end of timing and its exit.
MEMASLAP_EXIT_S = 1.0

MIDDLEWARE_COLUMNS = [
    "design",
    "threads_net",
    "threads_shared",
    "threads_read",
    "threads_write",
    "read_threads_per_server",
    "write_threads_per_server",
    "pools",
]


def middleware_row(stats: MiddlewareStats) -> dict[str, object]:
    """Design and thread counts of one middleware (NaN where its summary does not say)."""
    threads = stats.threads()
    per_server = stats.summary.get("threads_per_server")
    per_server = per_server if isinstance(per_server, dict) else {}
    nan = float("nan")
    return {
        "design": stats.design,
        **{f"threads_{r}": threads.get(r, nan) for r in ("net", "shared", "read", "write")},
        "read_threads_per_server": per_server.get("read", nan),
        "write_threads_per_server": per_server.get("write", nan),
        "pools": len(stats.pool_info()) or nan,
    }


def with_empty_windows(windows: pd.DataFrame, queue: pd.DataFrame) -> pd.DataFrame:
    """The middleware writes a windows.csv row only for the request types a window served,
    but a queue.csv row for every window. A window without requests of a type the
    middleware serves is a window of throughput 0 for it, and counts as one in the mean
    over windows (else the mean is taken over the busy windows only)."""
    if windows.empty or queue.empty:
        return windows.copy()
    kinds = windows[["type", "keys"]].drop_duplicates()
    grid = (
        queue[["window", "start_ms", "end_ms"]].drop_duplicates("window").merge(kinds, how="cross")
    )
    seen = windows[["window", "type", "keys"]].assign(_seen=True)
    empty = grid.merge(seen, on=["window", "type", "keys"], how="left")
    empty = empty[empty["_seen"].isna()].drop(columns="_seen")
    if empty.empty:
        return windows.copy()
    zeros = {"count": 0, "throughput_ops": 0.0, "misses": 0, "errors": 0}
    zeros.update({c: 0 for c in ("keys_requested", "values_returned") if c in windows})
    empty = empty.assign(**{c: v for c, v in zeros.items() if c in windows.columns})
    out = pd.concat([windows, empty], ignore_index=True)
    return out.sort_values(["window", "type", "keys"], kind="stable").reset_index(drop=True)


def _middleware_frames(run: str, meta: dict, mw_dir: Path) -> tuple[pd.DataFrame, ...]:
    stats = read_stats_dir(mw_dir / "stats")
    win = with_empty_windows(stats.windows, stats.queue)
    win["response_us_std"] = _var_to_std(win["response_us_var"])
    frames = [win, stats.queue.copy(), stats.servers.copy(), stats.workers.copy()]
    frames += [stats.pools.copy(), stats.pool_requests.copy()]
    frames.append(pd.DataFrame([middleware_row(stats)], columns=MIDDLEWARE_COLUMNS))
    hist = stats.histogram.copy()
    for df in [*frames, hist]:
        df.insert(0, "source", mw_dir.name)
        df.insert(0, "side", "middleware")
        for k, v in reversed(meta.items()):
            df.insert(0, k, v)
    return (*frames, hist)


def load_run(path: str | Path) -> RunTables:
    """Reads one run directory. A failed run (status 'failed') still yields its manifest row
    and whatever outputs parse."""
    path = Path(path)
    manifest = read_manifest(path / "run.json")
    point = manifest["point"]
    assert isinstance(point, dict)
    meta = {
        "run": path.name,
        "point": str(point.get("name", path.name)),
        "repetition": int(point.get("repetition", 1)),
    }
    runs_row = {
        **meta,
        "status": manifest["status"],
        "error": manifest.get("error"),
        "started_at": manifest["started_at"],
        "finished_at": manifest["finished_at"],
        "duration_s": float(manifest["duration_s"]),  # type: ignore[arg-type]
        "host_kind": manifest["host_kind"],
        "clients_total": manifest["clients_total"],
        **{f"link_{k}_mbit": v for k, v in manifest["link_capacity_mbit"].items()},  # type: ignore[union-attr]
        **cpu_columns(manifest.get("cpu")),  # type: ignore[arg-type]
        **network_columns(manifest.get("network")),  # type: ignore[arg-type]
        **_flatten(point),
    }
    windows, totals, hists, queues, servers, workers = [], [], [], [], [], []
    pools, pool_requests, middlewares = [], [], []
    clients_dir = path / "clients"
    for client_dir in sorted(clients_dir.iterdir()) if clients_dir.is_dir() else []:
        if not client_dir.is_dir():
            continue
        if manifest["status"] == "failed" and not any(
            (client_dir / f).exists() for f in ("result.json", "memaslap.txt")
        ):
            continue
        win, tot, hist = _client_frames(path.name, meta, client_dir)
        windows.append(win)
        totals.append(tot)
        hists.append(hist)
    mw_root = path / "middlewares"
    for mw_dir in sorted(mw_root.iterdir()) if mw_root.is_dir() else []:
        if not mw_dir.is_dir():
            continue
        if manifest["status"] == "failed" and not (mw_dir / "stats" / "windows.csv").exists():
            continue
        win, queue, srv, wrk, pool, pool_req, mw, hist = _middleware_frames(path.name, meta, mw_dir)
        windows.append(win)
        queues.append(queue)
        servers.append(srv)
        workers.append(wrk)
        pools.append(pool)
        pool_requests.append(pool_req)
        middlewares.append(mw)
        hists.append(hist)
    if manifest["status"] == "ok" and not windows:
        raise ParseError(path, "status 'ok' but no client or middleware results")
    return RunTables(
        runs=pd.DataFrame([runs_row]),
        windows=_frame(windows, WINDOW_COLUMNS),
        client_totals=_frame(totals, None),
        queue=_frame(queues, None),
        servers=_frame(servers, None),
        workers=_frame(workers, None),
        histograms=_frame(
            [
                h[[*meta, "side", "source", "window", "type", "keys", "bucket_us", "count"]]
                for h in hists
            ],
            None,
        ),
        pools=_frame(pools, [*_ID_COLUMNS, *COLUMNS["pools.csv"]]),
        pool_requests=_frame(pool_requests, [*_ID_COLUMNS, *COLUMNS["pool_requests.csv"]]),
        middlewares=_frame(middlewares, [*_ID_COLUMNS, *MIDDLEWARE_COLUMNS]),
    )


def load_runs(paths: list[str | Path]) -> RunTables:
    """Reads several run directories into one set of tables."""
    if not paths:
        raise ValueError("no run directories given")
    return RunTables.concat([load_run(p) for p in paths])


_ID_COLUMNS = ["run", "point", "repetition", "side", "source"]


def _frame(parts: list[pd.DataFrame], columns: list[str] | None) -> pd.DataFrame:
    parts = [p for p in parts if not p.empty]
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns or [])
    if columns is not None:
        for col in columns:
            if col not in df.columns:
                df[col] = np.nan
        df = df[columns]
    return df


def _flatten(mapping: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        elif isinstance(value, list):
            out[name] = ",".join(map(str, value))
        else:
            out[name] = value
    return out
