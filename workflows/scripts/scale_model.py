"""Snakemake script of rule scale_model_tables: the scale model's tables and numbers
(analysis.report.scale_model_tables) from calibration.json, workflows/machines.yaml, the
families' points (each fit checked where a family measured its target's configuration; the
points the validation kept give ours beside the study numbers left out of the fit, as the
study sections' tables do, at the study's configurations of workflows/reference2018.yaml), the
2016 maximum-throughput and 2015 database-baseline numbers and the scale check's runs."""

import json
from pathlib import Path

import pandas as pd
import yaml

from analysis.calibration import fit_validation, with_validation
from analysis.report.scale_check_factors import check_factor_numbers, role_vcpus
from analysis.report.scale_model_tables import (
    calibration_table,
    check_table,
    fit_check_table,
    numbers,
    parameter_table,
    validation_ours,
    validation_table,
    variation_table,
)
from analysis.scale_model import check
from analysis.validate import usable_points
from common.scalemodel import load_machines


def main(sm) -> None:  # noqa: ANN001
    cal = json.loads(Path(sm.input.calibration[0]).read_text()) if sm.input.calibration else None
    machines = yaml.safe_load(Path(sm.input.machines).read_text())
    if cal is not None:
        # Every study number the machines file keeps for validation, also one listed after
        # this calibration was measured.
        cal = with_validation(cal, load_machines(Path(sm.input.machines)))
    runs = list(sm.input.check)
    check_runs = pd.read_parquet(runs[0]) if runs else pd.DataFrame()
    table = check(check_runs) if runs else pd.DataFrame()
    # A points table's family is its directory's name (data/<family>/points.parquet).
    points = {Path(p).parent.name: pd.read_parquet(p) for p in sm.input.points}
    # The factors the check ran with, beside those of its study's other families.
    study = sm.params.studies.get("scale_check")
    factors = None
    if runs and study is not None:
        factors = check_factor_numbers(
            cal,
            check_runs,
            role_vcpus(machines, study),
            study,
            {f: t for f, t in points.items() if sm.params.studies.get(f) == study},
        )
    fits = None if cal is None else fit_validation(cal, points)
    ours = None
    if cal is not None:
        # The study sections' tables read only the points the validation kept.
        kept = pd.read_parquet(sm.input.validation[0])
        usable = {f: usable_points(t, kept, f) for f, t in points.items()}
        sixteen = json.loads(Path(sm.input.sixteen[0]).read_text())
        fifteen = json.loads(Path(sm.input.fifteen[0]).read_text()) if sm.input.fifteen else {}
        reference = yaml.safe_load(Path(sm.input.reference).read_text())
        ours = validation_ours(cal["validation"], usable, sixteen, fifteen, reference)
    Path(sm.output.calibration).write_text(calibration_table(cal))
    Path(sm.output.validation).write_text(validation_table(cal, ours))
    Path(sm.output.check).write_text(check_table(table))
    Path(sm.output.fits).write_text(fit_check_table(fits))
    Path(sm.output.variation).write_text(variation_table(cal))
    Path(sm.output.parameters).write_text(parameter_table(cal, machines))
    Path(sm.output.numbers).write_text(
        numbers(cal, table, float(sm.params.scale), fits, ours, factors, machines)
    )


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
