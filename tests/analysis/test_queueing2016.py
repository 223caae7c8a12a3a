"""The 2016 models' report parts on hand-made inputs: a point's design, and the M/M/m table
beside the seed's (layout, the seed's utilisation, the mean errors and wait shares)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.models import validity as vd
from analysis.studies.s2016 import mva as mva2016
from analysis.studies.s2016.queueing import (
    BEYOND_POOL,
    beyond_numbers,
    mmm_rows,
    mmm_table,
    mmm_validity_numbers,
    predicted_busy,
)


def test_design_of_a_point_reads_replication_and_write_share() -> None:
    row = pd.Series({"servers": 3, "middleware.workers": 8, "middleware.replication": 2,
                     "workload.ratio": "1:9"})  # fmt: skip
    assert mva2016.design_of(row) == mva2016.Design(3, 8, 2, 0.1)
    # No replication setting: every server holds every key.
    assert mva2016.design_of(row.drop("middleware.replication")).replication == 3
    with pytest.raises(ValueError, match="S:G"):
        mva2016.design_of(row.replace({"1:9": "half"}))


SEED = {
    "table": "Table 2",
    "config": {"clients": 180, "threads_per_pool": 16, "writes_percent": 5},
    "servers": {
        3: {
            "m": 51,
            "arrival_rate": 5100.0,
            "service_rate": 200.0,
            "predicted": {"mean_response_time": 5.0},
            "actual": {"mean_response_time": 10.0, "mean_waiting_time": 4.0},
        }
    },
}


def test_mmm_table_sets_ours_beside_the_seeds_servers() -> None:
    model = {"servers": 34, "mean_response_time": 0.003, "utilization": 0.5}
    measured = {"mean_response_time": 0.004, "mean_waiting_time": 0.001, "point": "p"}
    part = mmm_table({2: (model, measured)}, SEED)
    text = part.tabular
    # A number of servers only one side ran has only that side's columns.
    assert text.startswith(r"\begin{tabular}{lrrrr}")
    assert r"\multicolumn{2}{c}{$S=2$} & \multicolumn{2}{c}{$S=3$}" in text
    assert r"\cmidrule(lr){2-3} \cmidrule(lr){4-5}" in text
    assert r" & model & meas. & seed & s.\ meas. \\" in text
    # Ours in ms; the seed's utilisation from its lambda, mu and m: 5100 / (51 * 200).
    assert r"Response time, mean (ms) & 3.000 & 4.000 & 5.000 & 10.000" in text
    assert r"Utilisation $\rho$ & 0.500 & -- & 0.500 & --" in text
    assert r"\caption" not in text
    n = part.numbers
    assert n["SixteenMMmMeanError"] == r"-25.0\,\%"
    assert n["SixteenSeedMMmError"] == r"-50.0\,\%"
    assert n["SixteenMMmWaitShare"] == r"25.0\,\%"
    assert n["SixteenSeedMMmWaitShare"] == r"40.0\,\%"
    assert n["SixteenMMmServerLevels"] == "2"
    assert n["SixteenSeedMMmClients"] == "180"


def mmm_row(wait_ms: float, response_ms: float, rho: float) -> tuple[dict, dict]:
    """A solved M/M/m row (times in s) beside measurements of 16 ms, 11 of them waiting."""
    model = {"servers": 75, "utilization": rho, "mean_waiting_time": wait_ms / 1e3,
             "mean_response_time": response_ms / 1e3}  # fmt: skip
    return model, {"mean_response_time": 0.016, "mean_waiting_time": 0.011}


def test_the_mmm_rows_that_barely_queue_are_told_from_those_that_queue() -> None:
    # S = 3 near saturation queues (3.355 of 8.439 ms); S = 5 waits 0.5 % of its time.
    ours = {3: mmm_row(3.355, 8.439, 0.983), 5: mmm_row(0.028, 6.112, 0.866)}
    n = mmm_rows(ours, SEED)
    assert n["SixteenMMmIdleCase"] == "some"
    assert n["SixteenMMmIdleLimit"] == r"5\,\%"
    assert n["SixteenMMmIdleRows"] == (
        r"\SixteenMMmRow{5}{75}{0.866}{0.028}{6.112}{-61.8\,\%}{68.8\,\%}"
    )
    assert n["SixteenMMmBusyRows"] == (
        r"\SixteenMMmRow{3}{75}{0.983}{3.355}{8.439}{-47.3\,\%}{68.8\,\%}"
    )
    # Both models wait less than the measurements. A seed's row that gives no model wait is
    # not said to barely queue; one that gives 0 is.
    assert (n["SixteenSeedMMmIdleCase"], n["SixteenMMmUnderCase"]) == ("none", "under")
    (three,) = SEED["servers"].values()
    waiting = {**three, "predicted": {"mean_response_time": 5.0, "mean_waiting_time": 0.0}}
    seed = {**SEED, "servers": {3: waiting}}
    assert mmm_rows(ours, seed)["SixteenSeedMMmIdleCase"] == "all"
    assert mmm_rows({5: ours[5]}, SEED)["SixteenMMmIdleCase"] == "all"
    only_busy = mmm_rows({3: ours[3]}, SEED)
    assert (only_busy["SixteenMMmIdleCase"], only_busy["SixteenMMmIdleRows"]) == ("none", "")
    # A model waiting longer than the requests did is not said to hold less of the wait.
    assert mmm_rows({3: mmm_row(12.0, 17.0, 0.99)}, SEED)["SixteenMMmUnderCase"] == "mixed"
    # An unstable row (no solution) is described by neither kind.
    unsolved = mmm_rows({7: ({"servers": 175}, ours[3][1])}, SEED)
    assert (unsolved["SixteenMMmIdleCase"], unsolved["SixteenMMmBusyRows"]) == ("unsolved", "")
    assert unsolved["SixteenMMmUnderCase"] == "mixed"


def test_the_open_mmm_names_the_check_it_fails() -> None:
    # Within the tolerance at the lightest load, but waiting 1 % of its response time: it
    # restates its recipe, its error about minus the measured wait share (60 %).
    model = {"mean_waiting_time": 0.01, "mean_response_time": 1.0}
    measured = {"mean_waiting_time": 1.5, "mean_response_time": 2.5}
    v = vd.judge("M/M/4", -0.01, "light", (vd.servers(4, 4), vd.idle(0.01, 1.0, 0.6)))
    n = mmm_validity_numbers(v, model, measured)
    assert not v.valid
    assert (n["SixteenMMmLightestCase"], n["SixteenMMmIdleCheckCase"]) == ("within", "restates")
    assert (n["SixteenMMmModelWaitShare"], n["SixteenMMmPointWaitShare"]) == (
        r"1.0\,\%",
        r"60.0\,\%",
    )
    assert n["SixteenMMmOtherWhy"] == ""
    # Beyond the tolerance, queueing, with servers that are not the pools' threads.
    v = vd.judge("M/M/4", -0.5, "light", (vd.servers(4, 8), vd.idle(0.5, 1.0, 0.6)))
    n = mmm_validity_numbers(v, {"mean_waiting_time": 0.5, "mean_response_time": 1.0}, measured)
    assert (n["SixteenMMmLightestCase"], n["SixteenMMmIdleCheckCase"]) == ("beyond", "differs")
    assert n["SixteenMMmOtherWhy"] == "its servers are not the read threads the pools ran"


def test_a_predicted_busy_fraction_above_one_is_marked() -> None:
    # No pool of T threads is busy more than all the time: the model is outside its validity.
    assert predicted_busy(0.6) == "60\\,\\%"
    assert predicted_busy(1.0) == "100\\,\\%"
    assert predicted_busy(9.72) == "972\\,\\%" + BEYOND_POOL
    assert beyond_numbers(0, 8)["SixteenMVABeyondCase"] == "within"
    assert beyond_numbers(5, 8) == {
        "SixteenMVABeyondCase": "beyond",
        "SixteenMVABeyond": "5",
        "SixteenMVAPoints": "8",
    }
