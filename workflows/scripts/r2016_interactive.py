"""Snakemake script of rule r2016_interactive: the interactive law on the 2016 runs."""

from pathlib import Path

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2016 import interactive, macros


def main(sm) -> None:  # noqa: ANN001
    law = interactive.law_table({Path(p).parent.name: pd.read_parquet(p) for p in sm.input.runs})
    interactive.figure(law, sm.output.figure)
    fg.write(sm.output.table, interactive.tabular(law))
    macros.write_json(sm.output.numbers, interactive.numbers(law))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
