"""The scale model: budgets, caps and delays of the study's machines at one scale factor."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from common import scalemodel
from common.scalemodel import ScaleModelError, load_machines
from testbed import scaledpoint

MACHINES = load_machines()
BIG_2016 = {"servers": 7, "middlewares": 1, "client_machines": 3, "hosts": "emulated"}


def test_budgets_are_vcpus_times_scale_times_speed() -> None:
    speed = {"server": 0.5, "client": 0.25, "middleware": 0.75}
    assert scalemodel.budgets_cores(MACHINES, 2018, 0.04, speed) == {
        "server": 0.02,  # Basic A1: 1 vCPU
        "client": 0.02,  # Basic A2: 2 vCPU
        "middleware": 0.24,  # Basic A4: 8 vCPU
    }
    # 2016's servers are Basic A2.
    assert scalemodel.budgets_cores(MACHINES, "2016", 0.04, speed)["server"] == 0.04


def test_caps_and_delays_scale_with_the_factor() -> None:
    assert scalemodel.caps_mbit(MACHINES, 2018, 0.5) == {
        "server": 50.5,
        "client": 100.5,
        "middleware": 401.0,
    }
    # 2016 has no link measurement: its A2 servers take the A2 capacity 2018 measured.
    assert scalemodel.caps_mbit(MACHINES, 2016, 1)["server"] == 201
    delays = scalemodel.delays_ms(MACHINES, 2018, 0.04)
    assert delays == {"client_middleware": 18.75, "middleware_server": 7.5, "client_server": 7.5}
    # 2016's own middleware-server delay (seed 000's thread-bound plateau at 8 threads per
    # pool); the other pairs keep the delays both studies share.
    delays = scalemodel.delays_ms(MACHINES, "2016", 0.04)
    assert delays == {"client_middleware": 18.75, "middleware_server": 62.5, "client_server": 7.5}
    with pytest.raises(ScaleModelError, match="no machines for study 2017"):
        scalemodel.delays_ms(MACHINES, 2017, 0.04)


def test_a_delay_of_an_unknown_study_is_refused(tmp_path: Path) -> None:
    doc = yaml.safe_load(scalemodel.MACHINES.read_text())
    doc["delays_ms"]["middleware_server"]["studies"]["2017"] = {"one_way_ms": 1, "source": "x"}
    path = tmp_path / "machines.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ScaleModelError, match=r"delays_ms.middleware_server names unknown"):
        load_machines(path)


def test_rescaling_undoes_the_dilation() -> None:
    assert scalemodel.throughput_study(400.0, 0.04) == pytest.approx(10000.0)
    assert scalemodel.time_study(250.0, 0.04) == pytest.approx(10.0)
    with pytest.raises(ScaleModelError, match="scale factor"):
        scalemodel.throughput_study(1.0, 0.0)
    with pytest.raises(ScaleModelError, match="scale factor"):
        scalemodel.caps_mbit(MACHINES, 2018, 1.5)


def test_client_follows_its_rule() -> None:
    fitted = {
        "server_write_max": 0.3,
        "middleware_write_plateau": 0.6,
        "middleware_max_2016": 0.1,
        "database_baseline_2015": 0.2,
    }
    factors = scalemodel.speed_factors(MACHINES, fitted)
    # Our load generator is not the study's: clients run without a budget.
    assert MACHINES.client_same_as == "unbudgeted"
    assert factors["2018"] == {"server": 0.3, "middleware": 0.6, "client": None}
    budgets = scalemodel.budgets_cores(MACHINES, 2018, 0.04, factors["2018"])
    assert budgets == {"server": 0.012, "middleware": 0.192, "client": None}
    with pytest.raises(ScaleModelError, match="middleware_max_2016"):
        scalemodel.speed_factors(
            MACHINES,
            {"server_write_max": 0.3, "middleware_write_plateau": 0.6, "database_baseline_2015": 1},
        )


def test_each_study_takes_the_factor_of_the_target_that_serves_it() -> None:
    fitted = {
        "server_write_max": 0.3,
        "middleware_write_plateau": 0.6,
        "middleware_max_2016": 0.1,
        "database_baseline_2015": 0.2,
    }
    factors = scalemodel.speed_factors(MACHINES, fitted)
    # One server target serves both studies; each design's middleware has its own.
    assert factors["2016"] == {"server": 0.3, "middleware": 0.1, "client": None}
    assert scalemodel.budgets_cores(MACHINES, 2016, 0.05, factors["2016"])["middleware"] == 0.04
    # 2015: PostgreSQL has its own target; no study number isolates SimpleMQ's middleware,
    # which takes the upper bound.
    assert factors["2015"] == {"server": 0.2, "middleware": MACHINES.speed_upper, "client": None}


def test_the_2015_database_waits_out_the_study_s_disk_write() -> None:
    # 1 ms of the study's disk lasts 20 ms at s = 0.05: PostgreSQL's commit_delay.
    assert scalemodel.commit_delay_ms(MACHINES, 2015, 0.05) == pytest.approx(20.0)
    assert scalemodel.commit_delay_ms(MACHINES, 2018, 0.05) is None


def test_an_unfitted_role_served_by_a_target_is_refused(tmp_path: Path) -> None:
    doc = yaml.safe_load(scalemodel.MACHINES.read_text())
    doc["calibration"]["targets"]["middleware_write_plateau"]["studies"] = [2018, 2015]
    path = tmp_path / "machines.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ScaleModelError, match="middlewares of study 2015 are unfitted"):
        load_machines(path)


def test_a_role_left_without_a_target_or_with_two_is_refused(tmp_path: Path) -> None:
    doc = yaml.safe_load(scalemodel.MACHINES.read_text())
    targets = doc["calibration"]["targets"]
    del targets["middleware_max_2016"]
    path = tmp_path / "machines.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ScaleModelError, match="middlewares of study 2016 need exactly one"):
        load_machines(path)
    doc = yaml.safe_load(scalemodel.MACHINES.read_text())
    doc["calibration"]["targets"]["middleware_write_plateau"]["studies"] = [2018, 2016]
    path.write_text(yaml.safe_dump(doc))
    both = re.escape("got ['middleware_max_2016', 'middleware_write_plateau']")
    with pytest.raises(ScaleModelError, match=both):
        load_machines(path)


def test_the_largest_point_fits_two_cores_at_the_default_scale_only(monkeypatch) -> None:
    monkeypatch.setattr(scaledpoint, "machine_cores", lambda: 2)
    fields = scaledpoint.plan_fields(MACHINES, 2016, 0.04, BIG_2016, "big")
    assert fields["scale"] == 0.04
    with pytest.raises(ScaleModelError, match="do not fit"):
        # Unbudgeted clients: 1 A4 + 7 A2 servers = 22 vCPU x 0.08 = 1.76 > 2 - 0.4.
        scaledpoint.plan_fields(MACHINES, 2016, 0.08, BIG_2016, "big")


def test_calibrated_budgets_come_from_calibration_json(tmp_path: Path) -> None:
    cal = tmp_path / "calibration.json"
    cal.write_text(
        '{"speed_factors": {"2016": {"server": 0.5, "client": 0.5, "middleware": 0.25},'
        ' "2018": {"server": 0.5, "client": 0.5, "middleware": 0.75}}}'
    )
    spec = {**BIG_2016, "name": "p", "scale": 0.04}
    out = scaledpoint.calibrated(spec, 2016, cal)
    assert out["budgets_cores"] == {"server": 0.04, "client": 0.04, "middleware": 0.08}
    assert "budgets_cores" not in spec
    cal.write_text('{"speed_factors": {"2016": {"server": 0.5}}}')
    with pytest.raises(ScaleModelError, match=r"speed_factors\.2016 must name"):
        scaledpoint.calibrated(spec, 2016, cal)
    with pytest.raises(ScaleModelError, match="no speed factors for study 2018"):
        scaledpoint.calibrated(spec, 2018, cal)


def _machines_copy(tmp_path: Path, edit) -> Path:
    doc = yaml.safe_load(scalemodel.MACHINES.read_text())
    edit(doc)
    path = tmp_path / "machines.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_calibration_target_listed_for_validation_is_refused(tmp_path: Path) -> None:
    def edit(doc):
        target = doc["calibration"]["targets"]["server_write_max"]
        doc["validation"]["again"] = {"reference": target["reference"], "source": "x"}

    with pytest.raises(ScaleModelError, match="also listed for validation"):
        load_machines(_machines_copy(tmp_path, edit))


def test_unknown_machine_type_and_bad_reference_are_named(tmp_path: Path) -> None:
    def unknown(doc):
        doc["studies"]["2018"]["roles"]["server"] = "basic_a9"

    with pytest.raises(ScaleModelError, match="basic_a9"):
        load_machines(_machines_copy(tmp_path, unknown))

    def missing(doc):
        doc["validation"]["nowhere"] = {
            "reference": {"file": "reference2018.yaml", "path": ["writes", 12]},
            "source": "x",
        }

    with pytest.raises(ScaleModelError, match=r"no writes\.12"):
        load_machines(_machines_copy(tmp_path, missing))

    def no_vcpus(doc):
        del doc["machine_types"]["basic_a1"]["vcpus"]

    with pytest.raises(ScaleModelError, match="vcpus"):
        load_machines(_machines_copy(tmp_path, no_vcpus))


def test_a_validation_number_follows_only_a_calibration_target(tmp_path: Path) -> None:
    # The Table 5 response time at the fitted plateau is N / X of that target.
    assert MACHINES.validation["one_middleware_write_response"].follows == (
        "middleware_write_plateau"
    )

    def edit(doc: dict) -> None:
        doc["validation"]["one_middleware_write_response"]["follows"] = "no_such_target"

    with pytest.raises(ScaleModelError, match="follows 'no_such_target', which is no"):
        load_machines(_machines_copy(tmp_path, edit))
