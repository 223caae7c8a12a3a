"""Snakemake script of rule r2018_multiget: multi-GETs (analysis.studies.s2018.multiget_report)."""

import pandas as pd

from analysis.report import figures as fg
from analysis.studies.s2018 import multiget_report
from analysis.studies.s2018.points import log_to, reference, usable
from testbed.emulation import rto_min_ms, tbf_args


def main(sm) -> None:  # noqa: ANN001
    log_to(sm.log[0])
    i, out = sm.input, sm.output
    section = multiget_report.report(
        usable(pd.read_parquet(i.points), i.points, i.validation),
        *(pd.read_parquet(p) for p in (i.histograms, i.windows, i.manifests, i.runs)),
        reference(i.reference)["multiget"],
        multiget_report.Figures(out.fig_percentiles, out.fig_hist, out.fig_split),
        tbf_args,
        rto_min_ms,
    )
    for name, text in section._asdict().items():
        fg.write(getattr(out, name), text)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
