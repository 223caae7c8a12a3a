"""Snakemake script of rule r2018_models: the models (analysis.studies.s2018.queueing_models)."""

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2018 import queueing_models
from analysis.studies.s2018.points import log_to, reference, usable


def main(sm) -> None:  # noqa: ANN001
    log_to(sm.log[0])
    i, out = sm.input, sm.output
    write_all, base_all = pd.read_parquet(i.write_points), pd.read_parquet(i.base_points)
    data = queueing_models.Measurements(
        usable(write_all, i.write_points, i.validation),
        write_all,
        pd.read_parquet(i.write_windows),
        pd.read_parquet(i.write_queue),
        usable(base_all, i.base_points, i.validation),
        base_all,
        pd.read_parquet(i.base_windows),
        usable(pd.read_parquet(i.direct_points), i.direct_points, i.validation),
    )
    section, mva_data = queueing_models.report(data, reference(i.reference), out.fig_mm)
    for name, text in section._asdict().items():
        fg.write(getattr(out, name), text)
    mva_data.to_parquet(out.mva_data)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
