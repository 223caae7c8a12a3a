"""Snakemake script: queueing models of the 2016 design (analysis.studies.s2016.queueing) on
the maximum-throughput and replication families, beside seed 001's values. Reads the tables
into the study's time, writes the tabulars, the MVA figure and the numbers."""

import json
from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.scaling import in_study_time, with_scale
from analysis.studies.s2016 import queueing as q


def load(sm, family: str, *tables: str) -> q.Frames:  # noqa: ANN001
    """A family's tables in the study's time (the read-only family: its timed GETs)."""
    raw = {t: pd.read_parquet(sm.input[f"{family}_{t}"]) for t in tables}
    points = raw["points"] if "points" in raw else pd.read_parquet(sm.input[f"{family}_points"])
    frames = {
        t: in_study_time(f if t == "points" else with_scale(f, points, "point"))
        if "point" in f.columns
        else f
        for t, f in raw.items()
    }
    return q.timed_reads(frames) if family == "max" else frames


def mva_figure(curves: list[q.MVACurve], path: str) -> None:
    """Measured points and MVA curve of each pool size: every series its colour and marker."""
    fig, axes = fg.figure(ncols=2)
    styles = fg.distinct_styles(2 * len(curves))
    for i, c in enumerate(curves):
        measured, model = styles[2 * i], styles[2 * i + 1]
        for ax, pred, metric, scale in (
            (axes[0][0], c.throughput, "throughput_ops", 1.0),
            (axes[0][1], c.response_ms, "response_us_mean", 1e-3),
        ):
            ax.plot(c.clients, pred, lw=1, ls=":", markersize=3, markevery=3,
                    label=f"$T={c.workers}$, MVA", **model)  # fmt: skip
            m = c.measured
            ax.errorbar(
                m["clients_total"].to_numpy(float),
                m[f"{metric}_mean"].to_numpy(float) * scale,
                yerr=fg.ci_errors(m, metric, scale),
                capsize=2, markersize=3, lw=1, ls="-",
                label=f"$T={c.workers}$, measured", **measured,
            )  # fmt: skip
    labels = ("throughput at the clients (ops/s)", "mean response time at the clients (ms)")
    for ax, label in zip(axes[0], labels, strict=True):
        ax.set_xlabel("clients (total)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
    fg.legend_below(fig, axes[0][0])
    fg.save(fig, path)


def main(sm) -> None:  # noqa: ANN001
    models = yaml.safe_load(Path(sm.input.reference).read_text())["models"]
    numbers: dict[str, str] = {}
    predictions: dict[str, object] = {}
    top = load(sm, "max", "points", "windows", "histograms", "queue", "pool_requests", "runs")
    part = q.open_models(top, models["mm1"])
    fg.write(sm.output.open_table, part.tabular)
    numbers |= part.numbers
    predictions |= part.models
    repl = load(sm, "repl", "points", "windows", "queue", "pools", "pool_requests", "runs")
    part = q.mmm_table(q.mmm_per_servers(repl), models["mmm"])
    fg.write(sm.output.mmm_table, part.tabular)
    numbers |= part.numbers
    predictions |= part.models
    curves, part = q.mva_models(
        load(sm, "max", "points", "windows", "pools", "pool_requests", "runs")
    )
    mva_figure(curves, sm.output.mva_figure)
    fg.write(sm.output.mva_table, part.tabular)
    numbers |= part.numbers
    part = q.mva_seed(repl, models["mva"])
    fg.write(sm.output.mva_seed_table, part.tabular)
    numbers |= part.numbers
    predictions |= part.models
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))
    Path(sm.output.models).write_text(json.dumps(predictions, indent=1))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
