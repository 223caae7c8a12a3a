"""Snakemake script of rule r2015_pop: naive pop against SKIP LOCKED, with the database's
wait events and the middleware's empty pops."""

from analysis.report.numbers import write_report
from analysis.studies.s2015 import pop
from analysis.studies.s2015.common import read_tables

TABLES = (
    "mq_pop_strategy_points",
    "mq_pop_strategy_runs",
    "mq_pop_strategy_db_counters",
    "mq_pop_strategy_windows",
)


def main(sm) -> None:  # noqa: ANN001
    t = read_tables(sm.input, TABLES)
    points, runs, db, windows = (t[name] for name in TABLES)
    report = pop.report(points, db, runs, windows, sm.output.figure)
    write_report(sm.output, report)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
