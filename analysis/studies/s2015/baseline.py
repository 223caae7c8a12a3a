"""§1.1.4, the database baseline: clients straight to PostgreSQL, one connection each, small
and large messages. Throughput and response time against the clients in the study's units,
the seed's two maxima beside ours, and the knee of the closed network the baseline implies
(models.knee) beside the clients at which the seed saw its maxima."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.report import figures as fg
from analysis.report.numbers import Report
from analysis.studies.s2015 import models
from analysis.studies.s2015.common import DEFAULT_CORES, half_width, level, name, pm, system
from common import pgsettings

SIZES = ("small", "large")


def curves(points: pd.DataFrame) -> pd.DataFrame:
    """The clients' system rows of the baseline with `clients` and `size` columns."""
    rows = system(points)
    if rows.empty:
        return rows
    return rows.assign(clients=level(rows, "clients"), size=rows["level_size"].astype(str))


def knee(rows: pd.DataFrame, cores: int) -> float:
    """The clients beyond which the database cannot grow its throughput: the closed network
    of one database station (`cores` servers) whose demand comes from the highest throughput,
    the rest of a request's time a delay, estimated from the response time at the fewest
    clients (where little of it is queueing)."""
    if rows.empty or not (rows[models.THROUGHPUT] > 0).any():
        return math.nan
    database = models.database_demand(rows, cores)
    lightest = rows.sort_values("clients").iloc[0]
    response_s = float(lightest[models.RESPONSE_US]) * 1e-6
    demands = models.Demands(max(response_s - database, 0.0), 0.0, database, cores)
    return models.knee(demands)


def maxima(rows: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per message size the highest mean throughput, its clients and its interval."""
    out = {}
    for size, g in rows.groupby("size"):
        best = g.loc[g[models.THROUGHPUT].idxmax()]
        out[str(size)] = {
            "throughput": float(best[models.THROUGHPUT]),
            "half": half_width(best),
            "clients": float(best["clients"]),
        }
    return out


def figure(rows: pd.DataFrame, reference: Mapping[str, Any], knees: dict[str, float],
           path: str | Path) -> None:  # fmt: skip
    f, axes = fg.figure(ncols=2, width=6.4, height=2.6)
    tput, resp = axes[0]
    colours = {size: f"C{i}" for i, size in enumerate(SIZES)}
    for size, g in rows.groupby("size") if not rows.empty else []:
        c = colours.get(str(size), "k")
        fg.errorbar_line(tput, g, "clients", "throughput_ops", label=f"{size}", color=c,
                          marker="o", markersize=3)  # fmt: skip
        fg.errorbar_line(resp, g, "clients", "response_us_mean", scale=1e-3, label=f"{size}",
                          color=c, marker="o", markersize=3)  # fmt: skip
        if math.isfinite(knees.get(str(size), math.nan)):
            tput.axvline(knees[str(size)], color=c, linestyle=":", linewidth=1,
                         label=f"knee N*, {size}")  # fmt: skip
    for size, seed in reference["db_baseline"]["max"].items():
        fg.seed_points(tput, [seed["clients"]], [seed["throughput"]], f"seed 003 max., {size}",
                        color=colours.get(size, "k"))  # fmt: skip
    tput.set_xlabel("clients")
    tput.set_ylabel(fg.study_label("throughput", "ops/s", wrap=True))
    resp.set_xlabel("clients")
    resp.set_ylabel(fg.study_label("response time", "ms", wrap=True))
    tput.set_ylim(bottom=0)
    resp.set_ylim(bottom=0)
    if not rows.empty:
        keep_in_view(tput, resp, rows, knees)
    if rows.empty:
        fg.not_measured(resp)
    fg.legend_below(f, tput, ncols=4)
    fg.save(f, path)


def keep_in_view(tput: fg.plt.Axes, resp: fg.plt.Axes, rows: pd.DataFrame,
                 knees: dict[str, float]) -> None:  # fmt: skip
    """Limits that hold every knee and error bar with room to spare: a knee at the fewest
    clients would otherwise lie on the axes' left edge."""
    xs = [*rows["clients"].astype(float), *(k for k in knees.values() if math.isfinite(k))]
    span = max(xs) - min(min(xs), 0.0)
    for ax in (tput, resp):
        ax.set_xlim(min(min(xs), 0.0) - 0.04 * span, max(xs) + 0.04 * span)
    for ax, metric, scale in ((tput, "throughput_ops", 1.0), (resp, "response_us_mean", 1e-3)):
        high = rows[f"{metric}_ci_high"].fillna(rows[f"{metric}_mean"]).astype(float) * scale
        top = max(float(high.max()), ax.dataLim.y1)
        if math.isfinite(top) and top > 0:
            ax.set_ylim(0, 1.08 * top)


def report(points: pd.DataFrame, reference: Mapping[str, Any], figure_path: str | Path,
           cores: int = DEFAULT_CORES) -> Report:  # fmt: skip
    """The baseline's figure and numbers; without data, a figure that says so and the
    measured flag 0."""
    rows = curves(points)
    numbers: dict[str, str] = {name("Baseline", "Measured"): "1" if not rows.empty else "0"}
    seed = reference["db_baseline"]["max"]
    for size in SIZES:
        numbers[name("Baseline", "Seed", size)] = fg.num(seed[size]["throughput"])
        numbers[name("Baseline", "Seed", size, "Clients")] = fg.num(seed[size]["clients"])
    knees: dict[str, float] = {}
    found = maxima(rows) if not rows.empty else {}
    for size in SIZES:
        g = rows[rows["size"] == size] if not rows.empty else rows
        knees[size] = knee(g, cores) if not g.empty else math.nan
        best = found.get(size, {"throughput": math.nan, "half": math.nan, "clients": math.nan})
        numbers[name("Baseline", "Max", size)] = pm(best["throughput"], best["half"])
        numbers[name("Baseline", "Max", size, "Value")] = fg.num(best["throughput"])
        numbers[name("Baseline", "Max", size, "Clients")] = fg.num(best["clients"])
        numbers[name("Baseline", "Knee", size)] = fg.num(knees[size])
        ratio = best["throughput"] / seed[size]["throughput"]
        numbers[name("Baseline", "Ratio", size)] = fg.num(ratio, 2)
        levels = sorted(g["clients"].unique()) if not g.empty else []
        # The database is fastest at its fewest sessions: the models' load-independent
        # demand (taken there) is too small for the points with more.
        peak_fewest = len(levels) > 1 and best["clients"] == levels[0]
        numbers[name("Baseline", "Peak", "Fewest", size)] = "1" if peak_fewest else "0"
        numbers[name("Baseline", "Levels", size)] = (
            ", ".join(fg.num(v) for v in levels) if levels else "none"
        )
    numbers[name("Baseline", "Cores")] = str(cores)
    numbers |= past_knee(rows, knees, found)
    numbers |= scale_model(points)
    figure(rows, reference, knees, figure_path)
    return Report(tex={}, numbers=numbers)


def past_knee(
    rows: pd.DataFrame, knees: Mapping[str, float], found: Mapping[str, Mapping[str, float]]
) -> dict[str, str]:
    """Where the measured clients lie against each size's knee, over both sizes:
    `BaselinePastCase` `all` (every level beyond its knee), `fewest` (every level above the
    fewest, which lies at or below one), `some` or `unknown` (no knee or no levels);
    `BaselineMaxPastCase` `first` where each size's maximum lies at its lowest level beyond
    the knee, `other` otherwise; `BaselineFewest`, the fewest clients measured (a dash where
    the sizes differ)."""
    levels = {
        size: sorted(float(c) for c in rows[rows["size"] == size]["clients"].unique())
        for size in SIZES
    } if not rows.empty else {}  # fmt: skip
    known = [s for s in SIZES if levels.get(s) and math.isfinite(knees.get(s, math.nan))]
    if not known or len(known) < len(SIZES):
        return {
            name("Baseline", "Past", "Case"): "unknown",
            name("Baseline", "Max", "Past", "Case"): "other",
            name("Baseline", "Fewest"): fg.MISSING,
        }
    beyond = {s: [c for c in levels[s] if c > knees[s]] for s in known}
    if all(len(beyond[s]) == len(levels[s]) for s in known):
        case = "all"
    elif all(len(beyond[s]) >= len(levels[s]) - 1 for s in known):
        case = "fewest"
    else:
        case = "some"
    first = all(beyond[s] and found.get(s, {}).get("clients") == beyond[s][0] for s in known)
    fewest = {levels[s][0] for s in known}
    return {
        name("Baseline", "Past", "Case"): case,
        name("Baseline", "Max", "Past", "Case"): "first" if first else "other",
        name("Baseline", "Fewest"): fg.num(fewest.pop()) if len(fewest) == 1 else fg.MISSING,
    }


def database_curve(points: pd.DataFrame, size: str = "small") -> dict[int, float]:
    """Our database's throughput (study units) per number of clients, each one session, at
    one message size; empty unmeasured."""
    rows = curves(points)
    if rows.empty:
        return {}
    g = rows[rows["size"] == size]
    return {int(c): float(x) for c, x in zip(g["clients"], g[models.THROUGHPUT], strict=True)}


def scale_model(points: pd.DataFrame) -> dict[str, str]:
    """How the baseline's points ran under the scale model: the factor s, the commit delay
    that stands for the study's disk write, and the database's CPU budget (cores); a dash
    where a profile set several or none."""

    def one(column: str, digits: int) -> str:
        if points.empty or column not in points.columns:
            return fg.MISSING
        values = pd.to_numeric(points[column], errors="coerce").dropna().unique()
        return fg.num(values[0], digits) if len(values) == 1 else fg.MISSING

    scale = one("scale", 2)
    factor = pd.to_numeric(points.get("scale", pd.Series(dtype=float)), errors="coerce")
    return {
        name("Scale", "Known"): "0" if scale == fg.MISSING else "1",
        name("Scale"): scale,
        # Autovacuum wakes every NAPTIME_S of this machine's time (not dilated).
        name("Autovacuum", "Study", "S"): (
            fg.num(pgsettings.NAPTIME_S * float(factor.iloc[0]), 1)
            if scale != fg.MISSING
            else fg.MISSING
        ),
        name("Autovacuum", "Naptime", "S"): str(pgsettings.NAPTIME_S),
        name("Vacuum", "Threshold"): fg.num(pgsettings.VACUUM_THRESHOLD, 0),
        name("Commit", "Delay"): one("queue.commit_delay_ms", 1),
        name("Server", "Budget"): one("budgets_cores.server", 2),
    }
