"""Snakemake script: the reproduction appendix's table of runs and time per family."""

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from analysis.latex import escape


@dataclass
class FamilyTime:
    runs: int = 0
    failed: int = 0
    measured_s: float = 0.0
    wall_s: float = 0.0


def _wall_seconds(benchmark: Path) -> float:
    """Wall time Snakemake recorded for the job (column `s`), 0 if it was not recorded."""
    try:
        with benchmark.open() as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    except OSError:
        return 0.0
    return float(rows[-1]["s"]) if rows else 0.0


def collect(results: Path, manifests: list[Path]) -> dict[str, FamilyTime]:
    families: dict[str, FamilyTime] = {}
    for manifest in manifests:
        relative = manifest.parent.relative_to(results / "runs")
        family = relative.parts[0]
        entry = families.setdefault(family, FamilyTime())
        entry.runs += 1
        data = json.loads(manifest.read_text())
        if data.get("status") != "ok":
            entry.failed += 1
        entry.measured_s += float(data.get("duration_s") or 0.0)
        entry.wall_s += _wall_seconds(
            results / "benchmarks" / "runs" / relative.parent / f"{relative.name}.tsv"
        )
    return families


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def render(families: dict[str, FamilyTime], profile: str) -> tuple[str, str]:
    rows = [
        rf"\texttt{{{escape(name)}}} & {t.runs} & {t.failed} & {_minutes(t.measured_s)} & "
        rf"{_minutes(t.wall_s)} \\"
        for name, t in sorted(families.items())
    ]
    total = FamilyTime(
        runs=sum(t.runs for t in families.values()),
        failed=sum(t.failed for t in families.values()),
        measured_s=sum(t.measured_s for t in families.values()),
        wall_s=sum(t.wall_s for t in families.values()),
    )
    table = "\n".join(
        [
            r"\begin{tabular}{@{}lrrrr@{}}",
            r"\toprule",
            r"Family & Runs & Failed & Run time [min] & Job time [min] \\",
            r"\midrule",
            *rows,
            r"\midrule",
            rf"Total & {total.runs} & {total.failed} & {_minutes(total.measured_s)} & "
            rf"{_minutes(total.wall_s)} \\",
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )
    numbers = "\n".join(
        [
            rf"\newcommand{{\ProfileName}}{{{escape(profile)}}}",
            rf"\newcommand{{\RunsTotal}}{{{total.runs}}}",
            rf"\newcommand{{\RunsFailed}}{{{total.failed}}}",
            rf"\newcommand{{\RunMinutesTotal}}{{{_minutes(total.wall_s)}}}",
            "",
        ]
    )
    return table, numbers


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    table, numbers = render(
        collect(Path(sm.params.results), [Path(p) for p in sm.input.runs]), sm.config["profile"]
    )
    Path(sm.output.table).write_text(table)
    Path(sm.output.numbers).write_text(numbers)
