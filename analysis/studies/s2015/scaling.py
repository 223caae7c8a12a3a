"""§3.3: the system with fixed workers and scaled clients (§3.3.1), and with fixed clients and
scaled workers (§3.3.2), small and large messages, beside two models of analysis.models
through models.py: the M/M/m of all workers (μ from the family's fastest point) and the closed
network whose database demand comes from the database baseline of the same message size."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.models.mva import NetworkError
from analysis.report import figures as fg
from analysis.report.numbers import Report
from analysis.studies.s2015 import models
from analysis.studies.s2015.common import DEFAULT_CORES, level, name, study_points, system

FAMILIES = {"clients": "ScaleClients", "workers": "ScaleWorkers"}


def rows_of(points: pd.DataFrame, factor: str) -> pd.DataFrame:
    """The clients' system rows with the scaled factor as `x` and the message size."""
    rows = system(points)
    if rows.empty:
        return rows
    return rows.assign(x=level(rows, factor), size=rows["level_size"].astype(str)).sort_values("x")


def demands(points: pd.DataFrame, baseline: pd.DataFrame, size: str,
            cores: int = DEFAULT_CORES) -> models.Demands | None:  # fmt: skip
    """The network's demands at one message size: the database's from the baseline's highest
    throughput, the distributor's from the middleware's net time, and the rest of a request's
    time outside the middleware (client response minus middleware response at the lightest
    point, the fewest clients per worker) as a delay. None where the baseline or the
    middleware's side is missing."""
    base = system(baseline)
    if base.empty:
        return None
    base = base[base["level_size"].astype(str) == size]
    p = study_points(points)
    p = p[(p["type"] == "all") & (p["level_size"].astype(str) == size)]
    client, mw = p[p["side"] == "client"], p[p["side"] == "middleware"]
    if base.empty or client.empty or mw.empty:
        return None
    database = models.database_demand(base, cores)
    # The fewest clients per worker, not the fewest clients: where clients outnumber the
    # workers, the client's time beyond the middleware's includes the wait before the
    # distributor, which is queueing, not the round trip.
    per_worker = client["clients_total"].astype(float) / models.workers_total(client)
    lightest = client.loc[per_worker.idxmin(), "point"]
    c_r = float(client.loc[client["point"] == lightest, models.RESPONSE_US].iloc[0])
    m = mw[mw["point"] == lightest]
    if m.empty:
        return None
    m_r = float(m[models.RESPONSE_US].iloc[0])
    distributor = float(m["net_us_mean_mean"].iloc[0]) * 1e-6
    if not (math.isfinite(distributor) and distributor > 0):
        return None
    return models.Demands(max(c_r - m_r, 0.0) * 1e-6, distributor, database, cores)


def predictions(rows: pd.DataFrame, points: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """Per point the MVA's throughput and response time and the M/M/m's response time (NaN
    where a model has no input or no steady state), beside the measured values."""
    out = []
    for size, g in rows.groupby("size"):
        g = g.reset_index(drop=True)
        d = demands(points, baseline, str(size))
        mva = models.mva_table(g, d) if d is not None else None
        try:
            mmm = models.mmm_table(g, models.service_rate(g))
        except ValueError:
            mmm = None
        for i, r in g.iterrows():
            out.append({
                "point": r["point"], "size": size, "x": r["x"],
                "measured_ops": r[models.THROUGHPUT], "measured_us": r[models.RESPONSE_US],
                "mva_ops": mva["predicted_ops"].iloc[i] if mva is not None else math.nan,
                "mva_us": mva["predicted_us"].iloc[i] if mva is not None else math.nan,
                "mmm_us": mmm["predicted_us"].iloc[i] if mmm is not None else math.nan,
            })  # fmt: skip
    return pd.DataFrame(out, columns=["point", "size", "x", "measured_ops", "measured_us",
                                      "mva_ops", "mva_us", "mmm_us"])  # fmt: skip


def _error(p: pd.DataFrame, model: str, measured: str) -> float:
    e = ((p[model] - p[measured]) / p[measured]).replace([np.inf, -np.inf], np.nan).dropna()
    return float(e.abs().mean()) if len(e) else math.nan


def figure(panels: dict[str, tuple[pd.DataFrame, pd.DataFrame]], path: str | Path) -> None:
    f, axes = fg.figure(ncols=2, nrows=2, width=6.4, height=4.6)
    for i, (factor, (rows, pred)) in enumerate(panels.items()):
        tput, resp = axes[i]
        for j, (size, g) in enumerate(rows.groupby("size")) if not rows.empty else []:
            c = f"C{j}"
            fg.errorbar_line(tput, g, "x", "throughput_ops", label=f"measured, {size}",
                              color=c, marker="o", markersize=3)  # fmt: skip
            fg.errorbar_line(resp, g, "x", "response_us_mean", scale=1e-3,
                              label=f"measured, {size}", color=c, marker="o",
                              markersize=3)  # fmt: skip
            q = pred[pred["size"] == size].sort_values("x")
            if q["mva_ops"].notna().any():
                tput.plot(q["x"], q["mva_ops"], color=c, linestyle="--", label=f"MVA, {size}")
                resp.plot(q["x"], q["mva_us"] * 1e-3, color=c, linestyle="--",
                          label=f"MVA, {size}")  # fmt: skip
            if q["mmm_us"].notna().any():
                resp.plot(q["x"], q["mmm_us"] * 1e-3, color=c, linestyle=":", marker="x",
                          label=f"M/M/m, {size}")  # fmt: skip
        for ax in (tput, resp):
            ax.set_xlabel(f"{factor} (total)")
            ax.set_ylim(bottom=0)
            if rows.empty:
                fg.not_measured(ax)
        tput.set_ylabel(fg.study_label("throughput", "ops/s", wrap=True))
        resp.set_ylabel(fg.study_label("response time", "ms", wrap=True))
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    fg.figure_legend(f, list(handles.values()), list(handles), ncols=4,
                      loc="outside lower center", fontsize=6, frameon=False)  # fmt: skip
    fg.save(f, path)


def plateau(rows: pd.DataFrame, workers: int) -> tuple[float, float]:
    """Small messages: the throughput at the level nearest the workers and at the most clients."""
    g = rows[rows["size"] == "small"] if not rows.empty else rows
    if g.empty:
        return math.nan, math.nan
    at = g.iloc[(g["x"] - workers).abs().argsort().iloc[0]]
    return float(at[models.THROUGHPUT]), float(g.iloc[-1][models.THROUGHPUT])


def report(clients: pd.DataFrame, workers: pd.DataFrame, baseline: pd.DataFrame,
           figure_path: str | Path) -> Report:  # fmt: skip
    """Both scaling families' figure and numbers (either may be unmeasured)."""
    n: dict[str, str] = {}
    panels = {}
    for factor, points in (("clients", clients), ("workers", workers)):
        stem = FAMILIES[factor]
        rows = rows_of(points, factor)
        try:
            pred = predictions(rows, points, baseline) if not rows.empty else None
        except NetworkError:
            pred = None
        if pred is None:
            pred = pd.DataFrame(columns=["size", "x", "mva_ops", "mva_us", "mmm_us",
                                         "measured_ops", "measured_us"])  # fmt: skip
        panels[factor] = (rows, pred)
        n[name(stem, "Measured")] = "1" if not rows.empty else "0"
        levels = sorted(rows["x"].unique()) if not rows.empty else []
        n[name(stem, "Levels")] = ", ".join(fg.num(v) for v in levels) if levels else "none"
        sizes = sorted(rows["size"].unique()) if not rows.empty else []
        n[name(stem, "Sizes")] = ", ".join(sizes) if sizes else "none"
        top = rows[models.THROUGHPUT].max() if not rows.empty else math.nan
        n[name(stem, "Max")] = fg.num(top)
        n[name(stem, "MvaError")] = fg.pct(_error(pred, "mva_ops", "measured_ops"))
        n[name(stem, "MvaResponseError")] = fg.pct(_error(pred, "mva_us", "measured_us"))
        n[name(stem, "MmmError")] = fg.pct(_error(pred, "mmm_us", "measured_us"))
    rows = panels["clients"][0]
    w = int(models.workers_total(rows).iloc[0]) if not rows.empty else 60
    at, most = plateau(rows, w)
    n[name("ScaleClients", "Workers")] = fg.num(w)
    n[name("ScaleClients", "AtWorkers")] = fg.num(at)
    n[name("ScaleClients", "AtMost")] = fg.num(most)
    n[name("ScaleClients", "Change")] = fg.pct(most / at - 1 if at else math.nan)
    figure(panels, figure_path)
    return Report(tex={}, numbers=n)
