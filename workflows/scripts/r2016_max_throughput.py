"""Snakemake script of rule r2016_max_throughput: the 2016 maximum-throughput family."""

from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.studies.s2016 import macros, max_throughput


def main(sm) -> None:  # noqa: ANN001
    ref = yaml.safe_load(Path(sm.input.reference).read_text())
    tables = {t: pd.read_parquet(sm.input[t]) for t in max_throughput.TABLES}
    figures = {f: sm.output[f] for f in max_throughput.FIGURES}
    report = max_throughput.report(tables, ref, figures)
    fg.write(sm.output.table, report.config)
    fg.write(sm.output.grid, report.grid)
    macros.write_json(sm.output.numbers, report.numbers)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
