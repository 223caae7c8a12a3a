"""Snakemake script of rule r2016_replication: the 2016 replication family."""

from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.studies.s2016 import macros, replication


def main(sm) -> None:  # noqa: ANN001
    reference = yaml.safe_load(Path(sm.input.reference).read_text())
    tables = [pd.read_parquet(sm.input[t]) for t in ("points", "runs", "pool_requests")]
    report = replication.report(*tables, reference, sm.output.figure)
    fg.write(sm.output.table, report.table)
    fg.write(sm.output.times_set, report.times_set)
    fg.write(sm.output.times_get, report.times_get)
    macros.write_json(sm.output.numbers, report.numbers)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
