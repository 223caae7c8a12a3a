"""The stability check applied to runs: the criteria (common.stability) over each run's
client throughput per window, read from run directories or tidy tables."""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import parse
from analysis.aggregate import trim_to_clients
from common.stability import MIN_WINDOWS, Stability, assess

# A window shorter than this share of the run's typical window is partial (e.g. the last
# one of a run without cool-down): its rate is too noisy to count as a window.
_FULL_WINDOW = 0.9


def window_series(tidy: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each run's client throughput per complete window, request types and sources summed,
    in window order. Takes tidy windows (already trimmed); rows of type `all` are used only
    for runs that have no per-type rows. A window that lacks one of the run's sources, or
    is partial, is left out: its sum would not be the run's throughput. Where the clients
    report fewer than MIN_WINDOWS windows (memaslap prints once a second) and the
    middlewares report more over the same interval, the middlewares' windows stand in: in
    a closed loop they see the same requests."""
    if tidy.empty:
        return {}
    if "side" not in tidy.columns:
        return _side_series(tidy)
    out = _side_series(tidy[tidy["side"] == "client"])
    short = [r for r, x in out.items() if len(x) < MIN_WINDOWS]
    if short:
        mw = _side_series(tidy[(tidy["side"] == "middleware") & tidy["run"].isin(short)])
        out.update({r: x for r, x in mw.items() if len(x) > len(out[r])})
    return out


def _side_series(c: pd.DataFrame) -> dict[str, np.ndarray]:
    if c.empty:
        return {}
    typed = c[c["type"] != "all"]
    c = pd.concat([typed, c[(c["type"] == "all") & ~c["run"].isin(typed["run"])]])
    if "sources" not in c.columns:
        c = c.assign(sources=1)
    w = (
        c.groupby(["run", "window"], sort=True)
        .agg(
            throughput_ops=("throughput_ops", "sum"),
            sources=("sources", "max"),
            start_ms=("start_ms", "min"),
            end_ms=("end_ms", "max"),
        )
        .reset_index()
    )
    w["sources"] = w["sources"].fillna(1)
    complete = w["sources"] >= w.groupby("run")["sources"].transform("max")
    length = w["end_ms"] - w["start_ms"]
    typical = length.groupby(w["run"]).transform("median")
    complete &= ~(length < _FULL_WINDOW * typical)  # NaN lengths (memaslap) count as full
    w = w[complete]
    return {str(run): g["throughput_ops"].to_numpy(float) for run, g in w.groupby("run")}


def stability_table(tidy: pd.DataFrame, **criteria: float) -> pd.DataFrame:
    """One row per run: `run` and the fields of `Stability` (see `assess` for `criteria`)."""
    columns = ["run", *(f.name for f in fields(Stability))]
    rows = [
        {"run": run, **asdict(assess(x, **criteria))}  # type: ignore[arg-type]
        for run, x in window_series(tidy).items()
    ]
    return pd.DataFrame(rows, columns=columns)


def check_run_dir(run_dir: Path, warmup_s: float, cooldown_s: float) -> Stability:
    """The check on one run directory written by `mwlab run` (memtier-format result.json or
    memaslap.txt clients), after cutting `warmup_s` and `cooldown_s`."""
    tables = parse.load_run(run_dir)
    windows = tables.windows
    if windows.empty or not (windows["side"] == "client").any():
        return assess([])
    series = window_series(parse.tidy(trim_to_clients(windows, warmup_s, cooldown_s)))
    return assess(next(iter(series.values()), np.array([])))


def stable_runs(runs: pd.DataFrame, windows: pd.DataFrame) -> pd.DataFrame:
    """The rows of `runs` (any table with a `run` column) that model fits may use: runs whose
    measured `windows` pass the check. Failed and unstable runs are excluded; the
    validation appendix lists them."""
    table = stability_table(windows)
    ok = set(table.loc[table["stable"], "run"])
    if "status" in runs.columns:
        ok &= set(runs.loc[runs["status"] == "ok", "run"])
    return runs[runs["run"].isin(ok)]
