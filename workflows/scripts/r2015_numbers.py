"""Snakemake script of rule r2015_numbers: the 2015 section's numbers as LaTeX macros."""

from pathlib import Path

from analysis.report.numbers import macro_file, read_json


def main(sm) -> None:  # noqa: ANN001
    parts = {str(path): read_json(path) for path in sm.input.numbers}
    Path(sm.output.tex).write_text(macro_file(parts, "r2015_numbers"))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
