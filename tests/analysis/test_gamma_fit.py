"""The gamma fit recovers a known distribution's parameters, from samples and from a
histogram of them, and refuses samples it cannot fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.models.gamma_fit import (
    GammaFitError,
    fit_gamma,
    fit_gamma_histogram,
    histogram_samples,
)


def test_recovers_shape_and_scale_of_a_known_gamma() -> None:
    x = stats.gamma.rvs(2.5, scale=3.0, size=20_000, random_state=np.random.default_rng(7))
    fit = fit_gamma(x)
    assert fit.shape == pytest.approx(2.5, rel=0.05)
    assert fit.scale == pytest.approx(3.0, rel=0.05)
    assert fit.mean == pytest.approx(7.5, rel=0.03)
    assert fit.n == 20_000


def test_histogram_fit_matches_the_samples_it_was_built_from() -> None:
    rng = np.random.default_rng(11)
    x = stats.gamma.rvs(4.0, scale=500.0, size=20_000, random_state=rng)  # µs
    width = 100.0
    lower = np.floor(x / width) * width
    h = pd.Series(lower).value_counts().sort_index()
    fit = fit_gamma_histogram(h.index.to_series(), h, width)
    assert fit.shape == pytest.approx(4.0, rel=0.06)
    assert fit.scale == pytest.approx(500.0, rel=0.06)


def test_histogram_samples_are_bucket_midpoints() -> None:
    s = histogram_samples(pd.Series([0.0, 100.0]), pd.Series([2, 1]), 100.0)
    assert list(s) == [50.0, 50.0, 150.0]


@pytest.mark.parametrize(
    "samples",
    [np.array([1.0]), np.array([2.0, 2.0, 2.0]), np.array([1.0, 0.0, 2.0]), np.array([1, np.nan])],
)
def test_refuses_samples_it_cannot_fit(samples: np.ndarray) -> None:
    with pytest.raises(GammaFitError):
        fit_gamma(samples)


def test_refuses_fractional_counts() -> None:
    with pytest.raises(GammaFitError, match="counts"):
        histogram_samples(pd.Series([0.0]), pd.Series([1.5]), 100.0)
