"""Snakemake script of rule provenance_numbers: the report's `\\Data...` macros."""

import json
from pathlib import Path

from analysis.provenance import macros


def main(sm) -> None:  # noqa: ANN001
    doc = json.loads(Path(sm.input.json).read_text())
    Path(sm.output.tex).write_text(macros(doc, str(sm.params.source)))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
