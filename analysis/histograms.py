"""Response-time histograms: percentiles of a bucketed distribution and re-bucketing onto
common edges with an overflow count.

Two bucket conventions reach the report (analysis/README.md, **histograms**): the
middleware's equal-width 100 µs buckets keyed by their lower bound, and the load generators'
HdrHistogram buckets keyed by their highest equivalent value. One definition of a percentile
serves both, so every section reports the same number for the same histogram.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

# `lower`: equal-width buckets keyed by their lower bound (the middleware's); `upper`:
# buckets keyed by their highest value (HdrHistogram's, the generators').
Bound = Literal["lower", "upper"]
# The middleware's bucket width (µs) when a histogram has a single bucket to infer it from.
MIDDLEWARE_BUCKET_US = 100.0


class HistogramError(ValueError):
    """A histogram or a request for one that cannot be answered."""


def histogram_quantiles(
    buckets: pd.Series | np.ndarray,
    counts: pd.Series | np.ndarray,
    qs: Sequence[float],
    bound: Bound = "lower",
) -> list[float]:
    """Quantiles (0 < q <= 1) of a bucketed distribution, NaN for an empty one.

    `lower`: linear interpolation inside the equal-width bucket that holds the quantile.
    `upper`: the value of the first bucket whose cumulative count reaches the quantile, as
    HdrHistogram (and memtier) report it."""
    if bound not in ("lower", "upper"):
        raise HistogramError(f"bucket bound must be 'lower' or 'upper', not {bound!r}")
    if any(not 0 < q <= 1 for q in qs):
        raise HistogramError(f"quantiles must lie in (0, 1], got {list(qs)}")
    values = np.asarray(buckets, dtype=float)
    n = np.asarray(counts, dtype=float)
    if values.shape != n.shape:
        raise HistogramError("buckets and counts differ in length")
    if np.any(n < 0):
        raise HistogramError("bucket counts must not be negative")
    order = np.argsort(values, kind="stable")
    values, n = values[order], n[order]
    total = n.sum()
    if total <= 0:
        return [math.nan for _ in qs]
    cum = np.cumsum(n)
    distinct = np.unique(values)
    width = float(np.min(np.diff(distinct))) if len(distinct) > 1 else MIDDLEWARE_BUCKET_US
    out = []
    for q in qs:
        target = q * total
        i = min(int(np.searchsorted(cum, target, side="left")), len(cum) - 1)
        if bound == "upper":
            out.append(float(values[i]))
            continue
        before = cum[i - 1] if i > 0 else 0.0
        frac = (target - before) / n[i] if n[i] > 0 else 0.0
        out.append(float(values[i] + frac * width))
    return out


def percentile_name(q: float) -> str:
    """Column name of a quantile: 0.5 -> p50, 0.999 -> p99.9."""
    p = 100 * q
    return f"p{p:.0f}" if abs(p - round(p)) < 1e-9 else f"p{p:g}"


def grouped_quantiles(
    hist: pd.DataFrame,
    by: Sequence[str],
    qs: Sequence[float],
    bound: Bound | dict[str, Bound],
) -> pd.DataFrame:
    """Per group of `by`: quantiles of the pooled histogram (columns `bucket_us`, `count`),
    one column per quantile (`p50`, ...). `bound` may map the `side` column's values to their
    convention (e.g. client: upper, middleware: lower)."""
    missing = {*by, "bucket_us", "count"} - set(hist.columns)
    if missing:
        raise HistogramError(f"histogram table lacks columns {sorted(missing)}")
    names = [percentile_name(q) for q in qs]
    rows = []
    for key, g in hist.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True))
        b = bound[str(row["side"])] if isinstance(bound, dict) else bound
        pooled = g.groupby("bucket_us")["count"].sum()
        values = histogram_quantiles(pooled.index.to_numpy(float), pooled.to_numpy(float), qs, b)
        rows.append({**row, **dict(zip(names, values, strict=True))})
    return pd.DataFrame(rows, columns=[*by, *names])


@dataclass(frozen=True)
class Rebinned:
    """Counts on common edges; `overflow` counts everything at or above the last edge."""

    edges: np.ndarray
    counts: np.ndarray
    overflow: float

    @property
    def total(self) -> float:
        return float(self.counts.sum() + self.overflow)

    def fractions(self) -> tuple[np.ndarray, float]:
        """Counts and overflow as fractions of all requests (zeros when empty)."""
        t = self.total
        if t <= 0:
            return np.zeros_like(self.counts), 0.0
        return self.counts / t, self.overflow / t


def rebin(buckets: np.ndarray, counts: np.ndarray, edges: np.ndarray) -> Rebinned:
    """Histogram counts on `edges` (increasing, from the lowest value), keeping what lies
    at or above the last edge as a separate overflow instead of piling it into a bucket."""
    edges = np.asarray(edges, dtype=float)
    if edges.ndim != 1 or len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise HistogramError("edges must be at least two increasing values")
    values = np.asarray(buckets, dtype=float)
    n = np.asarray(counts, dtype=float)
    inside = values < edges[-1]
    binned, _ = np.histogram(values[inside], bins=edges, weights=n[inside])
    return Rebinned(edges=edges, counts=binned, overflow=float(n[~inside].sum()))


def common_edges(top_us: float, unit_us: float, max_buckets: int) -> np.ndarray:
    """Edges from 0 covering `top_us` with at most `max_buckets` buckets whose width is a
    whole multiple of `unit_us` (the coarsest measured bucket), so no bucket splits one."""
    if unit_us <= 0 or max_buckets < 1:
        raise HistogramError("the bucket unit and the number of buckets must be positive")
    if not math.isfinite(top_us) or top_us <= 0:
        top_us = unit_us * max_buckets
    width = unit_us * max(1, math.ceil(top_us / unit_us / max_buckets))
    n = max(1, math.ceil(top_us / width))
    return np.arange(n + 1) * width


def run_percentiles(
    histograms: pd.DataFrame,
    windows: pd.DataFrame,
    qs: Sequence[float] = (0.5, 0.9),
    types: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per run: response-time quantiles (µs) over the middleware's stable windows, every
    request type in `types` (default: all) pooled. Columns run, point, p50, p90, ..."""
    h = histograms[(histograms["side"] == "middleware") & (histograms["window"] >= 0)]
    if types is not None:
        h = h[h["type"].isin(types)]
    stable = windows.loc[windows["side"] == "middleware", ["run", "window"]].drop_duplicates()
    h = h.merge(stable, on=["run", "window"], how="inner")
    names = [f"p{round(100 * q):d}" for q in qs]
    rows = []
    for (run, point), g in h.groupby(["run", "point"], sort=True):
        pooled = g.groupby("bucket_us")["count"].sum()
        values = histogram_quantiles(pooled.index.to_series(), pooled, qs)
        rows.append({"run": run, "point": point, **dict(zip(names, values, strict=True))})
    return pd.DataFrame(rows, columns=["run", "point", *names])
