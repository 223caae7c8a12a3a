"""Snakemake script of rule agreement: the appendix "Agreement with the reference dataset"
(analysis/agreement.py): per family, the new measurement's throughput and response time over
the archived ones, and the verdicts that changed."""

import json
from pathlib import Path

import pandas as pd

from analysis import agreement, dataset
from analysis.findings import compare_builds
from analysis.latex import escape
from analysis.report.figures import macro


def main(sm) -> None:  # noqa: ANN001
    reference = Path(sm.params.reference)
    dataset.verify(reference)
    rows = []
    for family, path in zip(sm.params.families, sm.input.points, strict=True):
        archived = reference / "data" / family / "points.parquet"
        if archived.is_file():
            rows.append(agreement.ratios(pd.read_parquet(path), pd.read_parquet(archived), family))
    frame = agreement.summary(pd.concat(rows, ignore_index=True)) if rows else pd.DataFrame()
    Path(sm.output.table).write_text(agreement.table(frame))
    new = json.loads(Path(sm.input.findings).read_text())["findings"]
    verdicts = reference / dataset.VERDICTS
    old = json.loads(verdicts.read_text())["findings"] if verdicts.is_file() else []
    compared = compare_builds(old, new)
    changed = [c for c in compared if c.flipped]
    numbers = [
        macro("AgreementReference", escape(str(reference))),
        macro("AgreementFamilies", str(len(frame))),
        macro("AgreementPoints", str(int(frame["points"].sum())) if len(frame) else "0"),
        macro("AgreementVerdictsCompared", str(len(compared))),
        macro("AgreementVerdictsChanged", str(len(changed))),
        macro("AgreementVerdictsClash", str(sum(c.clash for c in changed))),
        macro(
            "AgreementVerdictsList",
            "; ".join(
                rf"\texttt{{{escape(c.id)}}}: {c.first['verdict']} $\to$ {c.second['verdict']}"
                for c in changed
            )
            or "none",
        ),
    ]
    Path(sm.output.numbers).write_text("".join(numbers))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
