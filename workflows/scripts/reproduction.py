"""Snakemake script: the reproduction appendix's table of runs and time per family, the
run protocol's numbers, and the time the default profile's full grids would take
(analysis.report.reproduction, analysis.protocol)."""

from pathlib import Path

import pandas as pd
import yaml

from analysis.protocol import family_times, predict, stage_breakdown
from analysis.report.reproduction import memaslap_macros, prediction_macros, render
from mwlab.catalogue import load_catalogue
from mwlab.plan_tables import planned


def main(sm) -> None:  # noqa: ANN001
    runs = pd.read_parquet(sm.input.runs)
    run = sm.config.get("run", {})
    table, numbers = render(
        family_times(runs), stage_breakdown(runs), runs, sm.config["profile"],
        int(run.get("reruns", 2)), float(run.get("longest_rerun", 1.0)),
    )  # fmt: skip
    catalogue = load_catalogue(Path(sm.input.catalogue))
    driven = {name for name, f in catalogue.items() if f.fixed.get("driver") == "memaslap"}
    numbers += memaslap_macros(family_times(runs), driven)
    plan = planned(Path(sm.input.predicted), Path(sm.input.catalogue))
    name = str(yaml.safe_load(Path(sm.input.predicted).read_text())["profile"])
    numbers += prediction_macros(name, predict(runs, plan))
    Path(sm.output.table).write_text(table)
    Path(sm.output.numbers).write_text(numbers)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
