"""A two-parameter gamma distribution (location 0) fitted to response times by maximum
likelihood, from samples or from a bucketed histogram. The 2016 study plots such fits over
its response-time distributions to show they are skewed (its Figure 1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


class GammaFitError(ValueError):
    """Too few or degenerate samples to fit a gamma distribution."""


@dataclass(frozen=True)
class GammaFit:
    shape: float
    scale: float
    n: int

    @property
    def mean(self) -> float:
        return self.shape * self.scale

    def pdf(self, x: np.ndarray) -> np.ndarray:
        return stats.gamma.pdf(x, self.shape, loc=0.0, scale=self.scale)


def fit_gamma(samples: np.ndarray | pd.Series) -> GammaFit:
    """Maximum-likelihood shape and scale of a gamma with location 0. Samples must be
    positive and finite (a response time of zero has zero likelihood under the fit)."""
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1:
        raise GammaFitError("samples must be one-dimensional")
    if not np.all(np.isfinite(x)):
        raise GammaFitError("samples must be finite")
    if np.any(x <= 0):
        raise GammaFitError("samples must be positive")
    if len(x) < 2 or np.all(x == x[0]):
        raise GammaFitError("need at least two distinct samples")
    shape, _, scale = stats.gamma.fit(x, floc=0.0)
    return GammaFit(shape=float(shape), scale=float(scale), n=len(x))


def histogram_samples(buckets: pd.Series, counts: pd.Series, width: float) -> np.ndarray:
    """Each bucket's midpoint (`bucket` is its lower bound, `width` its width; 0 for exact
    values) repeated by its count."""
    if width < 0:
        raise GammaFitError("bucket width must not be negative")
    b = np.asarray(buckets, dtype=float)
    n = np.asarray(counts, dtype=float)
    if len(b) != len(n):
        raise GammaFitError("buckets and counts differ in length")
    if np.any(n < 0) or np.any(n != np.round(n)):
        raise GammaFitError("counts must be non-negative integers")
    return np.repeat(b + width / 2, n.astype(int))


def fit_gamma_histogram(buckets: pd.Series, counts: pd.Series, width: float) -> GammaFit:
    """`fit_gamma` on a histogram's samples at the buckets' midpoints."""
    return fit_gamma(histogram_samples(buckets, counts, width))
