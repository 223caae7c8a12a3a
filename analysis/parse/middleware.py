"""The middleware's statistics directory (windows.csv, queue.csv, servers.csv, workers.csv,
histogram.csv, summary.json)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.parse.errors import ParseError

COLUMNS = {
    "windows.csv": [
        "window",
        "start_ms",
        "end_ms",
        "type",
        "keys",
        "count",
        "throughput_ops",
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
        "response_us_p50",
        "response_us_p90",
        "response_us_p99",
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
}
_TEXT = {"type", "server"}
_OPTIONAL = {"histogram.csv", "servers.csv", "workers.csv"}
TYPES = {"set", "get", "multiget"}


@dataclass(frozen=True)
class MiddlewareStats:
    path: Path
    windows: pd.DataFrame
    queue: pd.DataFrame
    servers: pd.DataFrame
    workers: pd.DataFrame
    histogram: pd.DataFrame
    summary: dict[str, object] = field(default_factory=dict)


def read_csv_checked(path: Path, columns: list[str]) -> pd.DataFrame:
    """A CSV whose header must be exactly `columns`; numeric columns must parse."""
    try:
        df = pd.read_csv(path, dtype={c: str for c in _TEXT & set(columns)})
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
        if col in _TEXT:
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
    windows = frames["windows.csv"]
    unknown = set(windows["type"]) - TYPES
    if unknown:
        raise ParseError(path / "windows.csv", f"unknown request types {sorted(unknown)}")
    summary: dict[str, object] = {}
    summary_file = path / "summary.json"
    if summary_file.exists():
        try:
            summary = json.loads(summary_file.read_text())
        except json.JSONDecodeError as err:
            raise ParseError(summary_file, f"not valid JSON (truncated?): {err}") from None
        if not isinstance(summary, dict):
            raise ParseError(summary_file, "expected a JSON object")
    return MiddlewareStats(
        path=path,
        windows=windows,
        queue=frames["queue.csv"],
        servers=frames["servers.csv"],
        workers=frames["workers.csv"],
        histogram=frames["histogram.csv"],
        summary=summary,
    )
