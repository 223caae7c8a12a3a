"""The middleware's statistics directory (windows.csv, queue.csv, servers.csv, workers.csv,
histogram.csv, summary.json, and per pool pools.csv and pool_requests.csv).

A pool is a queue and the threads that serve it: design 2018 has one (`shared`), design 2016
a `read` and a `write` pool per memcached server. Runs of middlewares without the per-pool
files (older runs) still parse; their pool tables are empty."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.parse.columns import PERCENTILES, WINDOW
from analysis.parse.errors import ParseError

COLUMNS = {
    "windows.csv": [
        *WINDOW,
        "net_us_mean",
        "net_us_var",
        "queue_us_mean",
        "queue_us_var",
        "worker_us_mean",
        "worker_us_var",
        "server_us_mean",
        "server_us_var",
        "response_us_mean",
        "response_us_var",
        *PERCENTILES,
        "keys_requested",
        "values_returned",
        "misses",
        "errors",
    ],
    "queue.csv": [
        "window",
        "start_ms",
        "end_ms",
        "arrivals",
        "arrival_rate_ops",
        "queue_length_mean",
        "queue_length_max",
        "workers_busy_mean",
    ],
    "servers.csv": ["window", "server", "requests", "keys", "errors"],
    "workers.csv": ["window", "worker", "requests", "busy_fraction"],
    "histogram.csv": ["window", "type", "keys", "bucket_us", "count"],
    "pools.csv": [
        "window",
        "start_ms",
        "end_ms",
        "pool",
        "server",
        "threads",
        "enqueued",
        "completed",
        "queue_length_mean",
        "queue_length_max",
        "busy_threads_mean",
        "busy_fraction",
        "in_flight_mean",
        "in_flight_max",
    ],
    "pool_requests.csv": [
        "window",
        "start_ms",
        "end_ms",
        "pool",
        "server",
        "type",
        "keys",
        "count",
        "part_keys",
        *[
            f"{metric}_us_{stat}"
            for metric in ("queue", "server", "response")
            for stat in ("mean", "var", "p50", "p90", "p99")
        ],
        "errors",
    ],
}
# Text columns per file (servers.csv names a server by its address, the pool files by index).
_TEXT = {
    "windows.csv": {"type"},
    "servers.csv": {"server"},
    "histogram.csv": {"type"},
    "pools.csv": {"pool"},
    "pool_requests.csv": {"pool", "type"},
}
_OPTIONAL = {"histogram.csv", "servers.csv", "workers.csv", "pools.csv", "pool_requests.csv"}
# The memcached middlewares' request types, and SimpleMQ's operations (protocol/Op.java).
TYPES = {"set", "get", "multiget"} | {
    "create_client",
    "delete_client",
    "create_queue",
    "delete_queue",
    "send",
    "peek_queue",
    "pop_queue",
    "pop_from_sender",
    "query_queues",
}
POOLS = {"shared", "read", "write"}
DESIGNS = {"2018", "2016"}
POOL_INFO_COLUMNS = ["pool", "server", "address", "threads", "first_worker"]


@dataclass(frozen=True)
class MiddlewareStats:
    path: Path
    windows: pd.DataFrame
    queue: pd.DataFrame
    servers: pd.DataFrame
    workers: pd.DataFrame
    histogram: pd.DataFrame
    summary: dict[str, object] = field(default_factory=dict)
    pools: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COLUMNS["pools.csv"]))
    pool_requests: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=COLUMNS["pool_requests.csv"])
    )

    @property
    def design(self) -> str:
        """The middleware's design; a summary without the key predates design 2016."""
        return str(self.summary.get("design", "2018"))

    def threads(self) -> dict[str, int]:
        """Threads by role (`net`, `shared` or `read` and `write`), from summary.json; empty
        when the summary does not say."""
        raw = self.summary.get("threads")
        return {str(k): int(v) for k, v in raw.items()} if isinstance(raw, dict) else {}

    def pool_info(self) -> pd.DataFrame:
        """summary.json's `pools`: one row per pool with its server address, thread count
        and first worker number (columns POOL_INFO_COLUMNS)."""
        raw = self.summary.get("pools")
        rows = raw if isinstance(raw, list) else []
        return pd.DataFrame(rows, columns=POOL_INFO_COLUMNS)


def read_csv_checked(path: Path, columns: list[str], text: set[str] | None = None) -> pd.DataFrame:
    """A CSV whose header must be exactly `columns`; numeric columns must parse, the `text`
    columns (default: the file's own, by name) must not be empty."""
    text = _TEXT.get(path.name, set()) if text is None else text
    try:
        df = pd.read_csv(path, dtype={c: str for c in text & set(columns)})
    except FileNotFoundError:
        raise ParseError(path, "missing") from None
    except pd.errors.EmptyDataError:
        raise ParseError(path, "empty file (no header)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ParseError(path, f"malformed CSV: {err}") from None
    if list(df.columns) != columns:
        missing = [c for c in columns if c not in df.columns]
        extra = [c for c in df.columns if c not in columns]
        raise ParseError(
            path, f"unexpected header: missing {missing}, unexpected {extra} (order matters)"
        )
    with path.open(newline="") as fh:
        for no, row in enumerate(csv.reader(fh), 1):
            if row and len(row) != len(columns):
                raise ParseError(
                    path, f"line {no}: {len(row)} fields, expected {len(columns)} (truncated row?)"
                )
    for col in columns:
        if col in text:
            if df[col].isna().any():
                raise ParseError(path, f"column {col!r} has empty values")
            continue
        converted = pd.to_numeric(df[col], errors="coerce")
        bad = converted.isna() & df[col].notna()
        if bad.any():
            row = int(bad.idxmax()) + 2
            raise ParseError(
                path, f"line {row}: column {col!r} is not a number: {df[col][bad].iloc[0]!r}"
            )
        if df[col].isna().any() and col in ("window", "count", "start_ms", "end_ms"):
            row = int(df[col].isna().idxmax()) + 2
            raise ParseError(path, f"line {row}: column {col!r} is empty (truncated row?)")
        df[col] = converted
    return df


def read_stats_dir(path: str | Path) -> MiddlewareStats:
    """Reads a statistics directory; windows.csv and queue.csv are required."""
    path = Path(path)
    if not path.is_dir():
        raise ParseError(path, "statistics directory missing")
    frames = {}
    for name, columns in COLUMNS.items():
        file = path / name
        if name in _OPTIONAL and not file.exists():
            frames[name] = pd.DataFrame(columns=columns)
            continue
        frames[name] = read_csv_checked(file, columns)
    for name in ("windows.csv", "histogram.csv", "pool_requests.csv"):
        unknown = set(frames[name]["type"]) - TYPES
        if unknown:
            raise ParseError(path / name, f"unknown request types {sorted(unknown)}")
    for name in ("pools.csv", "pool_requests.csv"):
        unknown = set(frames[name]["pool"]) - POOLS
        if unknown:
            raise ParseError(path / name, f"unknown pools {sorted(unknown)}")
    summary: dict[str, object] = {}
    summary_file = path / "summary.json"
    if summary_file.exists():
        try:
            summary = json.loads(summary_file.read_text())
        except json.JSONDecodeError as err:
            raise ParseError(summary_file, f"not valid JSON (truncated?): {err}") from None
        if not isinstance(summary, dict):
            raise ParseError(summary_file, "expected a JSON object")
        _check_summary(summary_file, summary)
    return MiddlewareStats(
        path=path,
        windows=frames["windows.csv"],
        queue=frames["queue.csv"],
        servers=frames["servers.csv"],
        workers=frames["workers.csv"],
        histogram=frames["histogram.csv"],
        summary=summary,
        pools=frames["pools.csv"],
        pool_requests=frames["pool_requests.csv"],
    )


def _check_summary(path: Path, summary: dict[str, object]) -> None:
    """The keys the analysis relies on, where present, have the contract's shape."""
    design = summary.get("design")
    if design is not None and str(design) not in DESIGNS:
        raise ParseError(path, f"design must be one of {sorted(DESIGNS)}, got {design!r}")
    threads = summary.get("threads")
    if threads is not None and not (
        isinstance(threads, dict)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in threads.values())
    ):
        raise ParseError(path, f"threads must map roles to thread counts, got {threads!r}")
    pools = summary.get("pools")
    if pools is None:
        return
    if not isinstance(pools, list):
        raise ParseError(path, f"pools must be a list, got {type(pools).__name__}")
    for i, pool in enumerate(pools):
        if not isinstance(pool, dict) or pool.get("pool") not in POOLS:
            raise ParseError(path, f"pools[{i}]: expected a pool of {sorted(POOLS)}: {pool!r}")
        missing = [k for k in POOL_INFO_COLUMNS if k not in pool]
        if missing:
            raise ParseError(path, f"pools[{i}] lacks {missing}")
