"""Where the measurement time went: per run, per family and per stage.

A run measured on its own has its own job (a Snakemake benchmark file); the points of a
series (testbed/series.py) share one run of their topology, whose wall time (the series'
own run.json, else its job's benchmark) is split evenly over them. Each
run.json records its stage times (`stage_s`); in a series, the stages shared by its points
are split the same way, so the stage times of every point add up to its share of the job.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.parse.cpu import cpu_columns
from common.stages import TIMED_STAGES


def job_seconds(benchmark: Path) -> float:
    """Wall time Snakemake recorded for a job (column `s` of its last row); NaN without one."""
    try:
        with benchmark.open() as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    except OSError:
        return float("nan")
    return float(rows[-1]["s"]) if rows else float("nan")


def series_key(directory: Path, results: Path) -> str:
    """A series' folder relative to `results/series`. A run records the folder's absolute
    path; results copied or archived elsewhere keep the part after their `series` folder."""
    try:
        return str(directory.relative_to((results / "series").resolve()))
    except ValueError:
        parts = directory.parts
        if "series" not in parts:
            raise ValueError(f"{directory} is not a series folder") from None
        last = len(parts) - 1 - parts[::-1].index("series")
        return str(Path(*parts[last + 1 :]))


def earlier_attempts(results: Path, run: Path, status: str) -> list[dict]:
    """The run.json of each earlier attempt of a run measured on its own, in order: the
    attempts that failed or were measured again are kept in `failures/<run>/attempt-<n>/`
    (workflows/scripts/run_point.py); a failed run that stands left a copy of itself there
    too, which is not an earlier attempt."""
    found = []
    for d in (results / "failures" / run).glob("attempt-*"):
        n = d.name.removeprefix("attempt-")
        if n.isdigit() and (d / "run.json").is_file():
            found.append((int(n), json.loads((d / "run.json").read_text())))
    found.sort(key=lambda x: x[0])
    if status != "ok" and found:
        found.pop()
    return [doc for _, doc in found]


def _run_seconds(doc: dict) -> float:
    """A run's wall time from its own clock (start to finish); NaN without one."""
    try:
        span = pd.Timestamp(doc["finished_at"]) - pd.Timestamp(doc["started_at"])
    except (KeyError, TypeError, ValueError):
        return math.nan
    return span.total_seconds()


def run_times(results: Path, manifests: Iterable[Path]) -> pd.DataFrame:
    """One row per run: family, status, series, attempts (a run measured on its own counts
    its earlier attempts, and their time), measured seconds, its share of the job's wall
    time, and its stage times (`stage_<name>` columns)."""
    rows = []
    series_points: dict[str, int] = {}
    loaded = []
    for manifest in manifests:
        data = json.loads(manifest.read_text())
        relative = manifest.parent.relative_to(results / "runs")
        series = data.get("series")
        key = series_key(Path(series["dir"]), results) if series else None
        if key is not None:
            series_points[key] = series_points.get(key, 0) + 1
        loaded.append((relative, data, key))
    for relative, data, key in loaded:
        earlier: list[dict] = []
        if key is None:
            bench = results / "benchmarks" / "runs" / relative.parent / f"{relative.name}.tsv"
            earlier = earlier_attempts(results, relative, str(data.get("status")))
            # Snakemake times the job of the attempt that stands; each earlier one was a job
            # of its own, timed by its run.json (where it has a clock).
            spans = [_run_seconds(a) for a in earlier]
            wall = job_seconds(bench) + sum(x for x in spans if not math.isnan(x))
        else:
            # The series' own clock where it wrote one: a job that waited for the machine's
            # measurement slot (testbed/slot.py) did not spend that wait measuring.
            own = results / "series" / key / "run.json"
            if own.exists():
                wall = float(json.loads(own.read_text()).get("duration_s") or "nan")
            else:
                wall = job_seconds(results / "benchmarks" / "series" / f"{key}.tsv")
            wall /= series_points[key]
        attempts = len((data.get("series") or {}).get("attempts") or [None]) + len(earlier)
        planned = float((data.get("point") or {}).get("duration_s") or 0.0)
        tried = [a for a in (data.get("series") or {}).get("attempts") or [] if a]
        # A rerun after an imprecise mean may have run longer than planned: its own length.
        lengths = [float(a.get("duration_s") or planned) for a in tried] or [planned]
        lengths += [float((a.get("point") or {}).get("duration_s") or planned) for a in earlier]
        rows.append(
            {
                "family": relative.parts[0],
                "run": str(relative),
                "status": data.get("status"),
                "series": key,
                "attempts": attempts,
                "measured_s": float(data.get("duration_s") or 0.0),
                "step_s": lengths[0],
                "attempt_s": sum(lengths),
                "wall_s": wall,
                # The machine's speed over the run (analysis.parse.cpu: larger is slower).
                "speed_us": cpu_columns(data.get("cpu"))["host_speed_us"],
                **{f"stage_{k}": float(v) for k, v in (data.get("stage_s") or {}).items()},
            }
        )
    return pd.DataFrame(rows)


def family_times(runs: pd.DataFrame) -> pd.DataFrame:
    """Per family: runs, failed runs, series, further measurements (reruns), minutes the
    load generators ran, minutes of measurement jobs, job seconds per run, and the median
    of its runs' machine speed (`speed_us`, NaN where no run was probed)."""
    if runs.empty:
        return pd.DataFrame(
            columns=["family", "runs", "failed", "series", "reruns", "measured_min", "wall_min",
                     "speed_us"]
        )  # fmt: skip
    if "speed_us" not in runs.columns:  # tables of datasets measured before it was kept
        runs = runs.assign(speed_us=math.nan)
    g = runs.groupby("family", sort=True)
    out = pd.DataFrame(
        {
            "runs": g.size(),
            "failed": g["status"].apply(lambda s: int((s != "ok").sum())),
            "series": g["series"].nunique(),
            "reruns": g["attempts"].apply(lambda a: int((a - 1).clip(lower=0).sum())),
            "measured_min": g["measured_s"].sum() / 60,
            "wall_min": g["wall_s"].sum(min_count=1) / 60,
            "speed_us": g["speed_us"].median(),
        }
    ).reset_index()
    out["wall_s_per_run"] = out["wall_min"] * 60 / out["runs"]
    return out


def stage_breakdown(runs: pd.DataFrame) -> pd.Series:
    """Mean seconds per run in each stage, in run order (stages no run reached omitted)."""
    cols = [f"stage_{s}" for s in TIMED_STAGES if f"stage_{s}" in runs.columns]
    means = runs[cols].fillna(0.0).mean()
    means.index = [c.removeprefix("stage_") for c in cols]
    return means[means > 0]


@dataclass(frozen=True)
class Prediction:
    """A profile's predicted measurement time from another profile's measured runs."""

    points: int
    series: int
    hours: float
    series_s: float  # fitted overhead per series (set-up, teardown)
    point_s: float  # fitted overhead per point (launches, warm-ups, splitting)


def predict(runs: pd.DataFrame, plan: pd.DataFrame) -> Prediction:
    """The measurement time of `plan` (one row per planned point: `family`, `series`,
    `duration_s`) from measured `runs` (`run_times`, series only).

    A series' job time is its points' client steps (every attempt, at its length) plus an
    overhead fitted as a + b x points by least squares over the measured series (a ratio
    through zero when there are fewer than three series, or a fitted term is negative).
    Each planned point costs the overhead and its step times the measured attempt seconds per
    planned step second of its family (all families' where its own was not measured)."""
    s = runs.dropna(subset=["series", "wall_s"])
    if s.empty or plan.empty:
        return Prediction(len(plan), plan["series"].nunique() if len(plan) else 0, math.nan,
                          math.nan, math.nan)  # fmt: skip
    per = s.groupby("series").agg(
        wall=("wall_s", "sum"), steps=("attempt_s", "sum"), points=("run", "size")
    )
    over = per["wall"] - per["steps"]
    a, b = 0.0, float(over.sum() / per["points"].sum())
    if len(per) >= 3 and per["points"].nunique() > 1:
        slope, intercept = np.polyfit(per["points"].to_numpy(float), over.to_numpy(float), 1)
        if slope >= 0 and intercept >= 0:
            a, b = float(intercept), float(slope)
    ratio = s.groupby("family")["attempt_s"].sum() / s.groupby("family")["step_s"].sum()
    overall = float(s["attempt_s"].sum() / s["step_s"].sum())
    factor = plan["family"].map(ratio).fillna(overall)
    steps = float((plan["duration_s"] * factor).sum())
    n_series = int(plan["series"].nunique())
    total = a * n_series + b * len(plan) + steps
    return Prediction(len(plan), n_series, total / 3600, a, b)
