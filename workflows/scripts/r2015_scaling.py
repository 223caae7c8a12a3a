"""Snakemake script of rule r2015_scaling: the scaling families and their models (seed 003
§3.3)."""

from analysis.report.numbers import write_report
from analysis.studies.s2015 import scaling
from analysis.studies.s2015.common import read_tables

TABLES = ("mq_db_baseline_points", "mq_scale_clients_points", "mq_scale_workers_points")


def main(sm) -> None:  # noqa: ANN001
    t = read_tables(sm.input, TABLES)
    report = scaling.report(t["mq_scale_clients_points"], t["mq_scale_workers_points"],
                            t["mq_db_baseline_points"], sm.output.figure)  # fmt: skip
    write_report(sm.output, report)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
