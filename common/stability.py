"""The stability criteria of one run: are its measured windows a stationary sample whose mean
throughput is known precisely enough? The series runner applies them after each step
(testbed.series), the analysis to every run (analysis.stability).

A run's measured interval (after the warm-up and cool-down cut) is read as a series of
one-second windows of the client-side throughput, every request type and every load
generator together (one value per absolute window, not per source). The run is *stable*
when all three criteria hold:

(a) Enough windows: at least `MIN_WINDOWS`. Batch means need about ten batches or more
    (Schmeiser 1982, "Batch size effects in the analysis of simulation output",
    Operations Research 30(3):556-568; Jain 1991 §25.5.2), and the trend test below cannot
    reject at `TREND_ALPHA` with fewer than five values.
(b) No monotone trend: the Mann-Kendall test (Mann 1945, "Nonparametric tests against
    trend", Econometrica 13:245-259; Kendall 1975, Rank Correlation Methods), i.e. Kendall's
    tau between the batch means and time, two-sided at `TREND_ALPHA`. A trend means the
    transient was not removed (Jain 1991 §25.3) or the system drifted.
(c) Precision: the `CI_LEVEL` Student-t confidence interval of the mean window throughput,
    from batch means, has a half-width of at most `MAX_REL_HALF_WIDTH` of the mean — the
    stopping criterion of Jain 1991 §25.5 ("run until the confidence interval narrows to a
    desired width"). Batches start as single windows; while the lag-1 autocorrelation of
    the batch means is positive and significant (above z/sqrt(k) for k batches), adjacent
    batches are merged (Jain 1991 §25.5.2: grow the batch until the covariance between
    successive batch means is small), as long as `MIN_BATCHES` remain. The bound of 10 %
    is the resolution the report works at: its interactive-law and model checks accept
    10 % deviations, so a run mean known to ±10 % at `CI_LEVEL` does not limit them.

Source: R. Jain, The Art of Computer Systems Performance Analysis, Wiley 1991, ch. 25
(transient removal, batch means, stopping criteria) and ch. 13 (confidence intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

# The one confidence level of the report (criterion c uses it too).
CI_LEVEL = 0.95
MIN_WINDOWS = 10  # windows of the measured interval (criterion a)
TREND_ALPHA = 0.05  # two-sided level of the Mann-Kendall test (criterion b)
MAX_REL_HALF_WIDTH = 0.10  # CI half-width over the mean (criterion c); see the docstring
MIN_BATCHES = 5  # batches may be merged only while at least this many remain


@dataclass(frozen=True)
class Stability:
    """The check's verdict on one run; `reason` names the failed criteria with their numbers."""

    stable: bool
    reason: str
    windows: int  # complete windows in the measured interval
    batch_windows: int  # windows per batch of the confidence interval
    batches: int
    mean_ops: float  # mean window throughput, ops/s
    trend_tau: float  # Kendall's tau of the batch means against time
    trend_p: float
    lag1_autocorr: float  # of the batch means used
    rel_half_width: float  # CI half-width over the mean


def _lag1(x: np.ndarray) -> float:
    d = x - x.mean()
    den = float(np.sum(d * d))
    return float(np.sum(d[:-1] * d[1:]) / den) if len(x) > 2 and den > 0 else 0.0


def _batches(x: np.ndarray, level: float) -> tuple[int, np.ndarray]:
    """Batch size (a power of two) and the batch means of the last windows it covers."""
    z = stats.norm.ppf(0.5 + level / 2)
    size = 1
    while len(x) // (2 * size) >= MIN_BATCHES:
        means = _batch_means(x, size)
        if _lag1(means) <= z / math.sqrt(len(means)):
            break
        size *= 2
    return size, _batch_means(x, size)


def _batch_means(x: np.ndarray, size: int) -> np.ndarray:
    k = len(x) // size
    # The windows left over are the earliest ones, nearest the transient.
    return x[len(x) - k * size :].reshape(k, size).mean(axis=1)


def assess(
    throughput: Sequence[float],
    level: float = CI_LEVEL,
    max_rel_half_width: float = MAX_REL_HALF_WIDTH,
    min_windows: int = MIN_WINDOWS,
    alpha: float = TREND_ALPHA,
) -> Stability:
    """Applies the three criteria to one run's window throughputs, in time order."""
    x = np.asarray(throughput, dtype=float)
    if np.isnan(x).any():
        raise ValueError("window throughputs must not be NaN")
    n = len(x)
    nan = float("nan")
    if n == 0:
        return Stability(False, "no complete windows", 0, 1, 0, nan, nan, nan, nan, nan)
    mean = float(x.mean())
    size, means = _batches(x, level)
    k = len(means)
    tau, p = (nan, nan)
    if k >= 2:
        res = stats.kendalltau(np.arange(k), means)
        # A constant series has no trend (scipy answers NaN).
        tau, p = (0.0, 1.0) if np.isnan(res.pvalue) else (float(res.statistic), float(res.pvalue))
    rel = nan
    if k >= 2 and mean > 0:
        half = stats.t.ppf(0.5 + level / 2, k - 1) * means.std(ddof=1) / math.sqrt(k)
        rel = float(half / mean)
    failed = []
    if n < min_windows:
        failed.append(f"too few windows: {n} < {min_windows}")
    if mean <= 0:
        failed.append("no throughput")
    if not np.isnan(p) and p < alpha:
        failed.append(f"trend: Kendall tau {tau:+.2f}, p {p:.3f} < {alpha:g}")
    if not np.isnan(rel) and rel > max_rel_half_width:
        failed.append(
            f"imprecise: {level:.0%} CI half-width {rel:.1%} of the mean > {max_rel_half_width:.0%}"
        )
    reason = "; ".join(failed) or (
        f"stable: {n} windows, trend p {p:.2f}, CI half-width {rel:.1%} of the mean"
    )
    return Stability(not failed, reason, n, size, k, mean, tau, p, _lag1(means), rel)


@dataclass(frozen=True)
class BatchMean:
    """One run's mean of a per-window metric and its standard error from batch means."""

    mean: float
    std_error: float
    batches: int


def batch_mean(x: Sequence[float], level: float = CI_LEVEL) -> BatchMean:
    """The mean of a run's window values (in time order) and the standard error of that mean
    from the batch means the stability check uses (criterion c)."""
    v = np.asarray(x, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        raise ValueError("no window values")
    _, means = _batches(v, level)
    k = len(means)
    se = float(means.std(ddof=1) / math.sqrt(k)) if k >= 2 else float("nan")
    return BatchMean(float(v.mean()), se, k)


def length_factor(rel_half_width: float, bound: float = MAX_REL_HALF_WIDTH) -> float:
    """How many times longer a run must be measured for its CI half-width (over the mean) to
    reach `bound`: (half-width / bound)^2, as a batch-means half-width shrinks as one over
    the square root of the measured length while the windows vary as they did."""
    if not rel_half_width >= 0:
        raise ValueError("the half-width must be a number >= 0")
    return (rel_half_width / bound) ** 2


def windows_needed(
    cv: float, level: float = CI_LEVEL, max_rel_half_width: float = MAX_REL_HALF_WIDTH
) -> int:
    """Independent windows needed for criterion (c) at a window-to-window coefficient of
    variation `cv`: the least n >= MIN_WINDOWS with t(n-1) cv / sqrt(n) <= the bound."""
    if not cv >= 0:
        raise ValueError("cv must be a number >= 0")
    n = MIN_WINDOWS
    while stats.t.ppf(0.5 + level / 2, n - 1) * cv / math.sqrt(n) > max_rel_half_width:
        n += 1
    return n
