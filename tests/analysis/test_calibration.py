"""Calibration of the speed factors on small synthetic tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.calibration import CalibrationError, calibrate, extrapolation, fit_speed
from common.scalemodel import load_machines

MACHINES = load_machines()


def test_proportional_fit_through_one_level() -> None:
    points = pd.DataFrame({"speed": [0.5, 0.5], "throughput_study": [9000.0, 11000.0]})
    fit = fit_speed(points, target=5000.0, lower=0.05, upper=1.0)
    assert fit.model == "proportional"
    assert fit.slope == pytest.approx(20000.0)
    assert fit.speed == pytest.approx(0.25)
    assert not fit.clamped


def test_affine_fit_through_two_levels() -> None:
    # Y = 2000 + 8000 f: the target 6000 needs f = 0.5.
    points = pd.DataFrame({"speed": [0.25, 0.75], "throughput_study": [4000.0, 8000.0]})
    fit = fit_speed(points, target=6000.0, lower=0.05, upper=1.0)
    assert fit.model == "affine"
    assert fit.intercept == pytest.approx(2000.0)
    assert fit.speed == pytest.approx(0.5)


def test_a_fit_beyond_the_bounds_is_clamped_and_flagged() -> None:
    points = pd.DataFrame({"speed": [0.5], "throughput_study": [1000.0]})
    fit = fit_speed(points, target=100000.0, lower=0.05, upper=1.0)
    assert fit.speed == 1.0 and fit.clamped
    assert fit.speed_unclamped == pytest.approx(50.0)


def test_throughput_that_does_not_grow_falls_back_or_fails() -> None:
    # Falling with the speed: the affine slope is negative, the proportional one is used.
    falling = pd.DataFrame({"speed": [0.25, 0.5], "throughput_study": [5000.0, 4000.0]})
    assert fit_speed(falling, 3000.0, 0.05, 1.0).model == "proportional"
    with pytest.raises(CalibrationError, match="no successful"):
        fit_speed(falling.iloc[0:0], 3000.0, 0.05, 1.0)
    zero = pd.DataFrame({"speed": [0.5], "throughput_study": [0.0]})
    with pytest.raises(CalibrationError, match="does not grow"):
        fit_speed(zero, 3000.0, 0.05, 1.0)


def _runs(factor: float) -> pd.DataFrame:
    """Runs whose throughput (at scale `factor`) is exactly CPU-bound: X/s = k f."""
    rows = []
    for name, target in MACHINES.targets.items():
        k = target.value / 0.4  # the target is met at f = 0.4
        for speed in (0.25, 0.5):
            rows.append(
                {"run": f"calibration/{name}/{speed}", "target": name, "speed": speed,
                 "status": "ok", "scale": factor, "throughput_ops": k * speed * factor}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_calibrate_fits_every_role_and_lists_both_sets() -> None:
    result = calibrate(_runs(0.04), MACHINES, 0.04)
    for study in ("2016", "2018"):
        assert result["speed_factors"][study]["server"] == pytest.approx(0.4)
        assert result["speed_factors"][study]["middleware"] == pytest.approx(0.4)
        assert result["speed_factors"][study]["client"] is None  # clients run unbudgeted
    fitted = {t["source"] + str(t["value"]) for t in result["targets"]}
    validated = {v["source"] + str(v["value"]) for v in result["validation"]}
    assert fitted and validated and not fitted & validated
    assert all(len(t["runs"]) == 2 for t in result["targets"])


def test_failed_runs_are_listed_but_not_fitted() -> None:
    runs = _runs(0.04)
    bad = runs.index[runs["speed"] == 0.5]
    runs.loc[bad, "status"] = "failed"
    runs.loc[bad, "throughput_ops"] = 1.0
    result = calibrate(runs, MACHINES, 0.04)
    assert result["speed_factors"]["2018"]["server"] == pytest.approx(0.4)
    statuses = [r["status"] for t in result["targets"] for r in t["runs"]]
    assert statuses.count("failed") == len(MACHINES.targets)


def test_a_target_without_runs_is_named() -> None:
    runs = _runs(0.04)
    runs = runs[runs["target"] != "server_write_max"]
    with pytest.raises(CalibrationError, match="server_write_max"):
        calibrate(runs, MACHINES, 0.04)


def test_runs_on_a_stolen_or_saturated_machine_are_flagged() -> None:
    quiet = calibrate(_runs(0.04), MACHINES, 0.04)
    assert quiet["warnings"] == []
    assert all(r["disturbed"] is None for t in quiet["targets"] for r in t["runs"])
    runs = _runs(0.04).assign(idle_share=0.3, steal_share=0.05)
    runs.loc[0, "steal_share"] = 0.4  # the hypervisor took 40 % of the machine
    runs.loc[1, "idle_share"] = 0.01
    result = calibrate(runs, MACHINES, 0.04)
    flagged = {r["run"]: r["disturbed"] for t in result["targets"] for r in t["runs"]}
    assert "steal 40% > 20%" in flagged[runs.loc[0, "run"]]
    assert "idle 1% < 5%" in flagged[runs.loc[1, "run"]]
    assert sum(v is not None for v in flagged.values()) == 2
    assert len(result["warnings"]) == 2 and all("may not hold" in w for w in result["warnings"])


def test_a_factor_beyond_the_speeds_measured_is_an_extrapolation() -> None:
    def target(speed: float, *statuses: str) -> dict:
        runs = [{"speed": v, "status": st} for v, st in zip((0.4, 0.5), statuses, strict=False)]
        return {"fit": {"speed": speed}, "runs": runs}

    # The 2015 database target on a slow machine: fitted at 0.773 from runs at 0.4 and 0.5.
    assert extrapolation(target(0.773, "ok", "ok")) == pytest.approx(0.546)
    assert extrapolation(target(0.45, "ok", "ok")) == 0.0
    assert extrapolation(target(0.2, "ok", "ok")) == pytest.approx(0.5)
    # A failed run's speed was not measured.
    assert extrapolation(target(0.45, "ok", "failed")) == pytest.approx(0.125)
    assert math.isnan(extrapolation(target(0.45, "failed", "failed")))
