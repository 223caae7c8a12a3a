"""Snakemake script: the supplement's bulk tables as CSV beside the report, for readers who
want the numbers rather than the typeset pages: every run's validation, and the runs and time
per experiment family."""

from pathlib import Path

import pandas as pd

from analysis.protocol import family_times


def main(sm) -> None:  # noqa: ANN001
    Path(sm.output.validation).parent.mkdir(parents=True, exist_ok=True)
    pd.read_parquet(sm.input.validation).to_csv(sm.output.validation, index=False)
    family_times(pd.read_parquet(sm.input.runs)).to_csv(sm.output.families, index=False)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
