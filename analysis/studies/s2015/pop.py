"""Beyond the seed: its pop (the smallest id, all PostgreSQL before 9.5 allowed) against SKIP
LOCKED under a shared receiver (every client sends to and pops as one client), with the database's
wait events that explain the difference: a naive pop that wants the row another transaction
is deleting waits on that transaction's lock (Lock/transactionid, Lock/tuple) and then finds
nothing, where SKIP LOCKED passes over the locked row. The clients count the pops that deliver
a message; the middleware's windows count the empty ones too (its misses)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from analysis.report import figures as fg
from analysis.report.factor_words import words
from analysis.report.numbers import Report
from analysis.studies.s2015 import counters
from analysis.studies.s2015.common import level, name, system

STRATEGIES = ("skip_locked", "naive")
# The pops' confidence intervals over repetitions, as the points table has them and as
# `cells` names them (pop_ms_* still in µs until `cells` converts them).
RAW_INTERVALS = ["throughput_ops_ci_low", "throughput_ops_ci_high", "response_us_mean_ci_low",
                 "response_us_mean_ci_high"]  # fmt: skip
INTERVALS = ["pops_ci_low", "pops_ci_high", "pop_ms_ci_low", "pop_ms_ci_high"]
# How the figure and table name a strategy: the SQL clause, not the option's spelling.
STRATEGY_WORDS = {"skip_locked": "SKIP LOCKED", "naive": "naive"}


def cells(points: pd.DataFrame, db: pd.DataFrame, runs: pd.DataFrame,
          windows: pd.DataFrame) -> pd.DataFrame:  # fmt: skip
    """Per strategy and clients: system throughput, the pops' throughput and response time
    (study units), the middleware's share of empty pops, and the database's wait shares."""
    rows = system(points)
    columns = ["point", "pop", "clients", "throughput", "pops", "pop_ms", "empty",
               *counters.SHARES, *INTERVALS]  # fmt: skip
    if rows.empty:
        return pd.DataFrame(columns=columns)
    pops = system(points, kind="pop_queue")[["point", "throughput_ops_mean",
                                              "response_us_mean_mean", *RAW_INTERVALS]]  # fmt: skip
    out = pd.DataFrame(
        {
            "point": rows["point"],
            "pop": rows["level_pop"].astype(str),
            "clients": level(rows, "clients"),
            "throughput": rows["throughput_ops_mean"],
        }
    )
    pops = pops.rename(columns={"throughput_ops_mean": "pops", "response_us_mean_mean": "pop_us",
                                **dict(zip(RAW_INTERVALS, INTERVALS, strict=True))})  # fmt: skip
    out = out.merge(pops, on="point", how="left")
    out["pop_ms"] = out.pop("pop_us") * 1e-3
    for bound in ("low", "high"):
        out[f"pop_ms_ci_{bound}"] = out[f"pop_ms_ci_{bound}"] * 1e-3
    out = out.merge(counters.empty_pops(windows), on="point", how="left")
    out = out.merge(counters.per_point(db, runs), on="point", how="left")
    for c in columns:
        if c not in out.columns:
            out[c] = math.nan
    return out.sort_values(["pop", "clients"])[columns].reset_index(drop=True)


def table(c: pd.DataFrame) -> str:
    rows = [
        [fg.escape(words(r["pop"], STRATEGY_WORDS)), fg.num(r["clients"]),
         fg.num(r["throughput"]), fg.num(r["pops"]), fg.num(r["pop_ms"], 1), fg.pct(r["empty"]),
         fg.pct(r["share_lock"]), fg.pct(r["share_wal"]), fg.pct(r["share_cpu"])]
        for _, r in c.iterrows()
    ]  # fmt: skip
    header = ["pop", "clients", "ops/s", "pops/s", "pop (ms)", "empty", "lock", "WAL", "CPU"]
    return fg.tabular(header, rows, "lrrrrrrrr")


def figure(c: pd.DataFrame, path: str | Path) -> None:
    f, axes = fg.figure(ncols=2, width=6.4, height=2.4)
    tput, resp = axes[0]
    for i, (pop, g) in enumerate(c.groupby("pop")):
        # Each strategy its own marker and line style as well: where both overlap, both show.
        style = {"color": f"C{i}", "marker": fg.MARKERS[i], "linestyle": ("-", "--")[i % 2],
                 "markersize": 3.5, "label": words(str(pop), STRATEGY_WORDS)}  # fmt: skip
        for ax, metric in ((tput, "pops"), (resp, "pop_ms")):
            fg.errorbar_line(ax, g.rename(columns={metric: f"{metric}_mean"}), "clients",
                              metric, **style)  # fmt: skip
    tput.set_ylabel(fg.study_label("pops", "ops/s", wrap=True))
    resp.set_ylabel(fg.study_label("pop response", "ms", wrap=True))
    for ax in (tput, resp):
        ax.set_xlabel("clients")
        ax.set_ylim(bottom=0)
        if c.empty:
            fg.not_measured(ax)
    fg.legend_below(f, tput, ncols=2)
    fg.save(f, path)


def report(points: pd.DataFrame, db: pd.DataFrame, runs: pd.DataFrame, windows: pd.DataFrame,
           figure_path: str | Path) -> Report:  # fmt: skip
    c = cells(points, db, runs, windows)
    n = {name("Pop", "Measured"): "1" if not c.empty else "0"}
    most = c["clients"].max() if not c.empty else math.nan
    n[name("Pop", "Clients")] = fg.num(most)
    for pop in STRATEGIES:
        at = c[(c["pop"] == pop) & (c["clients"] == most)]
        r = at.iloc[0] if not at.empty else pd.Series(dtype=float)
        stem = name("Pop", pop)
        n[stem + "Pops"] = fg.num(r.get("pops", math.nan))
        n[stem + "Ms"] = fg.num(r.get("pop_ms", math.nan), 1)
        n[stem + "Empty"] = fg.pct(r.get("empty", math.nan))
        n[stem + "Lock"] = fg.pct(r.get("share_lock", math.nan))
        n[stem + "Wal"] = fg.pct(r.get("share_wal", math.nan))
    both = c[c["clients"] == most].set_index("pop")["pops"] if not c.empty else pd.Series()
    ratio = (both.get("naive", math.nan) / both.get("skip_locked", math.nan)
             if len(both) == 2 else math.nan)  # fmt: skip
    n[name("Pop", "Ratio")] = fg.num(ratio, 2)
    figure(c, figure_path)
    return Report(tex={"table": table(c)}, numbers=n)
