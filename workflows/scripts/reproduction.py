"""Snakemake script: the reproduction appendix's table of runs and time per family, and the
run protocol's numbers (analysis/protocol.py)."""

from pathlib import Path

import pandas as pd

from analysis.latex import escape
from analysis.protocol import family_times, run_times, stage_breakdown


def _minutes(value: float) -> str:
    return "--" if pd.isna(value) else f"{value:.1f}"


def render(
    families: pd.DataFrame,
    stages: pd.Series,
    runs: pd.DataFrame,
    profile: str,
    reruns: int,
    longest_rerun: float = 1.0,
) -> tuple[str, str]:
    rows = [
        rf"\texttt{{{escape(r.family)}}} & {r.runs} & {r.series} & {r.reruns} & {r.failed} & "
        rf"{_minutes(r.measured_min)} & {_minutes(r.wall_min)} \\"
        for r in families.itertuples()
    ]
    total = families[["runs", "series", "reruns", "failed", "measured_min", "wall_min"]].sum()
    table = "\n".join(
        [
            r"\setlength{\tabcolsep}{4pt}",
            r"\begin{tabular}{@{}lrrrrrr@{}}",
            r"\toprule",
            r"Family & Points & Series & Reruns & Failed & Meas.\ [min] & Jobs [min] \\",
            r"\midrule",
            *rows,
            r"\midrule",
            rf"Total & {int(total.runs)} & {int(total.series)} & {int(total.reruns)} & "
            rf"{int(total.failed)} & {_minutes(total.measured_min)} & "
            rf"{_minutes(total.wall_min)} \\",
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )
    per_run = runs["wall_s"].mean()
    stage_text = ", ".join(f"{escape(k)} {v:.2f}" for k, v in stages.items())
    numbers = "\n".join(
        [
            rf"\newcommand{{\ProfileName}}{{{escape(profile)}}}",
            rf"\newcommand{{\RunsTotal}}{{{int(total.runs)}}}",
            rf"\newcommand{{\RunsFailed}}{{{int(total.failed)}}}",
            rf"\newcommand{{\RunMinutesTotal}}{{{_minutes(total.wall_min)}}}",
            rf"\newcommand{{\SeriesTotal}}{{{int(total.series)}}}",
            rf"\newcommand{{\RerunsTotal}}{{{int(total.reruns)}}}",
            rf"\newcommand{{\RerunLimit}}{{{reruns}}}",
            rf"\newcommand{{\RerunLongest}}{{{longest_rerun:g}}}",
            rf"\newcommand{{\JobSecondsPerPoint}}{{{per_run:.1f}}}",
            rf"\newcommand{{\StageSecondsPerPoint}}{{{stage_text}}}",
            "",
        ]
    )
    return table, numbers


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    runs = run_times(Path(sm.params.results), [Path(p) for p in sm.input.runs])
    table, numbers = render(
        family_times(runs),
        stage_breakdown(runs),
        runs,
        sm.config["profile"],
        int(sm.config.get("run", {}).get("reruns", 2)),
        float(sm.config.get("run", {}).get("longest_rerun", 1.0)),
    )
    Path(sm.output.table).write_text(table)
    Path(sm.output.numbers).write_text(numbers)
