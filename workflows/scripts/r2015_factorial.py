"""Snakemake script of rule r2015_factorial: the 2^4 design's allocation of variation (seed
003 §3.5) and the response-time distributions of its points (§3.4)."""

from analysis.report.numbers import Report, write_report
from analysis.studies.s2015 import distributions, factorial
from analysis.studies.s2015.common import read_tables

TABLES = ("mq_factorial_runs", "mq_factorial_points", "mq_factorial_histograms")


def main(sm) -> None:  # noqa: ANN001
    t = read_tables(sm.input, TABLES)
    design = factorial.report(t["mq_factorial_runs"])
    spread = distributions.report(t["mq_factorial_histograms"], t["mq_factorial_points"])
    write_report(
        sm.output,
        Report(
            {"table": design.tex["table"], "distributions": spread.tex["table"]},
            {**design.numbers, **spread.numbers},
        ),
    )


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
