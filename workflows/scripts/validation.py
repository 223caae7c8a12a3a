"""Snakemake script of rule validation: checks every run (analysis.validate) and writes the
appendix's per-family summary, its per-run rows and its numbers (analysis.report.validation)."""

from pathlib import Path

import pandas as pd

from analysis.report.validation import lengths_tabular, numbers, run_rows, summary_tabular
from analysis.validate import check_runs, family_summary, run_lengths, with_point_reruns


def main(sm) -> None:  # noqa: ANN001
    parts = []
    inputs = zip(sm.input.runs, sm.input.manifests, sm.input.windows, strict=True)
    for runs_path, manifests_path, windows_path in inputs:
        runs, manifests, windows = (
            pd.read_parquet(p) for p in (runs_path, manifests_path, windows_path)
        )
        parts.append(check_runs(runs, manifests, Path(runs_path).parent.name, windows))
    table = with_point_reruns(
        pd.concat(parts, ignore_index=True), pd.read_parquet(sm.input.run_times)
    )
    table.to_parquet(sm.output.table, index=False)
    Path(sm.output.tex).write_text(run_rows(table))
    Path(sm.output.summary).write_text(summary_tabular(family_summary(table)))
    Path(sm.output.lengths).write_text(lengths_tabular(run_lengths(table)))
    Path(sm.output.numbers).write_text(numbers(table, dict(sm.params.studies)))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
