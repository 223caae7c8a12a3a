"""Snakemake script of rule r2015_throughput: Table 2, its drop and what explains the drop
(seed 003 §3.2)."""

from pathlib import Path

import yaml

from analysis.report.numbers import Report, write_report
from analysis.studies.s2015 import baseline, drop, table2
from analysis.studies.s2015.common import read_tables

TABLES = ("mq_db_baseline_points", "mq_throughput_points", "mq_throughput_runs",
          "mq_throughput_db_counters", "mq_throughput_windows")  # fmt: skip


def main(sm) -> None:  # noqa: ANN001
    reference = yaml.safe_load(Path(sm.input.reference).read_text())
    t = read_tables(sm.input, TABLES)
    database = baseline.database_curve(t["mq_db_baseline_points"])
    cells = table2.report(t["mq_throughput_points"], reference, database)
    why = drop.report(t["mq_throughput_points"], t["mq_throughput_db_counters"],
                      t["mq_throughput_runs"], t["mq_throughput_windows"])  # fmt: skip
    write_report(sm.output, Report({**cells.tex, **why.tex}, {**cells.numbers, **why.numbers}))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
