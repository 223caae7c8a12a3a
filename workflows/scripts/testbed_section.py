"""Snakemake script: the macros and the table of the "Testbed and deviations" section."""

import json
import sys
from pathlib import Path

import pandas as pd

from analysis import provenance, testbed_summary


def main(sm) -> None:  # noqa: ANN001
    sys.stderr = Path(sm.log[0]).open("w")  # noqa: SIM115 - the script's lifetime
    runs = pd.read_parquet(sm.input.runs)
    machine = json.loads(Path(sm.input.host).read_text())
    check_path = Path(sm.params.delay_check)
    check = json.loads(check_path.read_text()) if check_path.exists() else None
    # The provenance names each study's machine; the environment, one measurement's.
    kernel = provenance.kernels(json.loads(Path(sm.input.provenance).read_text()), machine)
    Path(sm.output.numbers).write_text(testbed_summary.numbers(runs, machine, check, kernel))
    Path(sm.output.table).write_text(testbed_summary.table(runs))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
