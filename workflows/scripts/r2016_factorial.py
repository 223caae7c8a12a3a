"""Snakemake script of rule r2016_factorial: the 2016 factorial design beside seed 001's."""

from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.studies.s2016 import factorial, macros


def main(sm) -> None:  # noqa: ANN001
    block = yaml.safe_load(Path(sm.input.reference).read_text())["models"]["factorial"]
    report = factorial.report(pd.read_parquet(sm.input.runs), block, sm.output.diagnostics)
    fg.write(sm.output.table, report.table)
    fg.write(sm.output.seed_table, report.seed_table)
    macros.write_json(sm.output.numbers, report.numbers)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
