"""The queueing-models section (analysis.studies.s2018.queueing_models) from the small write
experiment and baselines of conftest.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.studies.s2018 import mva_tables, queueing_models


def test_report_joins_the_open_and_the_closed_models(
    write_experiment: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
    baselines: tuple[pd.DataFrame, ...],
    base_windows: pd.DataFrame,
    reference2018: dict,
    tmp_path: Path,
) -> None:
    write_points, write_windows, write_queue = write_experiment
    direct, base = baselines[:2]
    # A point the validation dropped stays in the tables its windows take their scale from.
    kept = base[~base["point"].str.endswith("-8-6")]
    data = queueing_models.Measurements(
        write_points, write_points, write_windows, write_queue, kept, base, base_windows, direct
    )
    fig = tmp_path / "mm.pdf"
    section, mva_data = queueing_models.report(data, reference2018, str(fig))
    assert fig.stat().st_size > 0
    assert section._fields == (
        "table_mm1", "table_mmm", "table_mva", "table_util", "table_comp_one", "table_comp_two",
        "table_seeds", "numbers",
    )  # fmt: skip
    # The open models' macros first, then the closed network's.
    n = section.numbers
    assert (
        n.index("\\ModelMMPoints}{2}")
        < n.index("\\ModelCompClientsSix}")
        < n.index("\\ModelMvaCases}{4}")
    )
    assert list(mva_data.columns) == mva_tables.DATA_COLUMNS
    assert len(mva_data) == 8 and set(mva_data["clients"]) == {6, 48}
    assert "one middleware & write-only & 48 & " in section.table_seeds
