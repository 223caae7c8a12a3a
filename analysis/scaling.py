"""The scale model on the analysis side: measurements in the study's time, and the check
that two scale factors agree once rescaled.

A run at scale s ran 1/s slower than the study: its throughput stands for X / s in the
study's time and its response time for R * s (testbed/scalemodel.py). Runs recorded before
the scale model have no `scale` and count as s = 1.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

# (measured column prefix, study column prefix, factor applied per unit of s: -1 divides by
# s, +1 multiplies by it, and the unit change)
_RESCALED = (
    ("throughput_ops", "throughput_study", -1, 1.0),
    ("response_us_mean", "response_ms_study", 1, 1e-3),
)
_STATS = ("", "_mean", "_std", "_ci_low", "_ci_high")


def scale_of(frame: pd.DataFrame) -> pd.Series:
    """Each row's scale factor (1 where the run recorded none)."""
    if "scale" not in frame.columns:
        return pd.Series(1.0, index=frame.index)
    return pd.to_numeric(frame["scale"], errors="coerce").fillna(1.0)


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


def _log_ratio_ci(a: np.ndarray, b: np.ndarray, level: float) -> tuple[float, float]:
    """Confidence interval of mean(b) / mean(a) by the delta method on the log ratio; NaN
    without two repetitions on each side."""
    if len(a) < 2 or len(b) < 2:
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
    level: float = 0.95,
) -> pd.DataFrame:
    """Per point and side: the rescaled throughput and response time at each scale and their
    ratio (other scale over the reference scale) with a confidence interval.

    `runs`: one row per run and side (every request type together), with the scale level,
    `scale`, `status`, `throughput_study` and `response_ms_study`."""
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
            rows.append(row)
    return pd.DataFrame(rows)
