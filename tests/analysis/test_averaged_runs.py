"""Every table and model of a point averages the runs its statistics average."""

import pandas as pd

from analysis import family
from analysis.studies.s2016.times import averaged_runs


def _runs() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"run": "f/a/rep1", "point": "a", "status": "ok", "stable": True},
            {"run": "f/a/rep2", "point": "a", "status": "ok", "stable": False},  # imprecise
            {"run": "f/a/rep3", "point": "a", "status": "failed", "stable": False},
            {"run": "f/b/rep1", "point": "b", "status": "ok", "stable": False},
            {"run": "f/b/rep2", "point": "b", "status": "ok", "stable": False},
        ]
    )


def test_a_point_with_a_stable_run_leaves_its_unstable_and_failed_runs_out() -> None:
    kept = family.averaged_runs(_runs())
    assert set(kept.loc[kept["point"] == "a", "run"]) == {"f/a/rep1"}


def test_a_point_without_a_stable_run_keeps_its_completed_runs() -> None:
    assert {"f/b/rep1", "f/b/rep2"} <= averaged_runs(_runs())
    assert "f/a/rep2" not in averaged_runs(_runs())
