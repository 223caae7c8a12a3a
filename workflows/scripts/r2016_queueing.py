"""Snakemake script of rule r2016_queueing: the 2016 design's queueing models."""

from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.studies.s2016 import macros
from analysis.studies.s2016 import queueing as q


def main(sm) -> None:  # noqa: ANN001
    seed_models = yaml.safe_load(Path(sm.input.reference).read_text())["models"]
    top = {t: pd.read_parquet(sm.input[f"max_{t}"]) for t in q.MAX_TABLES}
    repl = {t: pd.read_parquet(sm.input[f"repl_{t}"]) for t in q.REPLICATION_TABLES}
    report = q.report(top, repl, seed_models, sm.output.mva_figure)
    fg.write(sm.output.open_table, report.open.tabular)
    fg.write(sm.output.mmm_table, report.mmm.tabular)
    fg.write(sm.output.mva_table, report.mva.tabular)
    fg.write(sm.output.mva_seed_table, report.mva_seed.tabular)
    macros.write_json(sm.output.numbers, report.numbers)
    macros.write_json(sm.output.models, report.models)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
