"""Snakemake script of rule r2015_baseline: the database baseline (seed 003 §1.1.4)."""

from pathlib import Path

import yaml

from analysis.report.numbers import Report, write_report
from analysis.studies.s2015 import baseline, seed
from analysis.studies.s2015.common import read_tables


def main(sm) -> None:  # noqa: ANN001
    reference = yaml.safe_load(Path(sm.input.reference).read_text())
    t = read_tables(sm.input, ("mq_db_baseline_points",))
    cores = int(reference["machines"]["vcpus"])
    report = baseline.report(t["mq_db_baseline_points"], reference, sm.output.figure, cores)
    write_report(sm.output, Report(report.tex, {**report.numbers, **seed.numbers(reference)}))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
