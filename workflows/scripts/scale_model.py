"""Snakemake script of rule scale_model_tables: the scale model's tables and numbers
(analysis.report.scale_model_tables) from calibration.json and the scale check's points."""

import json
from pathlib import Path

import pandas as pd

from analysis.report.scale_model_tables import (
    calibration_table,
    check_table,
    numbers,
    validation_table,
)
from analysis.scaling import agreement


def main(sm) -> None:  # noqa: ANN001
    cal = json.loads(Path(sm.input.calibration[0]).read_text()) if sm.input.calibration else None
    check = list(sm.input.check)
    table = agreement(pd.read_parquet(check[0])) if check else pd.DataFrame()
    Path(sm.output.calibration).write_text(calibration_table(cal))
    Path(sm.output.validation).write_text(validation_table(cal))
    Path(sm.output.check).write_text(check_table(table))
    Path(sm.output.numbers).write_text(numbers(cal, table, float(sm.params.scale)))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
