"""Snakemake script: the reproduction appendix's table of runs and time per family, the
run protocol's numbers, and the time the default profile's full grids would take
(analysis/protocol.py)."""

from pathlib import Path

import pandas as pd
import yaml

from analysis.latex import escape
from analysis.protocol import Prediction, family_times, predict, stage_breakdown
from analysis.report import factor_words as fw
from analysis.report.figures import macro
from mwlab.catalogue import Family, expand, load_catalogue, load_profile


def planned(profile: Path, catalogue: Path) -> pd.DataFrame:
    """One row per planned point of a profile: family, series (the point's own path when
    it runs alone) and step length."""
    config = yaml.safe_load(profile.read_text())
    plan = expand(load_catalogue(catalogue), load_profile(config, source=str(profile)))
    rows = [
        {"family": r.family, "series": r.series or r.path, "duration_s": r.spec["duration_s"]}
        for r in plan
    ]
    return pd.DataFrame(rows, columns=["family", "series", "duration_s"])


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


def memaslap_macros(families: pd.DataFrame, catalogue: dict[str, Family]) -> str:
    """What the families driven by memaslap cost: their job minutes and share of all."""
    driven = {name for name, f in catalogue.items() if f.fixed.get("driver") == "memaslap"}
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
        rf"{_minutes(r.measured_min)} & {_minutes(r.wall_min)} \\"
        for r in families.itertuples()
    ]
    total = families[["runs", "series", "reruns", "failed", "measured_min", "wall_min"]].sum()
    table = "\n".join(
        [
            r"\setlength{\tabcolsep}{4pt}",
            r"\begin{tabular}{@{}p{3.2cm}lrrrrrr@{}}",
            r"\toprule",
            r"Family & Identifier & Points & Series & Reruns & Failed & Meas.\ [min]"
            r" & Jobs [min] \\",
            r"\midrule",
            *rows,
            r"\midrule",
            rf"Total & & {int(total.runs)} & {int(total.series)} & {int(total.reruns)} & "
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
    runs = pd.read_parquet(sm.input.runs)
    table, numbers = render(
        family_times(runs),
        stage_breakdown(runs),
        runs,
        sm.config["profile"],
        int(sm.config.get("run", {}).get("reruns", 2)),
        float(sm.config.get("run", {}).get("longest_rerun", 1.0)),
    )
    numbers += memaslap_macros(family_times(runs), load_catalogue(Path(sm.input.catalogue)))
    plan = planned(Path(sm.input.predicted), Path(sm.input.catalogue))
    name = str(yaml.safe_load(Path(sm.input.predicted).read_text())["profile"])
    numbers += prediction_macros(name, predict(runs, plan))
    Path(sm.output.table).write_text(table)
    Path(sm.output.numbers).write_text(numbers)
