"""The chosen point's response-time distribution per side with a fitted gamma."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.models.gamma_fit import GammaFit
from analysis.studies.s2016 import gamma


def test_bucket_width_is_the_smallest_gap_between_bounds() -> None:
    assert gamma.bucket_width(pd.Series([1, 1, 1], index=[0, 100, 300])) == 100.0
    assert gamma.bucket_width(pd.Series([4], index=[100])) == 0.0


def test_point_histograms_pool_the_points_ok_runs() -> None:
    rows = [
        {
            "run": run,
            "point": run.split("/")[1],
            "side": side,
            "type": "get",
            "window": -1 if side == "client" else 1,
            "bucket_us": b,
            "count": 1,
        }
        for run in ("f/p/rep1", "f/p/rep2", "f/q/rep1")
        for side in ("client", "middleware")
        for b in (100, 200)
    ]
    windows = pd.DataFrame(
        {"run": ["f/p/rep1", "f/p/rep2", "f/q/rep1"], "side": "middleware", "window": 1}
    )
    hists, widths = gamma.point_histograms(
        pd.DataFrame(rows), windows, {"f/p/rep1", "f/q/rep1"}, "p"
    )
    assert hists["client"].to_dict() == {100: 1, 200: 1}  # rep2 is not ok
    assert widths == {"client": 0.0, "middleware": 100.0}


# The side without samples has an empty panel, whose legend has nothing to name.
@pytest.mark.filterwarnings("ignore:No artists with labels")
def test_the_fit_recovers_a_gamma_and_a_side_without_samples_has_none(saved: dict) -> None:
    rng = np.random.default_rng(7)
    values = np.round(rng.gamma(4.0, 500.0, 3000))  # µs: mean 2 ms
    client = pd.Series(values).value_counts().sort_index()
    fits = gamma.gamma_figure(
        {"client": client, "middleware": pd.Series(dtype=float)},
        {"client": 0.0, "middleware": 0.0},
        "gamma.pdf",
    )
    assert fits["client"].shape == pytest.approx(4.0, rel=0.1)
    assert fits["client"].mean == pytest.approx(2.0, rel=0.05)  # ms
    assert fits["middleware"] is None
    titles = [ax.get_title() for ax in saved["gamma.pdf"].axes]
    assert titles == ["measured at the client", "measured at the middleware"]


def test_gamma_numbers_per_side_and_the_originals(ref: dict) -> None:
    fits = {"client": GammaFit(shape=2.0, scale=0.5, n=10), "middleware": None}
    n = gamma.gamma_numbers(fits, ref["figures"])
    assert (n["SixteenGammaClientShape"], n["SixteenGammaClientScale"]) == ("2.00", "0.500")
    assert n["SixteenGammaClientMean"] == "1.000"
    assert n["SixteenGammaMiddlewareShape"] == "--"
    # The original's Figure 1 draws its fits but prints no parameters.
    assert (n["SixteenOrigGammaFigure"], n["SixteenOrigGammaCase"]) == ("Figure 1", "unprinted")
    assert n["SixteenOrigGammaShape"] == "--"
    printed = {"gamma": {"figure": "Figure 1", "parameters": {"shape": 2.1, "scale": 4.5}}}
    theirs = gamma.gamma_numbers(fits, printed)
    assert theirs["SixteenOrigGammaCase"] == "printed"
    assert (theirs["SixteenOrigGammaShape"], theirs["SixteenOrigGammaScale"]) == ("2.1", "4.5")
