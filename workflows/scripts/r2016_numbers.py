"""Snakemake script of rule r2016_numbers: the 2016 section's numbers as LaTeX macros."""

from pathlib import Path

from analysis.studies.s2016 import macros


def main(sm) -> None:  # noqa: ANN001
    parts = {str(path): macros.read_json(path) for path in sm.input.numbers}
    Path(sm.output.tex).write_text(macros.macro_file(parts))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
