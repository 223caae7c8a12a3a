"""Snakemake script of rule r2018_factorial: 2^k r designs (analysis.studies.s2018.factorial)."""

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2018 import factorial
from analysis.studies.s2018.points import log_to, reference


def main(sm) -> None:  # noqa: ANN001
    log_to(sm.log[0])
    out = sm.output
    ref = reference(sm.input.reference)["factorial"]
    section = factorial.report(pd.read_parquet(sm.input.runs), ref, out.fig_read, out.fig_write)
    for name, text in section._asdict().items():
        fg.write(getattr(out, name), text)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
