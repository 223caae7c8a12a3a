"""One family's runs as tidy tables: the stable windows (warm-up and cool-down cut), one
summary row per run × side × request type (plus `type = all`, every request type together),
and per-point statistics across repetitions, each row carrying the family's factor levels as
`level_<factor>`; the middleware's per-pool statistics of the stable windows, and its design
and thread counts. Runs keep their manifest row (with `reruns`, the further measurements of
the point) whatever their status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from analysis.aggregate import (
    TIMED_METRICS,
    aggregate_points,
    all_types,
    per_source_totals,
    summarise_runs,
    trim_to_clients,
)
from analysis.parse import RunTables, counters, load_run, read_manifest, tidy
from analysis.parse.cpu import CPU_COLUMNS
from analysis.scale_model import add_study_columns
from analysis.stability import stability_table

# `throughput_cv` of a run is the largest CV among its sources (each over its own windows).
METRICS = ("throughput_ops", *TIMED_METRICS)

# The numeric CPU columns of a run (not `cpu_accounting`).
CPU_METRICS = tuple(c for c in CPU_COLUMNS if c != "cpu_accounting")


def _load(run_dir: Path, key: str) -> RunTables:
    """One run, identified by its path below runs/ (family/point/repN)."""
    tables = load_run(run_dir)
    point = key.split("/")[1]
    # Further measurements of the point after a failed or unstable attempt (testbed/series.py).
    attempts = (read_manifest(run_dir / "run.json").get("series") or {}).get("attempts") or []
    tables.runs["reruns"] = max(len(attempts) - 1, 0)  # type: ignore[arg-type]
    for frame in (tables.runs, tables.windows, tables.client_totals, tables.queue,
                  tables.servers, tables.workers, tables.histograms, tables.pools,
                  tables.pool_requests, tables.middlewares):  # fmt: skip
        if "run" in frame.columns:
            frame["run"] = key
            frame["point"] = point
    return tables


def averaged_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of `runs` (a row per run and side, with `point`, `status` and `stable`) whose
    runs a point's statistics average: the completed, stable runs, or all completed runs of a
    point none of whose runs is stable. Every table and model of a point uses these."""
    ok = runs[runs["status"] == "ok"]
    if ok.empty:
        return ok
    return ok[ok["stable"] | ~ok.groupby("point")["stable"].transform("any")]


def build(
    run_keys: list[str], results: Path, settings: dict[str, Any], levels: dict[str, dict]
) -> dict[str, pd.DataFrame]:
    tables = RunTables.concat([_load(results / "runs" / key, key) for key in run_keys])
    trimmed = trim_to_clients(tables.windows, settings["warmup_s"], settings["cooldown_s"])
    stable = tidy(trimmed)
    stable = pd.concat([stable, all_types(stable)], ignore_index=True)
    runs = tables.runs.copy()
    level_frame = pd.DataFrame(
        [{"run": key, **{f"level_{k}": v for k, v in levels[key].items()}} for key in run_keys]
    )
    runs = runs.merge(level_frame, on="run", how="left")
    summary = summarise_runs(stable)
    if not summary.empty:
        # Run-level throughput, response time and stability from each source's own windows.
        exact = per_source_totals(trimmed)
        summary = summary.drop(columns=["throughput_ops", "response_us_mean", "throughput_cv"])
        summary = summary.merge(exact, on=["run", "side", "type", "keys"], how="left")
        summary = summary.merge(runs.drop(columns=["point", "repetition"]), on="run", how="left")
    if not summary.empty:
        verdicts = stability_table(stable)[["run", "stable", "reason"]]
        summary = summary.merge(verdicts.rename(columns={"reason": "stability"}), on="run",
                                how="left")  # fmt: skip
        summary["stable"] = summary["stable"].fillna(False).astype(bool)
    # Failed runs stay in `runs` and `manifests` (validation flags them). Points use the
    # completed, stable runs; a point none of whose runs is stable keeps its completed runs
    # and is marked `unstable`.
    ok = summary[summary["status"] == "ok"] if not summary.empty else summary
    unstable: set[str] = set()
    if not ok.empty:
        unstable = set(ok.loc[~ok.groupby("point")["stable"].transform("any"), "point"])
        ok = averaged_runs(ok)
    by = ("point", "side", "type", "keys")
    if ok.empty:
        points = pd.DataFrame(columns=list(by))
    else:
        metrics = [m for m in METRICS if m in ok.columns]
        # Per-role CPU of the runs: points get their mean over repetitions (`<column>_mean`).
        metrics += [c for c in CPU_METRICS if c in ok.columns]
        points = aggregate_points(ok, by=by, metrics=metrics)
    points["unstable"] = points["point"].isin(unstable)
    point_info = runs.drop_duplicates("point").drop(
        columns=["run", "repetition", "status", "error", "started_at", "finished_at"]
    )
    # One repetition's CPU would stand for the point's; the means above do.
    point_info = point_info.drop(columns=[c for c in CPU_COLUMNS if c in point_info.columns])
    points = points.merge(point_info, on="point", how="left")
    hist = tables.histograms
    if not hist.empty:
        hist = hist[(hist["window"] < 0) | hist["run"].isin(stable["run"].unique())]
    # Per-pool statistics of the stable middleware windows only, like the windows.
    kept = trimmed.loc[trimmed["side"] == "middleware", ["run", "source", "window"]]
    kept = kept.drop_duplicates()
    # `scale` per run and point, and throughput and response time in the study's time.
    if not summary.empty:
        summary = add_study_columns(summary)
    if not points.empty:
        points = add_study_columns(points)
    # The database's counters of each run (SimpleMQ); no rows, same columns, for memcached.
    repetitions = dict(zip(tables.runs["run"], tables.runs["repetition"], strict=True))
    db = counters.table(
        (key, key.split("/")[1], repetitions.get(key), results / "runs" / key) for key in run_keys
    )
    return {
        "windows": stable,
        "runs": summary if not summary.empty else runs,
        "manifests": runs,
        "points": points,
        "histograms": hist,
        "queue": tables.queue,
        "pools": tables.pools.merge(kept, on=["run", "source", "window"]),
        "pool_requests": tables.pool_requests.merge(kept, on=["run", "source", "window"]),
        "middlewares": tables.middlewares,
        "db_counters": db,
    }
