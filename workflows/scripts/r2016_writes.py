"""Snakemake script of rule r2016_writes: the 2016 write-ratio family."""

from pathlib import Path

import pandas as pd
import yaml

from analysis.studies.s2016 import macros, writes


def main(sm) -> None:  # noqa: ANN001
    reference = yaml.safe_load(Path(sm.input.reference).read_text())
    tables = {t: pd.read_parquet(sm.input[t]) for t in writes.TABLES}
    macros.write_report(sm.output, writes.report(tables, reference, sm.output.figure))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
