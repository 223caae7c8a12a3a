"""Snakemake script of rule scale_model_tables: the scale model's tables and numbers
(analysis.report.scale_model_tables) from calibration.json, workflows/machines.yaml, the
families' points (each fit checked where a family measured its target's configuration) and
the scale check's runs."""

import json
from pathlib import Path

import pandas as pd
import yaml

from analysis.calibration import fit_validation
from analysis.report.scale_model_tables import (
    calibration_table,
    check_table,
    fit_check_table,
    numbers,
    parameter_table,
    validation_table,
    variation_table,
)
from analysis.scaling import check


def main(sm) -> None:  # noqa: ANN001
    cal = json.loads(Path(sm.input.calibration[0]).read_text()) if sm.input.calibration else None
    machines = yaml.safe_load(Path(sm.input.machines).read_text())
    runs = list(sm.input.check)
    table = check(pd.read_parquet(runs[0])) if runs else pd.DataFrame()
    # A points table's family is its directory's name (data/<family>/points.parquet).
    points = {Path(p).parent.name: pd.read_parquet(p) for p in sm.input.points}
    fits = None if cal is None else fit_validation(cal, points)
    Path(sm.output.calibration).write_text(calibration_table(cal))
    Path(sm.output.validation).write_text(validation_table(cal))
    Path(sm.output.check).write_text(check_table(table))
    Path(sm.output.fits).write_text(fit_check_table(fits))
    Path(sm.output.variation).write_text(variation_table(cal))
    Path(sm.output.parameters).write_text(parameter_table(cal, machines))
    Path(sm.output.numbers).write_text(numbers(cal, table, float(sm.params.scale), fits))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
