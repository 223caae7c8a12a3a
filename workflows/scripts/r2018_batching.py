"""Snakemake script of rule r2018_batching: batching workers (analysis.studies.s2018.batching)."""

from analysis.report import figures as fg
from analysis.studies.s2018 import batching
from analysis.studies.s2018.points import log_to, points


def main(sm) -> None:  # noqa: ANN001
    log_to(sm.log[0])
    raw = points(sm.input.points, validation=sm.input.validation)
    for name, text in batching.report(raw, sm.output.fig)._asdict().items():
        fg.write(getattr(sm.output, name), text)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
