"""memaslap / memcaslap text output (libmemcached's load generator)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.parse.errors import ParseError

# memaslap clears the screen before each periodic print; the prints are its windows.
_CLEAR = "\x1b[1;1H\x1b[2J"
_PRINT = "<print>"
_SECTION = re.compile(r"^(Get|Set|Total) Statistics$")
_ROW = re.compile(r"^(Period|Global)\s+(.*)$")
_FINAL = re.compile(r"^(Get|Set|Total) Statistics \((\d+) events\)$")
_RUN = re.compile(r"^Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+) Net_rate: ([\d.]+)M/s")
_DIST = re.compile(r"^\s*(\d+):\s+([\d\s]+)$")
_FIELDS = [
    "time_s",
    "ops",
    "tps",
    "net_mb_s",
    "get_miss",
    "min_us",
    "max_us",
    "avg_us",
    "std_us",
    "geo_us",
]


@dataclass(frozen=True)
class MemaslapResult:
    """`windows` has `start_s` and `end_s`: seconds from memaslap's start of timing (after
    its connections are set up, and in a read-only run after it has pre-set its keys) to
    the window's start and end. Window w ends at the w-th print: memaslap prints every
    `--stat_freq` seconds, but skips a print while a connection is down, and then the next
    window is longer (its `Period` row still says `--stat_freq`, the `Global` row the time
    since the start). A type that memaslap has not yet seen is not printed: count 0."""

    path: Path
    windows: pd.DataFrame  # window × type (get, set): period statistics
    totals: pd.DataFrame  # one row per type (get, set, total): whole run
    histograms: pd.DataFrame  # type, bucket_us (power of two), count
    run_time_s: float
    ops: int
    tps: float


def read_memaslap(path: str | Path) -> MemaslapResult:
    """Reads the statistics memaslap prints with -S (periodic) and at exit."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as err:
        raise ParseError(path, f"cannot read: {err.strerror}") from None
    lines = text.replace(_CLEAR, f"\n{_PRINT}\n").splitlines()
    windows: list[dict] = []
    ends: dict[int, float] = {}  # window -> its Global time, seconds since the start
    totals: dict[str, dict] = {}
    hist: list[dict] = []
    section: str | None = None
    final: str | None = None
    window = -1
    run = None
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if line == _PRINT:
            window, section, final = window + 1, None, None
            continue
        if m := _SECTION.match(line):
            section, final = m.group(1).lower(), None
            continue
        if m := _FINAL.match(line):
            final, section = m.group(1).lower(), None
            totals[final] = {"type": final, "count": int(m.group(2))}
            continue
        if m := _RUN.match(line):
            run = (float(m.group(1)), int(m.group(2)), float(m.group(3)))
            continue
        if section and (m := _ROW.match(line)):
            values = m.group(2).split()
            if len(values) != len(_FIELDS):
                raise ParseError(path, f"line {no}: expected {len(_FIELDS)} fields: {raw!r}")
            try:
                row = dict(zip(_FIELDS, map(float, values), strict=True))
            except ValueError:
                raise ParseError(path, f"line {no}: non-numeric statistics: {raw!r}") from None
            if m.group(1) == "Period" and section != "total":
                windows.append({"window": window, "type": section, **row})
            elif m.group(1) == "Global":
                ends[window] = row["time_s"]
            continue
        if final:
            if line.startswith(("Min:", "Max:", "Avg:", "Geo:", "Std:")):
                key, _, value = line.partition(":")
                totals[final][f"{key.lower()}_us"] = _float(path, no, value)
            elif m := _DIST.match(raw):
                base = int(m.group(1))
                for offset, count in enumerate(m.group(2).split()):
                    if int(count):
                        hist.append(
                            {"type": final, "bucket_us": 2 ** (base + offset), "count": int(count)}
                        )
    if run is None:
        raise ParseError(path, "truncated: no final 'Run time: ... TPS: ...' line")
    if not windows and not totals:
        raise ParseError(path, "no statistics found: not memaslap output")
    win = _windows(pd.DataFrame(windows), ends)
    return MemaslapResult(
        path=path,
        windows=win,
        totals=pd.DataFrame(list(totals.values())),
        histograms=pd.DataFrame(hist, columns=["type", "bucket_us", "count"]),
        run_time_s=run[0],
        ops=run[1],
        tps=run[2],
    )


def _float(path: Path, no: int, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ParseError(path, f"line {no}: not a number: {value.strip()!r}") from None


def _windows(periods: pd.DataFrame, ends: dict[int, float]) -> pd.DataFrame:
    """One row per print × type, zero rows for a type not printed yet, and each window's
    span from the `Global` times (throughput over the span, not over `--stat_freq`)."""
    if periods.empty:
        return periods
    kinds = sorted(periods["type"].unique())
    grid = pd.MultiIndex.from_product([sorted(ends), kinds], names=["window", "type"])
    win = periods.set_index(["window", "type"]).reindex(grid).reset_index()
    zero = win["ops"].isna()
    win.loc[zero, ["ops", "tps", "get_miss"]] = 0.0
    # memaslap prints 0 (and a minimum of -1) for the times of an empty period.
    win.loc[win["ops"] == 0, _FIELDS[5:]] = math.nan
    end = win["window"].map(ends)
    start = win["window"].map(_starts(ends))
    win["time_s"] = end - start
    win["start_s"], win["end_s"] = start, end
    win["keys"] = 1
    win["count"] = win["ops"].astype(int)
    win["throughput_ops"] = win["ops"] / win["time_s"].where(win["time_s"] > 0, math.nan)
    return win.rename(
        columns={
            "avg_us": "response_us_mean",
            "std_us": "response_us_std",
            "min_us": "response_us_min",
            "max_us": "response_us_max",
            "get_miss": "misses",
        }
    )


def _starts(ends: dict[int, float]) -> dict[int, float]:
    """Each window starts where the one before ended, the first at memaslap's start."""
    out, previous = {}, 0.0
    for w in sorted(ends):
        out[w], previous = previous, ends[w]
    return out
