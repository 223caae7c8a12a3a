"""The reproduction appendix's generated parts: the table of runs and time per family, the
run protocol's numbers, what the memaslap families cost, and the time a profile's full grids
would take (analysis.protocol)."""

from __future__ import annotations

import pandas as pd

from analysis.latex import escape
from analysis.protocol import Prediction
from analysis.report import factor_words as fw
from analysis.report.figures import macro


def prediction_macros(name: str, p: Prediction) -> str:
    return "".join(
        [
            macro("PredictProfile", escape(name)),
            macro("PredictPoints", str(p.points)),
            macro("PredictSeries", str(p.series)),
            macro("PredictHours", f"{p.hours:.1f}"),
            macro("PredictSeriesOverheadS", f"{p.series_s:.1f}"),
            macro("PredictPointOverheadS", f"{p.point_s:.1f}"),
        ]
    )


def memaslap_macros(families: pd.DataFrame, driven: set[str]) -> str:
    """What the families driven by memaslap (`driven`) cost: their job minutes and share of
    all."""
    mine = families[families["family"].isin(driven)]
    total = float(families["wall_min"].sum())
    share = 100 * float(mine["wall_min"].sum()) / total if total > 0 else float("nan")
    return "".join(
        [
            macro("MemaslapFamilies", str(len(mine))),
            macro("MemaslapJobMinutes", _minutes(float(mine["wall_min"].sum()))),
            macro("MemaslapJobShare", "--" if pd.isna(share) else f"{share:.0f}\\,\\%"),
        ]
    )


def _minutes(value: float) -> str:
    return "--" if pd.isna(value) else f"{value:.1f}"


def _probe(value: float) -> str:
    return "--" if pd.isna(value) else f"{value:,.0f}".replace(",", "{,}")


def _median_probe(runs: pd.DataFrame) -> float:
    return float(runs["speed_us"].median()) if "speed_us" in runs.columns else float("nan")


def render(
    families: pd.DataFrame,
    stages: pd.Series,
    runs: pd.DataFrame,
    profile: str,
    reruns: int,
    longest_rerun: float = 1.0,
) -> tuple[str, str]:
    rows = [
        rf"{escape(fw.family_words(r.family))} & \texttt{{{escape(r.family)}}} & {r.runs} & "
        rf"{r.series} & {r.reruns} & {r.failed} & "
        rf"{_minutes(r.measured_min)} & {_minutes(r.wall_min)} & {_probe(r.speed_us)} \\"
        for r in families.itertuples()
    ]
    total = families[["runs", "series", "reruns", "failed", "measured_min", "wall_min"]].sum()
    table = "\n".join(
        [
            r"\setlength{\tabcolsep}{4pt}",
            r"\begin{tabular}{@{}>{\raggedright\arraybackslash}p{3.2cm}lrrrrrrr@{}}",
            r"\toprule",
            # Units on a line of their own, so that the columns are as wide as their numbers.
            r"Family & Identifier & Points & Series & Reruns & Failed & Meas. & Jobs & Probe \\",
            r" & & & & & & [min] & [min] & [\textmu s] \\",
            r"\midrule",
            *rows,
            r"\midrule",
            rf"Total & & {int(total.runs)} & {int(total.series)} & {int(total.reruns)} & "
            rf"{int(total.failed)} & {_minutes(total.measured_min)} & "
            rf"{_minutes(total.wall_min)} & {_probe(_median_probe(runs))} \\",
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
