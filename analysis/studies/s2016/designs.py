"""The 2016 grid on both middleware designs: throughput, response time and the busiest pool
of each configuration, their figure and table, and the numbers and cases the section's
prose reads to say where each design's bottleneck sits."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from analysis import (
    bottleneck,  # bottleneck.SATURATED: a pool busy that share is saturated
    pools,
)
from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2016.times import averaged_runs

CONFIG = ["servers", "level_replication", "level_writes"]
DESIGNS = ("2016", "2018")
LABEL = {"2016": "2016 (per-server pools)", "2018": "2018 (one shared pool)"}


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def pool_words(name: str) -> str:
    """A pool's name (its kind and its server, from 0: `read 2`) in the report's words."""
    kind, _, server = name.replace("_", " ").partition(" ")
    if not server.strip().isdigit():
        return fg.escape(name)
    i = int(server)
    which = ORDINALS[i] if i < len(ORDINALS) else f"number {i + 1}"
    return f"the {kind} {'pool' if kind == 'read' else 'thread'} of the {which} server"


def point_pools(pool_table: pd.DataFrame, ok: Iterable[str]) -> pd.DataFrame:
    """Per point: the busiest pool (mean busy fraction over the point's ok runs) and the
    highest busy fraction of each pool kind."""
    load = pools.pool_load(pool_table[pool_table["run"].isin(set(ok))])
    columns = ["point", "busiest", "busiest_fraction", *[f"busy_{k}" for k in pools.KINDS]]
    if load.empty:
        return pd.DataFrame(columns=columns)
    per_pool = load.groupby(["point", "pool", "server"], as_index=False)["busy_fraction"].mean()
    rows = []
    for point, g in per_pool.groupby("point", sort=True):
        top = g.loc[g["busy_fraction"].idxmax()]
        kinds = g.groupby("pool")["busy_fraction"].max()
        rows.append(
            {
                "point": point,
                "busiest": pools.pool_name(top["pool"], top["server"]),
                "busiest_fraction": float(top["busy_fraction"]),
                **{f"busy_{k}": float(kinds.get(k, math.nan)) for k in pools.KINDS},
            }
        )
    return pd.DataFrame(rows, columns=columns)


def comparison(points: pd.DataFrame, pool_table: pd.DataFrame, ok: Iterable[str]) -> pd.DataFrame:
    """One row per configuration (servers, replication, writes) and design: client
    throughput and mean response time (µs), the busiest pool and the busy fractions."""
    client = points[(points["side"] == "client") & (points["type"] == "all")]
    keep = ["point", "level_design", *CONFIG, "throughput_ops_mean", "response_us_mean_mean"]
    out = client[keep].merge(point_pools(pool_table, ok), on="point", how="left")
    out["servers"] = out["servers"].astype(int)
    out["level_design"] = out["level_design"].astype(str)
    return out.sort_values(
        ["servers", "level_replication", "level_writes", "level_design"],
        key=lambda c: c.map(_order) if c.name in ("level_replication", "level_writes") else c,
    ).reset_index(drop=True)


def _order(v: object) -> float:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return {"none": 0.0, "half": 1.0, "full": 2.0}.get(str(v), 9.0)


def wide(cmp: pd.DataFrame) -> pd.DataFrame:
    """Both designs of a configuration in one row: `<column>_<design>`."""
    values = ["throughput_ops_mean", "response_us_mean_mean", "busiest", "busiest_fraction",
              "busy_read", "busy_write", "busy_shared"]  # fmt: skip
    if cmp.empty:
        return pd.DataFrame(columns=CONFIG)
    parts = []
    for design in DESIGNS:
        d = cmp[cmp["level_design"] == design].set_index(CONFIG)[values]
        parts.append(d.add_suffix(f"_{design}"))
    out = pd.concat(parts, axis=1).reset_index()
    out["ratio"] = out["throughput_ops_mean_2016"] / out["throughput_ops_mean_2018"]
    return out


def comparison_numbers(w: pd.DataFrame) -> dict[str, str]:
    """The comparison's numbers and cases for the section's prose: throughput of one design
    against the other, and where each design's bottleneck sits (a pool busy
    `SixteenDesignsSaturated` of the time or more is saturated). `SixteenDesignsCase`:
    `compared`, or `uncompared` where no configuration ran on both designs."""
    saturated = {"SixteenDesignsSaturated": fg.pct(bottleneck.SATURATED, 0)}
    both = w.dropna(subset=["ratio"])
    if both.empty:
        return saturated | {"SixteenDesignsCase": "uncompared"}
    return saturated | {
        "SixteenDesignsCase": "compared",
        "SixteenDesignsBoth": str(len(both)),
        "SixteenDesignsFaster": str(int((both["ratio"] > 1).sum())),
        "SixteenDesignsRatioMean": fg.pct(both["ratio"].mean(), 0),
        "SixteenDesignsRatioLow": fg.pct(both["ratio"].min(), 0),
        "SixteenDesignsRatioHigh": fg.pct(both["ratio"].max(), 0),
        **_sixteen(w.dropna(subset=["busiest_fraction_2016"])),
        **_eighteen(w.dropna(subset=["busy_shared_2018"])),
    }


def _config(row: pd.Series) -> str:
    """A configuration as an item `\\SixteenConfig{servers}{replication}{writes}`."""
    level = fg.escape(str(row["level_replication"]))
    return f"\\SixteenConfig{{{int(row['servers'])}}}{{{level}}}{{{row['level_writes']}}}"


def _sixteen(d16: pd.DataFrame) -> dict[str, str]:
    """The 2016 design's busiest pools. `SixteenDesignsSixteenCase`: the busiest pool is a
    `read` pool or a `write` thread in every configuration, `mixed`, or `unmeasured`;
    `SixteenDesignsSaturatedCase`: the kinds of pools saturated somewhere, `read`, `write`,
    `both`, or `none`."""
    if d16.empty:
        return {"SixteenDesignsSixteenCase": "unmeasured"}
    writes, n = int(d16["busiest_2016"].str.startswith("write").sum()), len(d16)
    top = d16.loc[d16["busiest_fraction_2016"].idxmax()]
    saturated = d16[d16["busiest_fraction_2016"] >= bottleneck.SATURATED]
    kinds = {"write" if b.startswith("write") else "read" for b in saturated["busiest_2016"]}
    return {
        "SixteenDesignsSixteenCase": "write" if writes == n else "read" if not writes else "mixed",
        "SixteenDesignsSixteenConfigs": str(n),
        "SixteenDesignsSixteenWrites": str(writes),
        "SixteenDesignsSixteenReads": str(n - writes),
        "SixteenDesignsSixteenTop": pool_words(str(top["busiest_2016"])),
        "SixteenDesignsSixteenTopConfig": _config(top),
        "SixteenDesignsSixteenTopBusy": fg.pct(top["busiest_fraction_2016"], 0),
        "SixteenDesignsSaturatedCase": "both" if len(kinds) == 2 else min(kinds, default="none"),
        "SixteenDesignsSaturatedConfigs": str(len(saturated)),
    }


def _eighteen(d18: pd.DataFrame) -> dict[str, str]:
    """The 2018 design's shared pool. `SixteenDesignsEighteenCase`: `saturated` in some
    configuration, `unsaturated`, or `unmeasured`."""
    if d18.empty:
        return {"SixteenDesignsEighteenCase": "unmeasured"}
    top = d18.loc[d18["busy_shared_2018"].idxmax()]
    saturated = int((d18["busy_shared_2018"] >= bottleneck.SATURATED).sum())
    return {
        "SixteenDesignsEighteenCase": "saturated" if saturated else "unsaturated",
        "SixteenDesignsEighteenConfigs": str(len(d18)),
        "SixteenDesignsEighteenSaturated": str(saturated),
        "SixteenDesignsEighteenMean": fg.pct(d18["busy_shared_2018"].mean(), 0),
        "SixteenDesignsEighteenTop": fg.pct(top["busy_shared_2018"], 0),
        "SixteenDesignsEighteenTopConfig": _config(top),
    }


def figure(cmp: pd.DataFrame, path: str) -> None:
    """Throughput (left) and response time (right) at the clients per configuration, the two
    designs' bars side by side."""
    configs = cmp.drop_duplicates(CONFIG)[CONFIG]
    # One line each, upright: 18 configurations side by side leave no room for more.
    names = [
        f"S={int(r.servers)} {r.level_replication} {r.level_writes}%" for r in configs.itertuples()
    ]
    fig, axes = fg.figure(ncols=2, height=3.0)
    x = np.arange(len(configs))
    colours = fg.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, metric, scale, label in (
        (axes[0][0], "throughput_ops_mean", 1.0, fg.study_label("throughput", "ops/s")),
        (
            axes[0][1],
            "response_us_mean_mean",
            1e-3,
            fg.study_label("response time", "ms"),
        ),
    ):
        for j, design in enumerate(DESIGNS):
            d = configs.merge(cmp[cmp["level_design"] == design], on=CONFIG, how="left")
            ax.bar(x + (j - 0.5) * 0.4, d[metric].to_numpy(float) * scale, width=0.4,
                   color=colours[j], label=LABEL[design])  # fmt: skip
        ax.set_xticks(x, names, fontsize=6, rotation=90)
        ax.set_ylabel(label)
        # Headroom above the tallest bar for the legend, which would cover bars otherwise.
        ax.set_ylim(0, ax.get_ylim()[1] * 1.4)
        ax.legend(fontsize=6, loc="upper left")
    fg.save(fig, path)


def tabular(w: pd.DataFrame) -> str:
    """Per configuration: both designs' throughput and response time, their ratio, the 2016
    design's busiest pool and the busy fractions per pool kind."""
    rows = []
    for _, r in w.iterrows():
        rows.append(
            [
                str(int(r["servers"])),
                fg.escape(str(r["level_replication"])),
                fg.escape(str(r["level_writes"])),
                fg.num(r.get("throughput_ops_mean_2016")),
                fg.num(r.get("throughput_ops_mean_2018")),
                fg.pct(r.get("ratio"), 0),
                fg.num(r.get("response_us_mean_mean_2016", np.nan) / 1e3, 2),
                fg.num(r.get("response_us_mean_mean_2018", np.nan) / 1e3, 2),
                fg.escape(str(r.get("busiest_2016")))
                if isinstance(r.get("busiest_2016"), str)
                else fg.MISSING,
                fg.pct(r.get("busiest_fraction_2016"), 0),
                fg.pct(r.get("busy_read_2016"), 0),
                fg.pct(r.get("busy_write_2016"), 0),
                fg.pct(r.get("busy_shared_2018"), 0),
            ]
        )
    return fg.tabular(
        ["$S$", "Replication", "$w$ (\\%)", "$X_{2016}$", "$X_{2018}$", "ratio", "$R_{2016}$",
         "$R_{2018}$", "busiest", "busy", "read", "write", "shared"],
        rows,
        "rllrrrrrlrrrr",
    )  # fmt: skip


def design_threads(middlewares: pd.DataFrame, ok: Iterable[str]) -> pd.DataFrame:
    """Each design's read and write threads (`threads_read`, `threads_write`), from its
    first ok run's middleware."""
    return middlewares[middlewares["run"].isin(ok)].drop_duplicates("design").set_index("design")


def numbers(points: pd.DataFrame, w: pd.DataFrame, threads: pd.DataFrame) -> dict[str, str]:
    """The comparison's numbers and cases, the pool size and the 2016 design's threads."""
    return {
        "SixteenDesignsConfigs": fg.num(len(w)),
        **comparison_numbers(w),
        "SixteenDesignsWorkers": fg.num(points["middleware.workers"].iloc[0])
        if len(points)
        else fg.MISSING,
        "SixteenDesignsReadThreads": fg.num(threads["threads_read"].get("2016", np.nan)),
        "SixteenDesignsWriteThreads": fg.num(threads["threads_write"].get("2016", np.nan)),
    }


def report(
    raw_points: pd.DataFrame,
    runs: pd.DataFrame,
    pool_table: pd.DataFrame,
    middlewares: pd.DataFrame,
    figure_path: str,
) -> tuple[str, dict[str, str]]:
    """The comparison's table and numbers from the family's raw tables; draws its figure at
    `figure_path`."""
    # Throughputs and times in the study's time, each row by its runs' scale.
    points = in_study_time(raw_points)
    ok = averaged_runs(runs)
    cmp = comparison(points, pool_table, ok)
    figure(cmp, figure_path)
    w = wide(cmp)
    table = tabular(w)
    return table, numbers(points, w, design_threads(middlewares, ok))
