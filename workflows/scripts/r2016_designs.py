"""Snakemake script of rule r2016_designs: the 2016 grid on both middleware designs."""

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2016 import designs, macros


def main(sm) -> None:  # noqa: ANN001
    tables = [pd.read_parquet(sm.input[t]) for t in ("points", "runs", "pools", "middlewares")]
    table, numbers = designs.report(*tables, sm.output.figure)
    fg.write(sm.output.table, table)
    macros.write_json(sm.output.numbers, numbers)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
