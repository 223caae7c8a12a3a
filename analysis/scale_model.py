"""The scale model on the analysis side: measurements in the study's time, and the check
that two or more scale factors agree once rescaled.

A run at scale s ran 1/s slower than the study: its throughput stands for X / s in the
study's time and its response time for R * s (common/scalemodel.py). The plan sets every
point's s (mwlab.catalogue: the profile's factor under the scale model, 1 without it), the
testbed records it in run.json, and `scale_of` is the one way the analysis reads it.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.aggregate import CI_LEVEL, MIN_CI_N
from analysis.bottleneck import SATURATED

# (measured column prefix, study column prefix, factor applied per unit of s: -1 divides by
# s, +1 multiplies by it, and the unit change)
_RESCALED = (
    ("throughput_ops", "throughput_study", -1, 1.0),
    ("response_us_mean", "response_ms_study", 1, 1e-3),
)
_STATS = ("", "_mean", "_std", "_ci_low", "_ci_high")


class TimeBaseError(ValueError):
    """A table that is already in the study's time, or whose rows have no scale."""


class ScaleError(TimeBaseError):
    """A table whose rows have no usable scale factor."""


def _rows_named(frame: pd.DataFrame, rows: pd.Series) -> str:
    """The runs (else points, else row labels) of the selected rows, for an error message."""
    key = next((k for k in ("run", "point") if k in frame.columns), None)
    names = list(dict.fromkeys(map(str, frame.loc[rows, key] if key else frame.index[rows])))
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{key or 'row'} {', '.join(names[:3])}{more}"


def scale_of(frame: pd.DataFrame, what: str = "table") -> pd.Series:
    """Each row's scale factor s, as float: the one way the analysis reads `scale`.

    The plan gives every point its s, 1 for a point without the scale model, and every run
    records it, so no default is invented here: a table without a `scale` column, or a row
    whose scale is missing, not a number or not positive, is refused with a ScaleError that
    names the runs (or points) concerned. The archived datasets (data/*/*) record the scale of
    every run and point, those without the scale model included, so none needs a fallback."""
    if "scale" not in frame.columns:
        raise ScaleError(
            f"the {what} has no `scale` column: every run records its point's scale factor"
            " (run.json point.scale); attach it by run or point with with_scale"
        )
    s = pd.to_numeric(frame["scale"], errors="coerce").astype(float)
    bad = ~(s > 0)  # NaN as well as zero and negative factors
    if bad.any():
        raise ScaleError(
            f"the {what} has no positive scale factor for {_rows_named(frame, bad)}"
            f" (got {', '.join(sorted({str(v) for v in frame.loc[bad, 'scale']}))})"
        )
    return s


def add_study_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with `scale` and, for every throughput and response-time column present (runs:
    `throughput_ops`; points: `throughput_ops_mean`, `_std`, `_ci_low`, `_ci_high`), its
    value in the study's time: `throughput_study*` (ops/s) and `response_ms_study*` (ms)."""
    out = frame.copy()
    s = scale_of(out)
    out["scale"] = s
    for measured, study, power, unit in _RESCALED:
        for suffix in _STATS:
            column = measured + suffix
            if column in out.columns:
                out[study + suffix] = out[column].astype(float) * unit * s**power
    return out


# Columns of per-request times (µs or ms) and of rates (ops/s) that the scale model stretches.
# Settings (`middleware.window_ms`, dotted), levels and the windows' positions on the run's
# clock are not measurements of the system and stay as they are.
_TIME = re.compile(r"_(us|ms)(_|$)")
_RATE = re.compile(r"^throughput(?!_cv)|(^|_)ops(_|$)")
_KEPT = re.compile(r"\.|^level_|_study|^(start_ms|end_ms|scale)$")
TIME_BASE = "time_base"


def rescaled_columns(frame: pd.DataFrame) -> dict[str, int]:
    """Each column the scale model stretches, with the power of s its value in the study's
    time takes: -1 for rates (throughput / s), +1 for times (time * s), +2 for variances of
    times."""
    powers: dict[str, int] = {}
    for column in map(str, frame.columns):
        if _KEPT.search(column):
            continue
        if _TIME.search(column):
            powers[column] = 2 if "_var" in column else 1
        elif _RATE.search(column):
            powers[column] = -1
    return powers


def with_scale(frame: pd.DataFrame, runs: pd.DataFrame, on: str = "run") -> pd.DataFrame:
    """A copy of `frame` with each row's `scale` taken from `runs` (one scale per `on` key);
    a row whose key has no scale in `runs` is an error (scale_of)."""
    if on not in frame.columns or on not in runs.columns:
        raise TimeBaseError(f"both tables need the column {on!r} to attach the scale")
    scales = runs[[on]].assign(scale=scale_of(runs, f"table of {on}s")).drop_duplicates(on)
    out = frame.drop(columns=["scale"], errors="ignore").merge(scales, on=on, how="left")
    out["scale"] = scale_of(out)
    return out


def in_study_time(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with every throughput and per-request time column (means, deviations, CI
    bounds, percentiles, histogram buckets) rescaled by its row's `scale` to the study's time,
    under the same names and units; `time_base` marks the copy as "study".

    One definition for every report script, so raw and rescaled values are never mixed: a
    table rescaled twice is an error, and so is a row without a positive scale (scale_of)."""
    if TIME_BASE in frame.columns and (frame[TIME_BASE] == "study").any():
        raise TimeBaseError("the table is already in the study's time")
    out = frame.copy()
    s = scale_of(out)
    for column, power in rescaled_columns(out).items():
        out[column] = pd.to_numeric(out[column], errors="coerce").astype(float) * s**power
    out[TIME_BASE] = "study"
    return out


def _log_ratio_ci(a: np.ndarray, b: np.ndarray, level: float) -> tuple[float, float]:
    """Confidence interval of mean(b) / mean(a) by the delta method on the log ratio; NaN
    without `MIN_CI_N` repetitions on each side."""
    if len(a) < MIN_CI_N or len(b) < MIN_CI_N:
        return (math.nan, math.nan)
    ma, mb = a.mean(), b.mean()
    if ma <= 0 or mb <= 0:
        return (math.nan, math.nan)
    se = math.sqrt(a.var(ddof=1) / (len(a) * ma**2) + b.var(ddof=1) / (len(b) * mb**2))
    t = stats.t.ppf(0.5 + level / 2, len(a) + len(b) - 2)
    r = math.log(mb / ma)
    return (math.exp(r - t * se), math.exp(r + t * se))


def agreement(
    runs: pd.DataFrame,
    scale_level: str = "level_scale",
    reference: str = "s",
    by: tuple[str, ...] = ("level_workload", "side"),
    level: float = CI_LEVEL,
) -> pd.DataFrame:
    """Per point and side: the rescaled throughput and response time at each scale and their
    ratio (other scale over the reference scale) with a confidence interval.

    `runs`: one row per run and side (every request type together), with the scale level,
    `scale`, `status`, `throughput_study` and `response_ms_study`. Where the runs have CPU
    accounting (`cpu_util_<role>`: the share of its budget a role used), its mean at each
    scale is carried as `cpu_util_<role>_reference` and `cpu_util_<role>_other`: a point a
    budget bounds at one scale and not at the other need not agree."""
    ok = runs[(runs["status"] == "ok")]
    if "type" in ok.columns:
        ok = ok[ok["type"] == "all"]
    rows = []
    for key, group in ok.groupby(list(by), sort=True):
        base = group[group[scale_level] == reference]
        for other, test in group[group[scale_level] != reference].groupby(scale_level):
            row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
            row.update(
                {
                    "reference_scale": float(base["scale"].iloc[0]) if len(base) else math.nan,
                    "other": other,
                    "other_scale": float(test["scale"].iloc[0]),
                    "repetitions": min(len(base), len(test)),
                }
            )
            for metric in ("throughput_study", "response_ms_study"):
                a = base[metric].dropna().to_numpy(dtype=float)
                b = test[metric].dropna().to_numpy(dtype=float)
                mean_a = a.mean() if len(a) else math.nan
                mean_b = b.mean() if len(b) else math.nan
                lo, hi = _log_ratio_ci(a, b, level)
                row.update(
                    {
                        f"{metric}_reference": mean_a,
                        f"{metric}_other": mean_b,
                        f"{metric}_ratio": mean_b / mean_a if mean_a else math.nan,
                        f"{metric}_ratio_ci_low": lo,
                        f"{metric}_ratio_ci_high": hi,
                    }
                )
            for column in (c for c in group.columns if c.startswith("cpu_util_")):
                row[f"{column}_reference"] = pd.to_numeric(base[column]).mean()
                row[f"{column}_other"] = pd.to_numeric(test[column]).mean()
            rows.append(row)
    return pd.DataFrame(rows)


# The band around 1 within which rescaled values agree: a tighter one (a link-bound point
# repeats to a few per mille) would fail on deviations smaller than any our verdicts resolve.
AGREEMENT_TOLERANCE = 0.05
LINK = "link"  # no CPU budget used up: what bounds the point is a link (or its load)
# A point's outcome, worst first: how failed_points ranks the sides of one point.
OUTCOMES = ("fails", "undecided", "holds")


def bound_by(row: pd.Series, at: str) -> str:
    """What bounds an agreement row's point at the scale `at` (`reference` or `other`): the
    role whose CPU budget it used up (SATURATED or more; the busiest of several), else LINK.
    Without CPU accounting nothing is known to be used up, so LINK as well."""
    uses = {
        column.removeprefix("cpu_util_").removesuffix(f"_{at}"): float(row[column])
        for column in row.index
        if column.startswith("cpu_util_") and column.endswith(f"_{at}") and pd.notna(row[column])
    }
    role, use = max(uses.items(), key=lambda kv: kv[1], default=(LINK, 0.0))
    return role if use >= SATURATED else LINK


def _outcome(row: pd.Series, metric: str, tolerance: float) -> str:
    """`holds` when the ratio's interval lies within 1 +- tolerance, `fails` when it lies
    wholly outside, else `undecided`; without an interval the ratio itself decides."""
    lo, hi = row[f"{metric}_ratio_ci_low"], row[f"{metric}_ratio_ci_high"]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo = hi = row[f"{metric}_ratio"]
    if not math.isfinite(lo):
        return "undecided"
    if 1 - tolerance <= lo and hi <= 1 + tolerance:
        return "holds"
    if hi < 1 - tolerance or lo > 1 + tolerance:
        return "fails"
    return "undecided"


def classify(table: pd.DataFrame, tolerance: float = AGREEMENT_TOLERANCE) -> pd.DataFrame:
    """An `agreement` table with, per row, what bounds the point at each scale
    (`bound_reference`, `bound_other`: a role whose budget it used up, or LINK), its `kind`
    (`cpu` where a budget bounds it at either scale, else `link`), and `outcome`: `holds`
    where the throughput and response-time ratios' intervals both lie within `tolerance` of
    1, `fails` where either lies wholly outside, else `undecided`. A link-bound point must
    hold; a CPU-bound one holds only where its budget scaled as the model says."""
    if table.empty:
        return table
    table = table.copy()
    table["bound_reference"] = table.apply(lambda r: bound_by(r, "reference"), axis=1)
    table["bound_other"] = table.apply(lambda r: bound_by(r, "other"), axis=1)
    cpu = (table["bound_reference"] != LINK) | (table["bound_other"] != LINK)
    table["kind"] = cpu.map({True: "cpu", False: LINK})
    table["outcome"] = table.apply(
        lambda r: min(
            (_outcome(r, m, tolerance) for m in ("throughput_study", "response_ms_study")),
            key=OUTCOMES.index,
        ),
        axis=1,
    )
    return table


def check(
    runs: pd.DataFrame, tolerance: float = AGREEMENT_TOLERANCE, **options: Any
) -> pd.DataFrame:
    """The scale check at any number of scales: `agreement` of each other scale with the
    reference one (`options` are passed on), each row classified (`classify`)."""
    return classify(agreement(runs, **options), tolerance)


def failed_points(
    table: pd.DataFrame, by: tuple[str, ...] = ("level_workload",)
) -> list[dict[str, Any]]:
    """The configurations at which the scale model is not shown to hold (`check`'s rows whose
    outcome is `fails` or `undecided`), one per point and other scale, worst side first: its
    levels (`by`), the two scales, the worst outcome of its sides, what bounded it at each
    scale, the throughput ratio farthest from 1 and the response-time ratio farthest from 1
    with its side (either may be what fails). A verdict whose points share these levels
    rests where the check failed (or could not tell)."""
    if table.empty or "outcome" not in table.columns:
        return []
    out = []
    keys = [*by, *(k for k in ("reference_scale", "other_scale") if k in table.columns)]
    for key, rows in table[table["outcome"] != "holds"].groupby(keys, sort=True):
        worst = rows.loc[(rows["throughput_study_ratio"] - 1).abs().idxmax()]
        slowest = rows.loc[(rows["response_ms_study_ratio"] - 1).abs().idxmax()]
        out.append(
            dict(zip(keys, (k.item() if hasattr(k, "item") else k for k in key), strict=True))
            | {
                "outcome": min(rows["outcome"], key=OUTCOMES.index),
                "sides": sorted(map(str, rows["side"])),
                "bound_reference": str(worst["bound_reference"]),
                "bound_other": str(worst["bound_other"]),
                "throughput_ratio": float(worst["throughput_study_ratio"]),
                "response_ratio": float(slowest["response_ms_study_ratio"]),
                "response_side": str(slowest["side"]),
            }
        )
    return out
