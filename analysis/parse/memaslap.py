"""memaslap / memcaslap text output (libmemcached's load generator)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.parse.errors import ParseError

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
        lines = path.read_text(errors="replace").replace("\x1b[1;1H\x1b[2J", "\n").splitlines()
    except OSError as err:
        raise ParseError(path, f"cannot read: {err.strerror}") from None
    windows: list[dict] = []
    totals: dict[str, dict] = {}
    hist: list[dict] = []
    section: str | None = None
    final: str | None = None
    window = -1
    run = None
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if m := _SECTION.match(line):
            section, final = m.group(1).lower(), None
            if section == "get":
                window += 1
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
    win = pd.DataFrame(windows)
    if not win.empty:
        win["keys"] = 1
        win["count"] = win["ops"].astype(int)
        win["throughput_ops"] = win["ops"] / win["time_s"].where(win["time_s"] > 0, math.nan)
        win = win.rename(
            columns={
                "avg_us": "response_us_mean",
                "std_us": "response_us_std",
                "min_us": "response_us_min",
                "max_us": "response_us_max",
                "get_miss": "misses",
            }
        )
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
