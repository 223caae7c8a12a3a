"""Snakemake script of rule run_tables: the runs' manifests as the reproduction appendix's
per-run times (analysis.protocol.run_times) and the testbed section's per-run hosts
(analysis.testbed_summary.runs_table)."""

from pathlib import Path

from analysis.protocol import run_times
from analysis.testbed_summary import runs_table


def main(sm) -> None:  # noqa: ANN001
    manifests = [Path(p) for p in sm.input.runs]
    run_times(Path(sm.params.results), manifests).to_parquet(sm.output.run_times, index=False)
    runs_table(manifests).to_parquet(sm.output.testbed_runs, index=False)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
