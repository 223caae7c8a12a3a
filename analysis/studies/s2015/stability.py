"""§3.1, stability: the system's throughput window by window over a long run (small and large
messages, 5,000 messages preloaded), its trend, and what the database accumulated meanwhile:
the dead tuples the pops left in `messages` and the autovacuums that removed them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from analysis.aggregate import CI_LEVEL
from analysis.report import figures as fg
from analysis.report.numbers import Report
from analysis.scale_model import scale_of
from analysis.studies.s2015.common import name, study_points


def trace(windows: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per run and window the clients' throughput of every request type (study units) and the
    window's start since the run's first stable window, in study seconds."""
    columns = ["run", "size", "t_s", "throughput"]
    if windows.empty or points.empty:
        return pd.DataFrame(columns=columns)
    w = windows[(windows["side"] == "client") & (windows["type"] == "all")]
    sizes = points.drop_duplicates("point").set_index("point")
    w = w.assign(scale=w["point"].map(sizes["scale"]))
    s = scale_of(w, "windows")
    # A client window is its index on the generator's clock, each the point's client_window_ms
    # long (not a second); a testbed second stands for s seconds of the study's.
    window_s = (
        w["point"].map(sizes["client_window_ms"]).astype(float) / 1e3
        if "client_window_ms" in sizes.columns
        else 1.0
    )
    t = (w["window"] - w.groupby("run")["window"].transform("min")).astype(float) * window_s * s
    return pd.DataFrame(
        {
            "run": w["run"],
            "size": w["point"].map(sizes["level_size"]).astype(str),
            "t_s": t,
            "throughput": w["throughput_ops"] / s,
        }
    ).sort_values(["run", "t_s"])[columns]


def trend(t: pd.DataFrame) -> dict[str, float]:
    """Per message size the least-squares trend of throughput on time: the change it makes
    over the whole run as a share of the mean, with its interval (CI_LEVEL), and the windows'
    coefficient of variation."""
    out = {}
    for size, g in t.groupby("size"):
        mean = float(g["throughput"].mean())
        if len(g) < 3 or not mean > 0:
            out[str(size)] = {"slope": math.nan, "low": math.nan, "high": math.nan,
                              "cv": math.nan, "mean": mean}  # fmt: skip
            continue
        fit = stats.linregress(g["t_s"], g["throughput"])
        half = stats.t.ppf(0.5 + CI_LEVEL / 2, len(g) - 2) * fit.stderr
        over_run = float(g["t_s"].max() - g["t_s"].min()) / mean
        out[str(size)] = {
            "slope": fit.slope * over_run,
            "low": (fit.slope - half) * over_run,
            "high": (fit.slope + half) * over_run,
            "cv": float(g["throughput"].std(ddof=1) / mean),
            "mean": mean,
        }
    return out


def figure(t: pd.DataFrame, path: str | Path) -> None:
    # One panel per message size on one scale: two noisy traces in one panel hide each other.
    sizes = sorted(t["size"].unique()) if not t.empty else [""]
    f, axes = fg.figure(nrows=len(sizes), width=6.4, height=0.6 + 1.7 * len(sizes))
    panels = [row[0] for row in axes]
    for i, (ax, size) in enumerate(zip(panels, sizes, strict=True)):
        g = t[t["size"] == size]
        ax.plot(g["t_s"], g["throughput"], color=f"C{i}", linewidth=0.8, label=str(size))
        ax.set_title(f"{size} messages" if size else "")
        ax.set_ylabel(fg.study_label("throughput", "ops/s", wrap=True))
    if not t.empty:
        fg.shared_ylim(panels)
        for ax in panels:
            ax.set_ylim(bottom=0)
            ax.set_xlim(float(t["t_s"].min()), float(t["t_s"].max()))
    panels[-1].set_xlabel(fg.study_label("time", "s"))
    if t.empty:
        fg.not_measured(panels[0])
    fg.save(f, path)


def report(points: pd.DataFrame, windows: pd.DataFrame, db: pd.DataFrame,
           figure_path: str | Path) -> Report:  # fmt: skip
    t = trace(windows, points)
    found = trend(t)
    n = {name("Stability", "Measured"): "1" if not t.empty else "0"}
    p = study_points(points) if not points.empty else points
    for size in ("small", "large"):
        r = found.get(size, {k: math.nan for k in ("slope", "low", "high", "cv", "mean")})
        stem = name("Stability", size)
        n[stem + "Measured"] = "1" if size in found else "0"
        n[stem + "Mean"] = fg.num(r["mean"])
        n[stem + "Slope"] = fg.pct(r["slope"], 2)
        n[stem + "SlopeLow"] = fg.pct(r["low"], 2)
        n[stem + "SlopeHigh"] = fg.pct(r["high"], 2)
        n[stem + "Cv"] = fg.pct(r["cv"])
        runs = set(t.loc[t["size"] == size, "run"]) if not t.empty else set()
        d = db[db["run"].isin(runs)] if not db.empty else db
        n[stem + "Dead"] = fg.num(d["after.messages.n_dead_tup"].mean() if len(d) else math.nan)
        n[stem + "Autovacuums"] = fg.num(
            d["messages.autovacuum_count"].mean() if len(d) else math.nan
        )
        length = t.loc[t["size"] == size, "t_s"].max() if not t.empty else math.nan
        n[stem + "Length"] = fg.num(length)
    n[name("Stability", "Preloaded")] = fg.num(
        float(np.nanmax(p["queue.preload"].astype(float))) if len(p) else math.nan
    )
    figure(t, figure_path)
    return Report(tex={}, numbers=n)
