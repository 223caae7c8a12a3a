"""memtier_benchmark's --json-out-file layout (also written by the built-in load generator).

Both generators record latencies in microseconds and write, per request type, the whole-run
HdrHistogram as base64 in `Percentile Latencies/Histogram log format/Compressed Histogram`;
that histogram is the client side's latency distribution. Latencies come only from the blocks
of the request types (`Sets` and `Gets`): memtier writes `Latency` and `Average Latency` of
`Totals` as 0.

SimpleMQ's client (middleware/simplemq) writes the same layout with a block per operation
(`Sends`, `Peeks`, `Pops`, `SenderPops`, `Queries`); their types take the operation names the
SimpleMQ middleware's statistics use, so both sides of a run name a type alike.

memtier's `Time-Serie` is keyed by seconds since the start. The built-in generator's windows
may be shorter (`--window-ms`); it then records their length in `mwlab/window_ms` and keys the
series by window index. Without that field a window is one second.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from hdrh.codec import HdrCookieException, HdrHistogramSettingsException, HdrLengthException
from hdrh.histogram import HdrHistogram

from analysis.parse.columns import PERCENTILES, WINDOW
from analysis.parse.errors import ParseError

CACHE_BLOCKS = {"Sets": "set", "Gets": "get"}
QUEUE_BLOCKS = {
    "Sends": "send",
    "Peeks": "peek_queue",
    "Pops": "pop_queue",
    "SenderPops": "pop_from_sender",
    "Queries": "query_queues",
}
_PCT = re.compile(r"^p(\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class MemtierResult:
    path: Path
    start_ms: int
    end_ms: int
    windows: pd.DataFrame  # window × type: see WINDOW_COLUMNS
    totals: pd.DataFrame  # one row per type
    histograms: pd.DataFrame = field(default_factory=pd.DataFrame)  # see HISTOGRAM_COLUMNS
    config: dict[str, object] = field(default_factory=dict)
    window_ms: int = 1000  # length of each window of `windows`


WINDOW_COLUMNS = [*WINDOW, "response_us_mean", "response_us_min", "response_us_max", *PERCENTILES]
# One row per recorded HdrHistogram bucket: bucket_us is the bucket's highest equivalent value,
# so a percentile taken over the rows is the one HdrHistogram (and memtier) reports.
HISTOGRAM_COLUMNS = ["type", "keys", "bucket_us", "count"]
_DECODE_ERRORS = (
    ValueError,  # also binascii.Error (bad base64)
    TypeError,
    RuntimeError,
    IndexError,
    zlib.error,
    HdrCookieException,
    HdrLengthException,
    HdrHistogramSettingsException,
)


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
    data = _result_json(path)
    stats = data["ALL STATS"]
    start, end = _runtime(path, stats)
    mwlab = data.get("mwlab") if isinstance(data.get("mwlab"), dict) else {}
    config = dict(mwlab.get("config") or data.get("configuration") or {})
    multiget = int(config.get("multi_key_get") or config.get("multi-key-get") or 0)
    window_ms = _window_ms(path, mwlab)

    types = QUEUE_BLOCKS if "Sends" in stats else CACHE_BLOCKS
    blocks = _blocks(path, stats, types)
    # Each window is full except the generator's last one, which ends at the finish time when
    # that falls inside it. memtier's Start and Finish times are averages over its connections
    # and can be a second off, so no earlier window is cut short by them.
    last_window = max((s for _, series in blocks.values() for s in series), default=0)
    clock = _Clock(start, end, window_ms, last_window)

    windows, totals, hist_rows = [], [], []
    for name, kind in types.items():
        block, series = blocks[name]
        keys = multiget if kind == "get" and multiget > 0 else 1
        rtype = "multiget" if keys > 1 else kind
        rows = _window_rows(path, name, series, clock, {"type": rtype, "keys": keys})
        windows += rows
        total = _total_row(path, name, block, sum(r["count"] for r in rows))
        totals.append({"type": rtype, "keys": keys, **total})
        for bucket_us, n in _histogram(path, name, block, total["count"]):
            hist_rows.append({"type": rtype, "keys": keys, "bucket_us": bucket_us, "count": n})
    return MemtierResult(
        path=path,
        start_ms=start,
        end_ms=end,
        windows=pd.DataFrame(windows, columns=WINDOW_COLUMNS),
        totals=pd.DataFrame(totals),
        histograms=pd.DataFrame(hist_rows, columns=HISTOGRAM_COLUMNS),
        config=config,
        window_ms=window_ms,
    )


def _result_json(path: Path) -> dict[str, Any]:
    """The result file's JSON object, which holds an 'ALL STATS' object."""
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
    return data


def _runtime(path: Path, stats: dict[str, Any]) -> tuple[int, int]:
    """The run's start and finish times (ms since the epoch)."""
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
    return start, end


def _blocks(
    path: Path, stats: dict[str, Any], types: dict[str, str]
) -> dict[str, tuple[dict[str, Any], dict[int, Any]]]:
    """Each request type's block and its per-window series, by window number."""
    blocks = {}
    for name in types:
        block = stats.get(name)
        if not isinstance(block, dict):
            raise ParseError(path, f"'ALL STATS' lacks {name!r}")
        series = block.get("Time-Serie")
        if not isinstance(series, dict):
            raise ParseError(path, f"'{name}' lacks the per-second 'Time-Serie'")
        blocks[name] = (block, {_window(path, name, k): v for k, v in series.items()})
    return blocks


@dataclass(frozen=True)
class _Clock:
    """Where the windows lie: the run's start and finish, the window length and the last
    window's number (the one window the finish time may cut short)."""

    start: int
    end: int
    window_ms: int
    last_window: int

    def bounds(self, win: int) -> tuple[int, int]:
        w_start = self.start + self.window_ms * win
        w_end = w_start + self.window_ms
        if win == self.last_window and w_start < self.end < w_end:
            w_end = self.end
        return w_start, w_end


def _window_rows(
    path: Path, name: str, series: dict[int, Any], clock: _Clock, labels: dict[str, Any]
) -> list[dict[str, Any]]:
    """One row per window of a request type's series, with `labels` (its type and keys)."""
    rows = []
    for win, entry in sorted(series.items()):
        if not isinstance(entry, dict) or "Count" not in entry:
            raise ParseError(path, f"'{name}/Time-Serie/{win}' lacks 'Count'")
        count = int(_num(path, f"{name}/Time-Serie/{win}/Count", entry["Count"]))
        w_start, w_end = clock.bounds(win)
        p = _percentiles(path, f"{name}/Time-Serie/{win}", entry)
        rows.append(
            {
                "window": win,
                "start_ms": w_start,
                "end_ms": w_end,
                **labels,
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
    return rows


def _total_row(path: Path, name: str, block: dict[str, Any], count_total: int) -> dict[str, Any]:
    """A request type's whole-run totals (its count, rates, mean and percentiles)."""
    for key in ("Ops/sec", "Hits/sec", "Misses/sec", "KB/sec"):
        if key not in block:
            raise ParseError(path, f"'{name}' lacks {key!r}")
    mean_ms = block.get("Average Latency", block.get("Latency"))
    if mean_ms is None:
        raise ParseError(path, f"'{name}' lacks 'Average Latency'")
    listed = block.get("Percentile Latencies") or {}
    pct = _percentiles(path, f"{name}/Percentile Latencies", listed)
    count = int(_num(path, f"{name}/Count", block.get("Count", count_total)))
    # An empty type carries placeholder latencies (memtier: a 7 µs percentile, mean 0).
    has = count > 0
    return {
        "count": count,
        "throughput_ops": _num(path, f"{name}/Ops/sec", block["Ops/sec"]),
        "hits_per_s": _num(path, f"{name}/Hits/sec", block["Hits/sec"]),
        "misses_per_s": _num(path, f"{name}/Misses/sec", block["Misses/sec"]),
        "kb_per_s": _num(path, f"{name}/KB/sec", block["KB/sec"]),
        "response_us_mean": (
            _num(path, f"{name}/Average Latency", mean_ms) * 1000 if has else math.nan
        ),
        **{f"response_us_p{_pct_name(q)}": v if has else math.nan for q, v in pct.items()},
    }


def _window_ms(path: Path, mwlab: dict) -> int:
    """The built-in generator's window length; memtier's (no `mwlab/window_ms`) is a second."""
    if "window_ms" not in mwlab:
        return 1000
    value = mwlab["window_ms"]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ParseError(path, f"mwlab/window_ms is not a positive integer: {value!r}")
    return value


def _histogram(path: Path, name: str, block: dict, count: int) -> list[tuple[int, int]]:
    """The recorded buckets of a type's compressed whole-run HdrHistogram (microseconds).
    An output without one (memtier before the histogram log format) has no rows."""
    pct = block.get("Percentile Latencies")
    log = pct.get("Histogram log format") if isinstance(pct, dict) else None
    if log is None:
        return []
    where = f"{name}/Percentile Latencies/Histogram log format/Compressed Histogram"
    encoded = log.get("Compressed Histogram") if isinstance(log, dict) else None
    if not isinstance(encoded, str) or not encoded:
        raise ParseError(path, f"{where} is missing or not a string")
    try:
        h = HdrHistogram.decode(encoded)
        rows = [
            (int(v.value_iterated_to), int(v.count_at_value_iterated_to))
            for v in h.get_recorded_iterator()
        ]
    except _DECODE_ERRORS as err:
        raise ParseError(path, f"{where} is not a compressed HdrHistogram: {err!r}") from None
    recorded = sum(n for _, n in rows)
    if recorded != count:
        raise ParseError(path, f"{where} holds {recorded} latencies, but '{name}/Count' is {count}")
    return rows


def _window(path: Path, name: str, key: str) -> int:
    try:
        return int(key)
    except ValueError:
        raise ParseError(path, f"'{name}/Time-Serie' has a non-integer window {key!r}") from None


def _lat(value: object, count: int) -> float:
    if count == 0 or not isinstance(value, (int, float)):
        return math.nan
    return float(value) * 1000


def _pct_name(q: float) -> str:
    return f"{q:g}".replace(".", "_")
