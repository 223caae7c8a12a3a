"""Snakemake script: per-family bottlenecks and the findings' verdicts, as tables and macros."""

import dataclasses
import json
import sys
from pathlib import Path

import pandas as pd

from analysis import configurations, construction, findings, sensitivity
from analysis.report import findings as tables
from common import scalemodel


def main(sm) -> None:  # noqa: ANN001
    sys.stderr = Path(sm.log[0]).open("w")  # noqa: SIM115 - the script's lifetime

    data = findings.Data()
    for i, family in enumerate(sm.params.families):
        data.families[family] = {
            name: pd.read_parquet(getattr(sm.input, name)[i])
            for name in (
                "points",
                "runs",
                "histograms",
                "pools",
                "windows",
                "pool_requests",
                "db_counters",
            )
        }
    validation = pd.read_parquet(sm.input.validation)
    data.excluded = findings.unusable_runs(validation)
    data.imprecise = findings.imprecise_runs(validation)
    data.queueing2016 = json.loads(Path(sm.input.queueing2016).read_text())
    data.models2016 = json.loads(Path(sm.input.models2016).read_text())
    data.mva2018 = pd.read_parquet(sm.input.mva2018)
    record = json.loads(Path(sm.input.calibration[0]).read_text()) if sm.input.calibration else {}
    targets = record.get("targets", [])
    data.scenarios = sensitivity.scenarios(record) if record else []
    machines = scalemodel.load_machines(Path(sm.input.machines))
    data.sites = construction.fitted_sites(targets, machines.delay_sites, sm.params.specs)
    data.unfitted = construction.assumed_roles(
        machines.unfitted_why,
        record.get("speed_factors", {}),
        {study: {r: t.name for r, t in roles.items()} for study, roles in machines.studies.items()},
        machines.speed_lower,
    )
    data.shared = configurations.shared(sm.params.specs)
    data.assumed_commits = {
        study: why for study, why in machines.commit_source.items() if why.startswith("assumed")
    }
    data.derived_delays = {
        study: {pair: machines.delays_ms[study][pair] for pair in pairs}
        for study, pairs in machines.delay_sites.items()
    }

    catalogue = findings.load_catalogue(sm.input.catalogue)
    loads = [
        row
        for family, t in data.families.items()
        for row in findings.family_loads(family, t["points"], t.get("pools"))
    ]
    outcomes = findings.evaluate(catalogue, data, loads)

    bottlenecks, rows = tables.bottleneck_table(loads, catalogue)
    Path(sm.output.bottlenecks).write_text(bottlenecks)
    # Each row names the configuration its finding is judged at, where the catalogue says.
    rows_at = tables.judged_at(outcomes, catalogue)
    Path(sm.output.table2018).write_text(tables.findings_table(rows_at, "2018"))
    Path(sm.output.table2016).write_text(tables.findings_table(rows_at, "2016"))
    Path(sm.output.table2015).write_text(tables.findings_table(rows_at, "2015"))
    for study in ("2018", "2016", "2015"):
        untested = sm.output[f"untested{study}"]
        Path(untested).write_text(tables.untested_table(catalogue, study))
    Path(sm.output.rules).write_text(tables.rules_table(catalogue))
    Path(sm.output.numbers).write_text(tables.numbers(outcomes, rows))
    Path(sm.output.data).write_text(
        json.dumps(
            {"bottlenecks": rows, "findings": [dataclasses.asdict(o) for o in outcomes]},
            indent=1,
            default=str,
        )
    )


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
