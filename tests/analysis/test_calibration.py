"""Calibration of the speed factors on small synthetic tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.calibration import (
    CalibrationError,
    calibrate,
    extrapolation,
    fit_speed,
    fit_validation,
    relative_deviation,
    session_variation,
    target_variation,
)
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


def _database_target() -> dict:
    runs = [
        {"speed": 0.5, "status": "ok", "throughput_study": 2500.0},
        {"speed": 1.0, "status": "ok", "throughput_study": 5800.0},
        {"speed": 0.25, "status": "failed", "throughput_study": None},
    ]
    return {
        "name": "database_baseline_2015", "role": "server", "study": "2015",
        "studies": ["2015"], "value": 1950.0, "side": "client",
        "point": {"servers": 1, "virtual_clients": 40, "queue": {"message_size": 200}},
        "fit": {"model": "affine", "slope": 6600.0, "intercept": -800.0,
                "speed": 2750.0 / 6600.0, "clamped": False},
        "runs": runs,
    }  # fmt: skip


def _points(values: dict[int, float], size: int = 200) -> pd.DataFrame:
    return pd.DataFrame(
        [{"point": f"clients={2 * n}", "side": "client", "type": "all", "servers": 1,
          "virtual_clients": n, "queue.message_size": size, "repetitions": 3,
          "throughput_study_mean": x} for n, x in values.items()]
        + [{"point": "clients=80", "side": "middleware", "type": "all", "servers": 1,
            "virtual_clients": 40, "queue.message_size": size, "repetitions": 3,
            "throughput_study_mean": 9999.0}]
    )  # fmt: skip


def test_each_fit_is_checked_where_a_family_measured_its_target() -> None:
    cal = {"targets": [_database_target()]}
    points = {
        "mq_db_baseline": _points({10: 2433.0, 40: 1632.0}),
        "other_size": _points({40: 1000.0}, size=2000),  # another configuration
        "empty": pd.DataFrame(),
    }
    (row,) = fit_validation(cal, points)
    assert row["prediction"] == pytest.approx(1950.0) and row["prediction_error"] == 0
    assert row["family"]["family"] == "mq_db_baseline"
    assert row["family"]["point"] == "clients=80" and row["family"]["value"] == 1632.0
    assert row["error"] == pytest.approx(1632.0 / 1950.0 - 1)
    # The setup's best load: the same settings at any number of clients.
    assert row["family"]["best_point"] == "clients=20"
    assert row["best_error"] == pytest.approx(2433.0 / 1950.0 - 1)
    # 0.417 lies below the completed runs' 0.5 and 1.0 (the failed 0.25 measured nothing).
    assert row["speeds"] == [0.5, 1.0] and row["extrapolated"]
    assert row["extrapolation"] == pytest.approx(1 - (2750.0 / 6600.0) / 0.5)
    # A family at another scale, or without the role's budget, did not run the model.
    cal |= {"scale": 0.05, "settings": {"studies": {"2015": 0.2}}}
    unscaled = {"mq_db_baseline": points["mq_db_baseline"].assign(scale=1.0)}
    assert fit_validation(cal, unscaled)[0]["family"] is None
    unbudgeted = points["mq_db_baseline"].assign(scale=0.2, **{"budgets_cores.server": None})
    assert fit_validation(cal, {"f": unbudgeted})[0]["family"] is None
    budgeted = unbudgeted.assign(**{"budgets_cores.server": 0.167})
    assert fit_validation(cal, {"f": budgeted})[0]["family"]["value"] == 1632.0
    # Without a family at its configuration only the fit checks it.
    (alone,) = fit_validation(cal, {"other_size": points["other_size"]})
    assert alone["family"] is None and alone["error"] is None


def test_relative_deviation_of_two_sessions() -> None:
    # Two values 1.2 and 1: sd 0.2 / sqrt 2, mean 1.1.
    assert relative_deviation(1.2) == pytest.approx(0.2 / math.sqrt(2) / 1.1)
    assert relative_deviation(1 / 1.2) == pytest.approx(relative_deviation(1.2))
    assert relative_deviation(1.0) == 0
    with pytest.raises(CalibrationError):
        relative_deviation(0.0)


def test_session_variation_per_study_and_role() -> None:
    server = _database_target() | {"name": "server_write_max", "studies": ["2018", "2016"]}
    server["fit"] = {"model": "affine", "slope": 1000.0, "intercept": 0.0, "speed": 0.2}
    cal = {
        "targets": [server],
        "refits": [
            {"name": "server_write_max", "role": "server", "studies": ["2018", "2016"],
             "kept": 0.2, "other": 0.21, "speed": 0.2, "throughput_ratio": 1.2},
            # Not kept here, no shared speed: the factors' ratio stands in.
            {"name": "middleware_max_2016", "role": "middleware", "studies": ["2016"],
             "kept": 0.15, "other": 0.2, "speed": None, "throughput_ratio": None},
        ],
    }  # fmt: skip
    per_target = target_variation(cal)
    # The kept fit at the other factor gives 1.05 times: the runs' 1.2 deviates more.
    assert per_target["server_write_max"] == pytest.approx(relative_deviation(1.2))
    assert per_target["middleware_max_2016"] == pytest.approx(relative_deviation(0.75))
    variation = session_variation(cal)
    assert variation == {
        ("2016", "middleware"): pytest.approx(relative_deviation(0.75)),
        ("2016", "server"): pytest.approx(relative_deviation(1.2)),
        ("2018", "server"): pytest.approx(relative_deviation(1.2)),
    }
    # The operating point deviates more where the runs' speed repeated well.
    cal["refits"][0]["throughput_ratio"] = 1.01
    assert target_variation(cal)["server_write_max"] == pytest.approx(relative_deviation(1.05))
    # One session: nothing repeated, nothing to state.
    assert session_variation({"targets": [server]}) == {}
