"""memtier_benchmark's --json-out-file layout (also written by the built-in load generator)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.parse.errors import ParseError

_TYPES = {"Sets": "set", "Gets": "get"}
_PCT = re.compile(r"^p(\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class MemtierResult:
    path: Path
    start_ms: int
    end_ms: int
    windows: pd.DataFrame  # second × type: see WINDOW_COLUMNS
    totals: pd.DataFrame  # one row per type
    histograms: pd.DataFrame = field(default_factory=pd.DataFrame)  # type, value_us, count
    config: dict[str, object] = field(default_factory=dict)


WINDOW_COLUMNS = [
    "window",
    "start_ms",
    "end_ms",
    "type",
    "keys",
    "count",
    "throughput_ops",
    "response_us_mean",
    "response_us_min",
    "response_us_max",
    "response_us_p50",
    "response_us_p90",
    "response_us_p99",
]


def _num(path: Path, where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(path, f"{where} is not a number: {value!r}")
    return float(value)


def _percentiles(path: Path, where: str, block: dict) -> dict[float, float]:
    out = {}
    for key, value in block.items():
        m = _PCT.match(key)
        if m:
            out[float(m.group(1))] = _num(path, f"{where}/{key}", value) * 1000
    return out


def read_memtier(path: str | Path) -> MemtierResult:
    """Reads one result.json; latencies become microseconds."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ParseError(path, f"cannot read: {err.strerror}") from None
    if not text.strip():
        raise ParseError(path, "empty file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseError(path, f"not valid JSON (truncated?): {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("ALL STATS"), dict):
        raise ParseError(path, "no 'ALL STATS' object: not a memtier JSON result")
    stats = data["ALL STATS"]
    runtime = stats.get("Runtime")
    if not isinstance(runtime, dict):
        raise ParseError(path, "'ALL STATS' lacks 'Runtime'")
    try:
        start = int(_num(path, "Runtime/Start time", runtime["Start time"]))
        end = int(_num(path, "Runtime/Finish time", runtime["Finish time"]))
    except KeyError as err:
        raise ParseError(path, f"'Runtime' lacks {err.args[0]!r}") from None
    if end < start:
        raise ParseError(path, f"finish time {end} before start time {start}")

    mwlab = data.get("mwlab") if isinstance(data.get("mwlab"), dict) else {}
    config = dict(mwlab.get("config") or data.get("configuration") or {})
    multiget = int(config.get("multi_key_get") or config.get("multi-key-get") or 0)

    windows, totals = [], []
    for name, kind in _TYPES.items():
        block = stats.get(name)
        if not isinstance(block, dict):
            raise ParseError(path, f"'ALL STATS' lacks {name!r}")
        keys = multiget if kind == "get" and multiget > 0 else 1
        rtype = "multiget" if keys > 1 else kind
        for key in ("Ops/sec", "Hits/sec", "Misses/sec", "KB/sec"):
            if key not in block:
                raise ParseError(path, f"'{name}' lacks {key!r}")
        mean_ms = block.get("Average Latency", block.get("Latency"))
        if mean_ms is None:
            raise ParseError(path, f"'{name}' lacks 'Average Latency'")
        pct = _percentiles(
            path, f"{name}/Percentile Latencies", block.get("Percentile Latencies") or {}
        )
        series = block.get("Time-Serie")
        if not isinstance(series, dict):
            raise ParseError(path, f"'{name}' lacks the per-second 'Time-Serie'")
        count_total = 0
        for second, entry in sorted(series.items(), key=lambda kv: _second(path, name, kv[0])):
            sec = _second(path, name, second)
            if not isinstance(entry, dict) or "Count" not in entry:
                raise ParseError(path, f"'{name}/Time-Serie/{second}' lacks 'Count'")
            count = int(_num(path, f"{name}/Time-Serie/{second}/Count", entry["Count"]))
            count_total += count
            w_start = start + 1000 * sec
            w_end = min(w_start + 1000, max(end, w_start + 1))
            p = _percentiles(path, f"{name}/Time-Serie/{second}", entry)
            windows.append(
                {
                    "window": sec,
                    "start_ms": w_start,
                    "end_ms": w_end,
                    "type": rtype,
                    "keys": keys,
                    "count": count,
                    "throughput_ops": count / ((w_end - w_start) / 1000),
                    "response_us_mean": _lat(entry.get("Average Latency"), count),
                    "response_us_min": _lat(entry.get("Min Latency"), count),
                    "response_us_max": _lat(entry.get("Max Latency"), count),
                    "response_us_p50": p.get(50.0, math.nan) if count else math.nan,
                    "response_us_p90": p.get(90.0, math.nan) if count else math.nan,
                    "response_us_p99": p.get(99.0, math.nan) if count else math.nan,
                }
            )
        totals.append(
            {
                "type": rtype,
                "keys": keys,
                "count": int(block.get("Count", count_total)),
                "throughput_ops": _num(path, f"{name}/Ops/sec", block["Ops/sec"]),
                "hits_per_s": _num(path, f"{name}/Hits/sec", block["Hits/sec"]),
                "misses_per_s": _num(path, f"{name}/Misses/sec", block["Misses/sec"]),
                "kb_per_s": _num(path, f"{name}/KB/sec", block["KB/sec"]),
                "response_us_mean": _num(path, f"{name}/Average Latency", mean_ms) * 1000,
                **{f"response_us_p{_pct_name(q)}": v for q, v in pct.items()},
            }
        )
    hist_rows = []
    for kind, counts in ((mwlab.get("histogram_us") or {}) if mwlab else {}).items():
        rtype = {"sets": "set", "gets": "multiget" if multiget > 1 else "get"}.get(kind, kind)
        if not isinstance(counts, dict):
            raise ParseError(path, f"mwlab/histogram_us/{kind} is not an object")
        for value, count in counts.items():
            try:
                hist_rows.append({"type": rtype, "value_us": float(value), "count": int(count)})
            except (TypeError, ValueError):
                raise ParseError(path, f"mwlab/histogram_us/{kind}: bad entry {value!r}") from None
    return MemtierResult(
        path=path,
        start_ms=start,
        end_ms=end,
        windows=pd.DataFrame(windows, columns=WINDOW_COLUMNS),
        totals=pd.DataFrame(totals),
        histograms=pd.DataFrame(hist_rows, columns=["type", "value_us", "count"]),
        config=config,
    )


def _second(path: Path, name: str, key: str) -> int:
    try:
        return int(key)
    except ValueError:
        raise ParseError(path, f"'{name}/Time-Serie' has a non-integer second {key!r}") from None


def _lat(value: object, count: int) -> float:
    if count == 0 or not isinstance(value, (int, float)):
        return math.nan
    return float(value) * 1000


def _pct_name(q: float) -> str:
    return f"{q:g}".replace(".", "_")
