"""Queue and server times of the GET parts at one point, over its ok runs."""

from __future__ import annotations

import pandas as pd

from analysis.studies.s2016.times import get_part_times


def requests() -> pd.DataFrame:
    rows = []
    for run, rep, queue in (("f/p/rep1", 1, 100.0), ("f/p/rep2", 2, 900.0)):
        for kind, factor in (("get", 1.0), ("set", 10.0)):
            values = {
                f"{m}_us_{q}": v * factor
                for m, v in (("queue", queue), ("server", 50.0), ("response", 200.0))
                for q in ("mean", "p50", "p90", "p99")
            }
            rows.append(
                {
                    "run": run,
                    "point": "p",
                    "repetition": rep,
                    "pool": "read",
                    "type": kind,
                    "count": 4,
                    **values,
                    "queue_us_var": 0.0,
                    "server_us_var": 0.0,
                    "response_us_var": 0.0,
                }
            )
    return pd.DataFrame(rows)


def test_the_gets_of_the_points_ok_runs_only() -> None:
    part = get_part_times(requests(), {"f/p/rep1"}, "p")
    assert part["queue"]["p50"] == 100.0  # rep2 (not ok) and the sets left out
    assert part["server"]["p90"] == 50.0
    both = get_part_times(requests(), {"f/p/rep1", "f/p/rep2"}, "p")
    assert both["queue"]["p50"] == 500.0  # the mean over the runs


def test_a_point_without_gets_has_empty_times() -> None:
    part = get_part_times(requests(), {"f/p/rep1"}, "elsewhere")
    assert part["queue"].empty and part["server"].empty
