"""Snakemake script: the experimental-setup section's tables, from the catalogue and profile
(mwlab.plan_tables)."""

from pathlib import Path

from mwlab.catalogue import expand, load_catalogue, load_profile
from mwlab.plan_tables import catalogue_macros, render


def main(sm) -> None:  # noqa: ANN001
    profile = load_profile(dict(sm.config))
    families = load_catalogue(Path(sm.input.catalogue))
    plan = expand(families, profile)
    Path(sm.output.tex).write_text(render(families, plan, profile))
    Path(sm.output.numbers).write_text(catalogue_macros(families, plan, profile))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
