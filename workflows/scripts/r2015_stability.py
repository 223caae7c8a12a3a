"""Snakemake script of rule r2015_stability: the long run's throughput and the database's
dead tuples and autovacuums (seed 003 §3.1)."""

from analysis.report.numbers import write_report
from analysis.studies.s2015 import stability
from analysis.studies.s2015.common import read_tables

TABLES = ("mq_stability_points", "mq_stability_windows", "mq_stability_db_counters")


def main(sm) -> None:  # noqa: ANN001
    t = read_tables(sm.input, TABLES)
    points, windows, db = (t[name] for name in TABLES)
    report = stability.report(points, windows, db, sm.output.figure)
    write_report(sm.output, report)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
