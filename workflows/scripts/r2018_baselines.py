"""Snakemake script of rule r2018_baselines: the baselines (analysis.studies.s2018.baselines)."""

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2018 import baselines
from analysis.studies.s2018.points import log_to, points, reference


def main(sm) -> None:  # noqa: ANN001
    log_to(sm.log[0])
    i, out = sm.input, sm.output
    figures = baselines.Figures(
        out.fig_direct, out.fig_mw1, out.fig_mw2, out.fig_law, out.fig_mw_stats, out.fig_law_mod
    )
    section = baselines.report(
        points(i.direct, validation=i.validation),
        points(i.middleware, validation=i.validation),
        pd.read_parquet(i.queue),
        pd.read_parquet(i.windows),
        reference(i.reference),
        figures,
    )
    for name, text in section._asdict().items():
        fg.write(getattr(out, name), text)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
