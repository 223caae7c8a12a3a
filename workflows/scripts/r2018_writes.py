"""Snakemake script of rule r2018_writes: the write experiment (analysis.studies.s2018.writes)."""

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2018 import writes
from analysis.studies.s2018.points import log_to, points, reference


def main(sm) -> None:  # noqa: ANN001
    log_to(sm.log[0])
    i, out = sm.input, sm.output
    section = writes.report(
        points(i.points, validation=i.validation),
        pd.read_parquet(i.queue),
        pd.read_parquet(i.windows, columns=["run", "side", "window"]),
        reference(i.reference),
        out.fig,
    )
    for name, text in section._asdict().items():
        fg.write(getattr(out, name), text)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
