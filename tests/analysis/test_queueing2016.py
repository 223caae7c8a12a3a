"""The 2016 models' report parts on hand-made inputs: a point's design, and the M/M/m table
beside the seed's (layout, the seed's utilisation, the mean errors and wait shares)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.studies.s2016 import mva as mva2016
from analysis.studies.s2016.queueing import BEYOND_POOL, beyond_numbers, mmm_table, predicted_busy


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
