"""The 2016 write-ratio family: throughput against the share of writes, the table of
throughput change relative to the base case (1 % writes) beside the original study's Table 4,
throughput against the original's ideal linear scaling, and queue and server times of sets
and gets in the layout of its Tables 5 and 6. Throughputs and times in the study's time
(throughput / s, times * s by the runs' scale); the relative changes do not depend on a
constant s."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from analysis.models.scalability import ideal_linear
from analysis.report import figures as fg
from analysis.report import series_plot as sp
from analysis.studies.s2016.formats import design_numbers
from analysis.studies.s2016.macros import Report
from analysis.studies.s2016.study_time import family_tables
from analysis.studies.s2016.tables import relative_change
from analysis.studies.s2016.times import averaged_runs, grid_tabular, point_times
from analysis.validate import set_share

# The raw tables report() reads, by their rule input names.
TABLES = ("points", "runs", "pool_requests")
KEYS = ["servers", "level_replication", "level_writes"]


PANELS = (("all", "all requests"), ("set", "sets"), ("get", "gets"))


def figure(points: pd.DataFrame, path: str) -> None:
    """Throughput of all requests, of sets and of gets (the original's Figures 15 to 17)
    against the share of writes, one colour and marker per S and replication level."""
    d = points.copy()
    d["writes"] = d["level_writes"].astype(float)
    d["config"] = "S=" + d["servers"].astype(str) + ", replication " + d["level_replication"]
    # As wide as the text, at which the report includes it: its fonts keep their size.
    fig, axes = fg.figure(ncols=3, width=6.4, height=3.4)
    for ax, (kind, name) in zip(axes[0], PANELS, strict=True):
        # Set apart along x: both sides' nearly equal lines show.
        sp.series_lines(ax, d[d["type"] == kind], "writes", "throughput_ops", series="config",
                        dodge=0.12)  # fmt: skip
        ax.set_xlabel("writes (%)")
        ax.set_title(name, fontsize=8)
        # Two lines: one is longer than the axes are high and is cut.
        ax.set_ylabel(fg.study_label("throughput", "ops/s", wrap=True))
        ax.set_xticks(sorted(d["writes"].unique()))
    # All requests and gets are of one magnitude and share a scale that holds both; sets
    # have their own.
    fg.shared_ylim([axes[0][0], axes[0][2]])
    # A row per replication level and side, its servers in numeric order.
    fg.legend_below(fig, axes[0][0], ncols=3)
    fg.save(fig, path)


def scalability_table(client: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """Throughput per type against the original's ideal implementation (§2.3): linear in S
    from the fewest servers without replication, replication free."""
    rows, frames = [], []
    for kind in ("set", "get"):
        c = client[client["type"] == kind]
        if c.empty:
            continue
        s = ideal_linear(
            c, "throughput_ops_mean", "servers", ["level_writes"], {"level_replication": "none"}
        )
        frames.append(s)
    if not frames:
        return fg.tabular(["$S$", "$R$", "Writes (\\%)"], [], "rlr"), pd.DataFrame()
    both = pd.concat(frames, ignore_index=True)
    wide = both.pivot_table(
        index=["servers", "level_replication", "level_writes"],
        columns="type",
        values=["throughput_ops_mean", "ideal", "efficiency"],
        aggfunc="first",
    )
    order = sorted(
        wide.index,
        key=lambda k: (int(k[0]), 0 if k[1] == "none" else 1 if k[1] == "half" else 2, float(k[2])),
    )
    for key in order:
        r = wide.loc[key]
        row = [str(int(key[0])), str(key[1]), str(key[2])]
        for kind in ("set", "get"):
            row += [
                fg.num(r.get(("throughput_ops_mean", kind), float("nan"))),
                fg.num(r.get(("ideal", kind), float("nan"))),
                fg.pct(r.get(("efficiency", kind), float("nan")), 0),
            ]
        rows.append(row)
    header = ["$S$", "$R$", "Writes (\\%)"] + [
        h for k in ("set", "get") for h in (rf"$X_\mathrm{{{k}}}$", "ideal", "measured/ideal")
    ]
    return fg.tabular(header, rows, "rlr" + "rrr" * 2), both


REPLICATION = {"none": "no replication", "full": "full replication"}
METRIC = {
    "queue": "time in the queue",
    "server": "time waiting for the servers",
    "response": "response time in the middleware",
}


def times_tables(
    points: pd.DataFrame, runs: pd.DataFrame, pool_requests: pd.DataFrame, ref: dict
) -> dict[str, str]:
    """Queue and server time percentiles per type (a tabular each): blocks of metric ×
    replication, rows of servers, columns of write shares; sets beside the original's
    Tables 5 and 6."""
    info = points.drop_duplicates("point")[
        ["point", "servers", "level_replication", "level_writes"]
    ]
    ok = averaged_runs(runs)
    cells: dict = {}
    for metric in METRIC:
        t = point_times(pool_requests, ok, metric).merge(info, on="point")
        for _, r in t.iterrows():
            block = f"{metric}/{r['level_replication']}"
            key = (r["type"], block, str(int(r["servers"])), str(r["level_writes"]))
            cells[key] = {q: r[q] for q in ("p50", "p90")}
    orig = ref["writes_queue_median_ms"]["set"]
    servers = sorted(
        {int(s) for s in points["servers"]} | {int(s) for v in orig.values() for s in v["values"]}
    )
    writes = sorted(
        {str(w) for w in points["level_writes"]}
        | {str(w) for v in orig.values() for by_s in v["values"].values() for w in by_s},
        key=float,
    )
    replication = [r for r in REPLICATION if r in set(points["level_replication"]) | set(orig)]
    out: dict[str, str] = {}
    for kind in ("set", "get"):
        blocks = []
        for metric, name in METRIC.items():
            for r in replication:
                table = (
                    orig.get(r, {}).get("table") if metric == "queue" and kind == "set" else None
                )
                blocks.append(
                    (
                        f"{metric}/{r}",
                        f"{name}, {REPLICATION[r]}" + (f" (orig.: {table})" if table else ""),
                    )
                )

        def reference(key: tuple[str, str, str]) -> float | None:
            block, s, w = key
            metric, r = block.split("/")
            if metric != "queue":
                return None
            return orig.get(r, {}).get("values", {}).get(int(s), {}).get(w)

        out[kind] = grid_tabular(
            {k[1:]: v for k, v in cells.items() if k[0] == kind},
            blocks,
            [(str(s), str(s)) for s in servers],
            [(w, f"{w}\\,\\% writes") for w in writes],
            reference if kind == "set" else None,
            "$S$",
            "",
        )
    return out


def type_numbers(client: pd.DataFrame) -> dict[str, str]:
    """How set and get throughput move from the lowest to the highest share of writes, per
    S and R (the original: sets rise, gets fall). `SixteenWritesTypeCase`: `tested`, or
    `untested` with a single share of writes."""
    levels = fg.levels_sorted(client["level_writes"])
    moves = {"set": [0, 0], "get": [0, 0]}  # [rises, configurations]
    for kind in moves:
        c = client[client["type"] == kind]
        for _, g in c.groupby(["servers", "level_replication"]):
            x = g.set_index("level_writes")["throughput_ops_mean"]
            lo, hi = x.get(levels[0]), x.get(levels[-1])
            if len(levels) > 1 and lo is not None and hi is not None:
                moves[kind][0] += int(hi > lo)
                moves[kind][1] += 1
    tested = len(levels) > 1 and moves["set"][1] > 0
    return {
        "SixteenWritesTypeCase": "tested" if tested else "untested",
        "SixteenWritesTypeLow": str(levels[0]) if levels else fg.MISSING,
        "SixteenWritesTypeHigh": str(levels[-1]) if levels else fg.MISSING,
        "SixteenWritesSetRises": str(moves["set"][0]),
        "SixteenWritesSetConfigs": str(moves["set"][1]),
        "SixteenWritesGetFalls": str(moves["get"][1] - moves["get"][0]),
        "SixteenWritesGetConfigs": str(moves["get"][1]),
    }


def mix_numbers(runs: pd.DataFrame) -> dict[str, str]:
    """How much of the lowest share of writes the clients' measured windows held: memaslap
    sends its sets in bursts, so a run's measured stretch may hold fewer sets than its mix,
    or none. Over the lowest level's completed runs: the share of sets among the sets and
    gets their clients counted, and how many runs counted no set."""
    counted = runs[(runs["side"] == "client") & (runs["status"] == "ok")]
    counted = counted[counted["type"].isin(["set", "get"])]
    if counted.empty:
        return {"SixteenWritesMixCase": "empty"}
    per_run = counted.pivot_table(
        index=["run", "workload.ratio"], columns="type", values="count", aggfunc="sum", fill_value=0
    ).reset_index()
    per_run["planned"] = per_run["workload.ratio"].map(set_share)
    lowest = per_run[per_run["planned"] == per_run["planned"].min()]
    sets = lowest["set"] if "set" in lowest else pd.Series(0, index=lowest.index)
    gets = lowest["get"] if "get" in lowest else pd.Series(0, index=lowest.index)
    return {
        "SixteenWritesMixCase": "measured",
        "SixteenWritesMixRuns": fg.num(len(lowest)),
        "SixteenWritesMixNoSet": fg.num(int((sets == 0).sum())),
        "SixteenWritesMixShare": fg.pct(sets.sum() / max(sets.sum() + gets.sum(), 1), 2),
        "SixteenWritesMixPlanned": fg.num(100 * float(lowest["planned"].iloc[0]), 0),
    }


def scalability_numbers(scaled: pd.DataFrame, ref: dict) -> dict[str, str]:
    """Measured against ideal throughput at the most servers, per replication level (mean
    over the shares of writes and over sets and gets), an item
    `\\SixteenScalingItem{share}{level}` each, joined by " and ". `SixteenScalingCase`:
    `several` server counts, a `single` one, or `empty` (no throughput per type);
    `SixteenScalingAboveCase`: `above` where a share exceeds the ideal, else `within`."""
    out = {"SixteenOrigScalingSection": ref["section"]}
    if scaled.empty:
        return out | {
            "SixteenScalingCase": "empty",
            "SixteenScalingAboveCase": "within",
            "SixteenScalingServersLow": fg.MISSING,
            "SixteenScalingServersHigh": fg.MISSING,
            "SixteenScalingItems": "",
        }
    servers = sorted({int(v) for v in scaled["servers"]})
    top = scaled[scaled["servers"].astype(int) == servers[-1]]
    share = top.groupby("level_replication")["efficiency"].mean()
    items = [
        f"\\SixteenScalingItem{{{fg.pct(share[r], 0)}}}{{{fg.escape(r)}}}"
        for r in REPLICATION
        if r in share.index
    ]
    return out | {
        "SixteenScalingCase": "single" if len(servers) < 2 else "several",
        "SixteenScalingAboveCase": "above" if (share > 1).any() else "within",
        "SixteenScalingServersLow": str(servers[0]),
        "SixteenScalingServersHigh": str(servers[-1]),
        "SixteenScalingItems": " and ".join(items),
    }


def changes(points: pd.DataFrame, ref: Mapping) -> tuple[pd.DataFrame, str]:
    """The client points (all requests) with their throughput's change in percent against
    the same configuration at the lowest share of writes (`same`) and against the original's
    base configuration (`global`), and that lowest share."""
    client = points[points["side"] == "client"].reset_index(drop=True)
    lowest = sorted(client["level_writes"].unique(), key=float)[0]
    client["same"] = relative_change(client, "throughput_ops_mean", KEYS, {"level_writes": lowest})
    base = {
        "servers": ref["base"]["servers"],
        "level_replication": ref["base"]["replication"],
        "level_writes": ref["base"]["writes"],
    }
    client["global"] = relative_change(client, "throughput_ops_mean", KEYS, base)
    return client, lowest


def change_table(client: pd.DataFrame, ref: Mapping) -> str:
    """Per configuration of ours or of the original (so the original's rows always show) and
    share of writes: our changes against the same configuration and against the base, and the
    original's (its Table 4)."""
    writes = sorted(set(client["level_writes"]) | set(ref["values"][3]["none"]), key=float)
    # Every configuration of ours or of the original, so the original's rows always show.
    pairs = {
        (int(s), str(r))
        for s, r in zip(client["servers"], client["level_replication"], strict=True)
    }
    pairs |= {(int(s), str(r)) for s, by_r in ref["values"].items() for r in by_r}
    configs = pd.DataFrame(sorted(pairs), columns=["servers", "level_replication"])
    configs = configs.sort_values(["servers", "level_replication"], ascending=[True, False])
    sub = ["$S$", "$R$"] + ["same", "base", "orig."] * len(writes)
    rows = []
    for _, c in configs.iterrows():
        s, r = int(c["servers"]), c["level_replication"]
        row = [str(s), r]
        for w in writes:
            m = client[
                (client["servers"] == s)
                & (client["level_replication"] == r)
                & (client["level_writes"] == w)
            ]
            orig = ref["values"].get(s, {}).get(r, {}).get(w)
            row += [
                fg.num(m["same"].iloc[0], 1) if len(m) else fg.MISSING,
                fg.num(m["global"].iloc[0], 1) if len(m) else fg.MISSING,
                fg.num(orig, 1) if orig is not None else fg.MISSING,
            ]
        rows.append(row)
    spec = "rl" + "rrr" * len(writes)
    groups = [rf"{w}\,\% writes" for w in writes]
    return fg.grouped_tabular(["", ""], groups, 3, sub, rows, spec)


def worst_numbers(client: pd.DataFrame, lowest: str) -> dict[str, str]:
    """The change furthest from zero against the same configuration's base case, and its
    configuration (`SixteenWritesWorstCase`: `changed`, or `untested` without a second
    share of writes)."""
    changed = client[client["level_writes"] != lowest]
    if not changed["same"].notna().any():
        missing = ("Change", "Servers", "Replication", "Writes")
        return {"SixteenWritesWorstCase": "untested"} | {
            f"SixteenWritesWorst{name}": fg.MISSING for name in missing
        }
    worst = changed.loc[changed["same"].abs().idxmax()]
    return {
        "SixteenWritesWorstCase": "changed",
        "SixteenWritesWorstChange": fg.num(worst["same"], 1),
        "SixteenWritesWorstServers": str(int(worst["servers"])),
        "SixteenWritesWorstReplication": str(worst["level_replication"]),
        "SixteenWritesWorstWrites": str(worst["level_writes"]),
    }


def numbers(
    client: pd.DataFrame,
    lowest: str,
    scaled: pd.DataFrame,
    points_by_type: pd.DataFrame,
    runs: pd.DataFrame,
    reference: Mapping,
) -> dict[str, str]:
    """The family's numbers beside the original's design, table and scalability section."""
    ref, design = reference["writes_change_percent"], reference["design"]["writes"]
    return {
        **design_numbers("SixteenOrigWrites", design),
        "SixteenWritesPoints": fg.num(client["point"].nunique()),
        "SixteenWritesLevels": ", ".join(fg.levels_sorted(client["level_writes"])),
        "SixteenWritesServers": ", ".join(str(v) for v in fg.levels_sorted(client["servers"])),
        "SixteenWritesBase": fg.num(float(lowest)),
        **worst_numbers(client, lowest),
        "SixteenWritesWorkers": fg.num(client["middleware.workers"].iloc[0]),
        "SixteenWritesClients": fg.num(client["clients_total"].iloc[0]),
        "SixteenOrigWritesTable": ref["table"],
        **scalability_numbers(scaled, reference["scalability"]),
        **type_numbers(points_by_type),
        **mix_numbers(runs),
    }


def report(tables: Mapping[str, pd.DataFrame], reference: Mapping, figure_path: str) -> Report:
    """The family's tables and numbers from its raw `tables` (TABLES) and reference2016.yaml;
    draws its figure at `figure_path`."""
    # Every throughput and time in the study's time, each row by its runs' scale.
    study = family_tables({t: tables[t] for t in ("points", "pool_requests")})
    points, pool_requests, runs = study["points"], study["pool_requests"], tables["runs"]
    times = times_tables(points, runs, pool_requests, reference)
    figure(points, figure_path)
    points_by_type = points[points["side"] == "client"]
    scalability, scaled = scalability_table(points[points["side"] == "client"])
    points = points[points["type"] == "all"].copy()
    client, lowest = changes(points, reference["writes_change_percent"])
    table = change_table(client, reference["writes_change_percent"])
    return Report(
        {
            "table": table,
            "times_set": times["set"],
            "times_get": times["get"],
            "scalability": scalability,
        },
        numbers(client, lowest, scaled, points_by_type, runs, reference),
    )
