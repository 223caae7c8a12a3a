"""Snakemake script: the baselines section (without and with middlewares): figures, the
maximum-throughput tables beside the study's, the per-machine bounds from the measured link
capacities (seed 004's Table 1), the middlewares' statistics per worker count (its Figs 4-5),
the interactive-law checks (with Z = 0, and with N counted inside the middleware as in its
Fig. 6) and numbers."""

import math

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator
from r2018_common import beside_rows, camel, law_rows_tabular, log_to, points, reference

from analysis import validate
from analysis.linkload import DEFAULT_KEY_BYTES, Sizes
from analysis.models import linkbounds, modified_law
from analysis.report import figures as rf
from analysis.scaling import in_study_time
from analysis.studies.s2018 import queue_length
from analysis.studies.s2018 import seed as seed2018

SETUPS_D = ["one_server", "two_servers"]
SETUPS_M = ["one_middleware", "two_middlewares"]
WORKLOADS = ["read-only", "write-only"]


PANELS = [
    ("throughput_ops", 1, "throughput [ops/s]", "throughput"),
    ("response_us_mean", 1e-3, "resp. [ms]", "response_ms"),
]


def panel_grid(
    data: pd.DataFrame, seeds: pd.DataFrame, series: str | None, title: str, path: str
) -> None:
    """Throughput and response time against the clients, per workload, in the study's time
    (`data` from in_study_time), with seed 004's values (`seeds`: rows of
    seed2018.baseline_figure_points with their legend `label` and `colour`)."""
    fig, axes = rf.figure(ncols=2, nrows=2, height=4.6)
    for row, wl in enumerate(WORKLOADS):
        d = data[data["level_workload"] == wl]
        for col, (metric, scale, unit, seed_column) in enumerate(PANELS):
            ax = axes[row][col]
            if d.empty:
                ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
            else:
                rf.error_lines(ax, d, "clients_total", metric, series, scale)
            theirs = seeds[seeds["workload"] == wl]
            for (label, side, colour), g in theirs.groupby(["label", "side", "colour"]):
                rf.seed_points(ax, g["clients"], g[seed_column], label, side, colour)
            ax.set(xlabel="clients (virtual)", ylabel=f"{wl}: {unit}")
            ax.set_ylim(bottom=0)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=6)
    fig.suptitle(title, fontsize=8)
    rf.save(fig, path)


def figures(direct: pd.DataFrame, mw: pd.DataFrame, ref: dict, out) -> None:  # noqa: ANN001
    """The direct baseline per setup; the middleware baseline per setup, workers as series;
    both in the study's time, beside seed 004's maxima (its Tables 3 and 5)."""
    seeds = seed2018.baseline_figure_points(ref)
    colours = plt_colours()
    direct = direct.assign(setup=direct["level_setup"].str.replace("_", " "))
    names = rf.levels_sorted(direct["setup"])
    # Without middleware each setup's maximum takes the colour of that setup's line.
    seeds_d = seeds[seeds["setup"].isin(SETUPS_D)].assign(
        label=lambda t: "seed 004 max., " + t["setup"].str.replace("_", " "),
        colour=lambda t: [
            colours[names.index(n) % len(colours)] if n in names else "k"
            for n in t["setup"].str.replace("_", " ")
        ],
    )
    title = "Baseline without middleware (client side), study time"
    panel_grid(direct, seeds_d, "setup", title, out.fig_direct)
    mw = mw.assign(workers=mw["middleware.workers"].astype(int).astype(str) + " WT")
    for setup, path in zip(SETUPS_M, [out.fig_mw1, out.fig_mw2], strict=True):
        d = mw[mw["level_setup"] == setup]
        s = seeds[seeds["setup"] == setup]
        s = s.assign(
            label=[
                f"seed 004, {int(w)} WT, {side}"
                for w, side in s[["workers", "side"]].itertuples(index=False)
            ],
            colour="k",
        )
        title = f"Baseline with middleware: {setup.replace('_', ' ')}, study time"
        panel_grid(d, s, "workers", title, path)


def study(row: pd.Series | None, column: str) -> float:
    """A point's value in the study's time (throughput / scale, time x scale; scale 1 where
    the point recorded none)."""
    if row is None:
        return math.nan
    scale = float(row.get("scale", 1.0)) if pd.notna(row.get("scale", 1.0)) else 1.0
    if column == "throughput":
        return float(row.get("throughput_study_mean", row["throughput_ops_mean"] / scale))
    raw = row.get("response_us_mean_mean", math.nan) / 1e3
    return float(row.get("response_ms_study_mean", raw * scale))


def best(d: pd.DataFrame) -> pd.Series | None:
    c = d[d["side"] == "client"].dropna(subset=["throughput_ops_mean"])
    return None if c.empty else c.loc[c["throughput_ops_mean"].idxmax()]


def direct_table(direct: pd.DataFrame, ref: dict, path: str) -> list[str]:
    """The maximum throughput without middleware (seed 004 Table 3 layout), ours beside
    theirs; its macros."""
    numbers: list[str] = []
    rows = []
    for setup in SETUPS_D:
        for wl in WORKLOADS:
            b = best(direct[(direct["level_setup"] == setup) & (direct["level_workload"] == wl)])
            theirs = ref["baselines_direct"][setup][wl]
            low, high = seed2018.direct_beside(ref, setup, wl)
            rows.append(
                [
                    setup.replace("_", " "),
                    wl,
                    rf.MISSING if b is None else str(int(b["clients_total"])),
                    rf.MISSING if b is None else rf.num(b["throughput_ops_mean"]),
                    rf.MISSING
                    if b is None
                    else rf.num(b["throughput_ops_ci_high"] - b["throughput_ops_mean"]),
                    rf.MISSING if b is None else rf.num(b["response_us_mean_mean"] / 1e3, 2),
                    rf.MISSING if b is None else rf.num(study(b, "throughput")),
                    rf.MISSING if b is None else rf.num(study(b, "response"), 2),
                    rf.num(theirs),
                    rf.num(low) if low == high else f"{rf.num(low)}/{rf.num(high)}",
                ]
            )
            key = camel("BaseDirect", setup, wl)
            # Beside the study: the value in the study's time (rescaled by the run's scale).
            numbers.append(
                rf.macro(f"{key}X", rf.MISSING if b is None else rf.num(study(b, "throughput")))
            )
            numbers.append(
                rf.macro(
                    f"{key}XRaw", rf.MISSING if b is None else rf.num(b["throughput_ops_mean"])
                )
            )
            numbers.append(rf.macro(f"{key}XStudy", rf.num(theirs)))
            numbers.append(
                rf.macro(
                    f"{key}XSeedTwo",
                    rf.num(low) if low == high else f"{rf.num(low)}/{rf.num(high)}",
                )
            )
    header = [
        "setup",
        "workload",
        "clients",
        "X [ops/s]",
        "$\\pm$CI",
        "R [ms]",
        "$X/s$",
        "$R\\cdot s$ [ms]",
        "seed 004 X",
        "seed 002 X",
    ]
    # Without repetitions no point has an interval: the column goes, and the caption says so.
    no_ci = all(r[4] == rf.MISSING for r in rows)
    if no_ci:
        rows = [r[:4] + r[5:] for r in rows]
        header = header[:4] + header[5:]
    numbers.append(
        rf.macro(
            "BaseDirectCiNote",
            "no CI: fewer than three repetitions" if no_ci else "CI half-width over repetitions",
        )
    )
    rf.write(path, rf.tabular(header, rows, "ll" + "r" * (len(header) - 2)))

    return numbers


def middleware_table(mw: pd.DataFrame, ref: dict, path: str) -> list[str]:
    """The maximum throughput with middlewares (seed 004 Table 5 layout); its macros."""
    numbers: list[str] = []
    rows = []
    for setup in SETUPS_M:
        for wl in WORKLOADS:
            d = mw[(mw["level_setup"] == setup) & (mw["level_workload"] == wl)]
            b = best(d)
            theirs = ref["baselines_middleware"][setup][wl]
            if b is None:
                ours = [rf.MISSING] * 7 + [rf.num(theirs["client_x"])]
            else:
                m = d[(d["point"] == b["point"]) & (d["side"] == "middleware")]
                m = m.iloc[0] if not m.empty else pd.Series(dtype=float)
                scale = float(b.get("scale", 1.0)) if pd.notna(b.get("scale", 1.0)) else 1.0
                # In the study's time (rescaled by the runs' scale), with the raw client X.
                ours = [
                    f"{int(b['clients_total'])}/{int(b['middleware.workers'])}",
                    rf.num(b["throughput_ops_mean"]),
                    rf.num(study(b, "throughput")),
                    rf.num(m.get("throughput_ops_mean", math.nan) / scale),
                    rf.num(study(b, "response"), 2),
                    rf.num(m.get("response_us_mean_mean", math.nan) / 1e3 * scale, 2),
                    rf.num(m.get("queue_us_mean_mean", math.nan) / 1e3 * scale, 2),
                    rf.num(theirs["client_x"]),
                ]
                numbers.append(
                    rf.macro(camel("BaseMw", setup, wl, "X"), rf.num(study(b, "throughput")))
                )
                numbers.append(
                    rf.macro(camel("BaseMw", setup, wl, "XRaw"), rf.num(b["throughput_ops_mean"]))
                )
            rows.append([setup.replace("_", " "), wl, *ours])
    rf.write(
        path,
        rf.tabular(
            [
                "setup",
                "workload",
                "N/WT",
                "X cl. raw",
                "X cl.",
                "X mw",
                "R cl. [ms]",
                "R mw [ms]",
                "queue [ms]",
                "study X cl.",
            ],
            rows,
            "llrrrrrrrr",
        ),
    )

    return numbers


def seeds_tables(mw_study: pd.DataFrame, ref: dict, out) -> list[str]:  # noqa: ANN001
    """Beside the two 2018 reports: the maximum with middlewares, and the interactive law in
    seed 002's form (R_client - N/X_mw, ms)."""
    numbers: list[str] = []
    best_mw = seed2018.best_points(mw_study, ["level_setup", "level_workload"])
    beside = seed2018.max_throughput_beside(best_mw, ref)
    rf.write(
        out.tab_seeds_mw,
        rf.tabular(
            ["setup", "workload", "", "ours", "seed 002", "seed 004"],
            beside_rows(beside, ["setup", "workload"]),
            "lllrrr",
        ),
    )
    by_key = beside.set_index(["setup", "workload", "quantity"])
    law_base = seed2018.law_beside(seed2018.law_deviations_ms(mw_study), ref)
    rf.write(out.tab_seeds_law, law_rows_tabular(law_base))
    law_key = law_base.set_index(["setup", "workload"])
    for setup in SETUPS_M:
        for wl in WORKLOADS:
            for quantity, digits in (("client_x", 0), ("mw_queue", 1)):
                r = (
                    by_key.loc[(setup, wl, quantity)]
                    if (setup, wl, quantity) in by_key.index
                    else {}
                )
                key = camel("Seeds", setup, wl, quantity)
                numbers += [
                    rf.macro(f"{key}{who}", rf.num(r.get(col, math.nan), digits))
                    for who, col in (
                        ("Ours", "ours"),
                        ("SeedTwo", "seed002"),
                        ("SeedFour", "seed004"),
                    )
                ]
            r = law_key.loc[(setup, wl)] if (setup, wl) in law_key.index else {}
            key = camel("SeedsLaw", setup, wl)
            numbers += [
                rf.macro(f"{key}OursMax", rf.num(r.get("ours_max_abs_ms", math.nan), 1)),
                rf.macro(f"{key}SeedTwoMax", rf.num(r.get("seed002_max_abs_ms", math.nan), 1)),
            ]

    return numbers


def interactive_law(direct: pd.DataFrame, mw: pd.DataFrame, path: str) -> list[str]:
    """The interactive law with Z = 0: client X against N/(R+Z) for every point of both
    families."""
    numbers: list[str] = []
    law_in = pd.concat([direct, mw])
    law_in = law_in[(law_in["side"] == "client") & (law_in["throughput_ops_mean"] > 0)]
    law_in = law_in.dropna(subset=["response_us_mean_mean"])
    law = validate.interactive_law_table(
        law_in, throughput="throughput_ops_mean", response_us="response_us_mean_mean"
    )
    dev = law["relative_error"].abs()
    fig, axes = rf.figure(ncols=1, width=3.6, height=3.0)
    ax = axes[0][0]
    for fam, marker in [
        ("one_server", "o"),
        ("two_servers", "^"),
        ("one_middleware", "s"),
        ("two_middlewares", "D"),
    ]:
        d = law[law["level_setup"] == fam]
        if not d.empty:
            ax.scatter(
                d["throughput_ops_mean"],
                d["predicted_throughput_ops"],
                s=12,
                marker=marker,
                label=fam.replace("_", " "),
            )
    lim = float(
        np.nanmax([law["throughput_ops_mean"].max(), law["predicted_throughput_ops"].max(), 1])
    )
    ax.plot([0, lim * 1.05], [0, lim * 1.05], color="grey", lw=0.8, label="X = N/(R+Z)")
    ax.set(xlabel="measured X (client) [ops/s]", ylabel="N/(R+Z), Z = 0 [ops/s]")
    ax.legend(fontsize=6)
    rf.save(fig, path)
    numbers.append(rf.macro("BaseLawPoints", str(len(law))))
    numbers.append(rf.macro("BaseLawMaxDev", rf.pct(dev.max() if len(dev) else math.nan)))
    # The point of the largest deviation and the retransmission timeouts its clients waited
    # out (the validation appendix's explanation of such deviations).
    top = law.loc[dev.idxmax()] if len(dev) else None
    numbers.append(
        rf.macro(
            "BaseLawMaxDevPoint",
            rf.MISSING
            if top is None
            else f"{str(top['level_setup']).replace('_', ' ')}, {top['level_workload']},"
            f" {int(top['clients_total'])} clients",
        )
    )
    rto = top.get("rto_timeouts", math.nan) if top is not None else math.nan
    numbers.append(rf.macro("BaseLawMaxDevTimeouts", rf.num(rto)))
    numbers.append(rf.macro("BaseLawMedianDev", rf.pct(dev.median() if len(dev) else math.nan)))
    numbers.append(
        rf.macro(
            "BaseLawThinkUs",
            rf.num(law["fitted_think_us"].median() if len(law) else math.nan, 0),
        )
    )

    return numbers


def _bound_at_best(d: pd.DataFrame) -> tuple[pd.Series | None, validate.BandwidthBound | None]:
    """The point of highest client throughput and its link bound (as run), from the
    capacities every bound of the report uses (analysis.models.linkbounds.bound_capacity_mbit)."""
    b = best(d)
    return b, (None if b is None else validate.run_bandwidth_bound(b))


# The role whose link binds, as the text names its upload.
ROLE_UPLOAD = {"client": "the clients'", "middleware": "the middlewares'", "server": "the server's"}


def _bound_words(b: pd.Series, bound: validate.BandwidthBound, scale: float) -> str:
    """Whether a maximum is held by a link: at NEAR_BOUND of its bound or more it is."""
    share = b["throughput_ops_mean"] / bound.bound
    link = f"{ROLE_UPLOAD[bound.binding]} upload bound ({rf.num(bound.bound / scale)}~ops/s)"
    if share >= validate.NEAR_BOUND:
        return f"is held by a link, at {rf.num(share, 2)} of {link}"
    return f"stays below every link's bound, at {rf.num(share, 2)} of {link}"


def bandwidth_bound(direct: pd.DataFrame, mw: pd.DataFrame) -> list[str]:
    """The link bounds of the baselines' maxima in the study's time: one server's reads
    (its upload over GET replies) and the writes without and with two middlewares (the
    binding role's upload), with the share of its bound each maximum reached."""
    numbers: list[str] = []
    cases = [
        ("BaseBoundOneServerRead", direct, "one_server", "read-only"),
        ("BaseBoundOneServerWrite", direct, "one_server", "write-only"),
        ("BaseBoundTwoMwWrite", mw, "two_middlewares", "write-only"),
    ]
    for key, frame, setup, workload in cases:
        d = frame[(frame["level_setup"] == setup) & (frame["level_workload"] == workload)]
        b, bound = _bound_at_best(d)
        ok = b is not None and bound is not None
        scale = float(b["scale"]) if ok and pd.notna(b.get("scale")) else 1.0
        numbers += [
            rf.macro(key, rf.num(bound.bound / scale) if ok else rf.MISSING),
            rf.macro(
                f"{key}Share",
                rf.num(b["throughput_ops_mean"] / bound.bound, 2) if ok else rf.MISSING,
            ),
            rf.macro(f"{key}Role", ROLE_UPLOAD[bound.binding] if ok else rf.MISSING),
            rf.macro(f"{key}Words", _bound_words(b, bound, scale) if ok else "is not measured"),
        ]
    src = direct.iloc[0] if not direct.empty else mw.iloc[0]
    numbers += [
        rf.macro("BaseHostKind", str(src["host_kind"])),
        rf.macro(
            "BaseBoundNote",
            "applies (capped links)"
            if str(src["host_kind"]) != "local"
            else "does not apply (local processes, no capped links)",
        ),
    ]
    return numbers


MESSAGE_NAMES = {
    "set_request": "SET request",
    "set_reply": "SET reply",
    "get_request": "GET request",
    "get_reply": "GET reply",
}
ROLES = ("client", "middleware", "server")


def link_bounds_table(direct: pd.DataFrame, mw: pd.DataFrame, ref: dict, path: str) -> list[str]:
    """Seed 004's Table 1 from our measured link capacities: per role, the measured capacity
    (as run and rescaled to the study's time by 1/s) and the messages per second it allows,
    in the study's time, beside the seed's."""
    table1 = ref["bandwidth"]["table1"]
    both = pd.concat([direct, mw])
    both = both[both["side"] == "client"]
    scale = float(both["scale"].median()) if "scale" in both and both["scale"].notna().any() else 1
    key = pd.to_numeric(both.get("workload.key_size", pd.Series()), errors="coerce").dropna()
    size = pd.to_numeric(both.get("workload.data_size", pd.Series()), errors="coerce").dropna()
    sizes = Sizes(
        key=int(key.iloc[0]) if len(key) else DEFAULT_KEY_BYTES,
        data=int(size.iloc[0]) if len(size) else 4096,
    )
    measured = {r: linkbounds.measured_capacity(both, r) for r in ROLES}
    found = {r: c / scale for r, c in measured.items() if math.isfinite(c) and c > 0}
    bounds = linkbounds.message_bounds(found, sizes).set_index(["role", "message"])
    nbytes = linkbounds.message_bytes(sizes)
    rows, devs = [], []
    for role in ROLES:
        theirs = table1[role]
        cap_set = pd.to_numeric(both.get(f"caps_mbit.{role}"), errors="coerce").median()
        devs.append(found.get(role, math.nan) / float(theirs["upload_mbit"]) - 1)
        for i, message in enumerate(linkbounds.ROLE_MESSAGES[role]):
            ours = bounds["bound_ops"].get((role, message), math.nan)
            first = i == 0
            rows.append(
                [
                    role if first else "",
                    rf.num(cap_set, 2) if first else "",
                    rf.num(measured[role], 2) if first else "",
                    rf.num(found.get(role, math.nan), 1) if first else "",
                    rf.num(theirs["upload_mbit"]) if first else "",
                    MESSAGE_NAMES[message],
                    str(nbytes[message]),
                    str(table1["message_bytes"][message]),
                    rf.num(ours),
                    rf.num(theirs["ops"].get(message, math.nan)),
                ]
            )
    rf.write(
        path,
        rf.tabular(
            [
                "role",
                "cap [Mbit/s]",
                "measured",
                "measured$/s$",
                "seed 004",
                "message",
                "bytes",
                "seed 004",
                "bound [ops/s]",
                "seed 004",
            ],
            rows,
            "lrrrrlrrrr",
        ),
    )
    dev = pd.Series(devs, dtype=float).abs()
    server_get = bounds["bound_ops"].get(("server", "get_reply"), math.nan)
    return [
        rf.macro("LinkScale", rf.num(scale, 2)),
        rf.macro("LinkCapMaxDev", rf.pct(dev.max() if dev.notna().any() else math.nan)),
        rf.macro("LinkCapServerStudy", rf.num(found.get("server", math.nan), 1)),
        rf.macro("LinkCapServerSeed", rf.num(table1["server"]["upload_mbit"])),
        rf.macro("LinkBoundServerGet", rf.num(server_get)),
        rf.macro("LinkBoundServerGetSeed", rf.num(table1["server"]["ops"]["get_reply"])),
        # Seed 004's middleware SET-reply entry beside its own upload over the reply's size.
        rf.macro("LinkSeedMwSetReply", rf.num(table1["middleware"]["ops"]["set_reply"])),
        rf.macro(
            "LinkSeedMwSetReplyOwn",
            rf.num(
                linkbounds.bound_ops(
                    table1["middleware"]["upload_mbit"], table1["message_bytes"]["set_reply"]
                )
            ),
        ),
    ]


# Rows of the middleware statistics figure: compared panels (one and two middlewares of a
# workload) are adjacent and share their y scale.
STATS_ROWS = [(wl, setup) for wl in WORKLOADS for setup in SETUPS_M]
STATS_METRICS = [
    ("queue_len", 1.0, "queue length [requests]"),
    ("queue_us_mean", 1e-3, "time in queue [ms]"),
    ("server_us_mean", 1e-3, "waiting for memcached [ms]"),
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def mw_statistics_points(
    mw_study: pd.DataFrame, queue: pd.DataFrame, windows: pd.DataFrame
) -> pd.DataFrame:
    """Middleware rows in the study's time with the queue length per middleware."""
    lengths = queue_length.per_point(queue, windows).set_index("point")["queue_length"]
    m = mw_study[mw_study["side"] == "middleware"].copy()
    m["queue_len_mean"] = m["point"].map(lengths)
    m["queue_len_ci_low"] = m["queue_len_ci_high"] = math.nan
    m["workers"] = m["middleware.workers"].astype(int)
    return m


def middleware_statistics(m: pd.DataFrame, path: str) -> list[str]:
    """Seed 004's Figs 4-5: queue length, time in queue and waiting for memcached per worker
    count against the clients, per workload and number of middlewares (`m`: from
    `mw_statistics_points`)."""
    colours = plt_colours()
    workers = rf.levels_sorted(m["workers"])
    fig, axes = rf.figure(ncols=3, nrows=len(STATS_ROWS), width=6.4, height=7.2)
    for col, (metric, scale, label) in enumerate(STATS_METRICS):
        for wl in WORKLOADS:
            top = (m[m["level_workload"] == wl][f"{metric}_mean"] * scale).max()
            for row, (wl_row, setup) in enumerate(STATS_ROWS):
                if wl_row != wl:
                    continue
                ax = axes[row][col]
                d = m[(m["level_workload"] == wl) & (m["level_setup"] == setup)]
                for i, w in enumerate(workers):
                    rf.errorbar_line(
                        ax,
                        d[d["workers"] == w],
                        "clients_total",
                        metric,
                        scale,
                        markersize=3,
                        color=colours[i % len(colours)],
                        marker=MARKERS[i % len(MARKERS)],
                        label=f"{w} WT",
                    )
                if d.empty:
                    ax.text(0.5, 0.5, "no points", ha="center", transform=ax.transAxes)
                ax.set_ylim(0, top * 1.08 if np.isfinite(top) and top > 0 else 1)
                ax.set_title(f"{wl}, {setup.replace('_', ' ')}", fontsize=7)
                ax.set(ylabel=label)
                if row == len(STATS_ROWS) - 1:
                    ax.set_xlabel("clients (virtual)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=6)
    rf.save(fig, path)

    # Numbers at the most clients of each setup: the levels the seed describes in its text.
    nums = []
    low, high = (workers[0], workers[-1]) if workers else (math.nan, math.nan)
    nums += [
        rf.macro("MwStatsWorkersLow", str(low)),
        rf.macro("MwStatsWorkersHigh", str(high)),
    ]
    ratios, server_ratios = [], []
    for wl in WORKLOADS:
        d = m[m["level_workload"] == wl]
        most = d.loc[d.groupby(["level_setup", "workers"])["clients_total"].idxmax()]
        at = most.set_index(["level_setup", "workers"])
        has_one = "one_middleware" in at.index.get_level_values("level_setup")
        one = at.xs("one_middleware", level="level_setup") if has_one else at.iloc[0:0]
        key = camel("MwStats", wl)
        for tag, w in (("Low", low), ("High", high)):
            r = one.loc[w] if w in one.index else pd.Series(dtype=float)
            x_each = r.get("throughput_ops_mean", math.nan) / max(r.get("middlewares", 1), 1)
            nums += [
                rf.macro(
                    f"{key}Server{tag}", rf.num(r.get("server_us_mean_mean", math.nan) / 1e3, 1)
                ),
                # Little's law when every worker waits on the server: WT / X per middleware.
                rf.macro(
                    f"{key}Little{tag}", rf.num(w / x_each * 1e3 if x_each > 0 else math.nan, 1)
                ),
                rf.macro(f"{key}QueueLen{tag}", rf.num(r.get("queue_len_mean", math.nan), 1)),
                rf.macro(f"{key}Clients{tag}", rf.num(r.get("clients_total", math.nan))),
            ]
        for w in workers:
            if ("one_middleware", w) in at.index and ("two_middlewares", w) in at.index:
                a = at.loc[("one_middleware", w), "queue_len_mean"]
                b = at.loc[("two_middlewares", w), "queue_len_mean"]
                if a > 0 and np.isfinite(b):
                    ratios.append(b / a)
                a = at.loc[("one_middleware", w), "server_us_mean_mean"]
                b = at.loc[("two_middlewares", w), "server_us_mean_mean"]
                if a > 0 and np.isfinite(b):
                    server_ratios.append(b / a)
    nums.append(
        rf.macro("MwStatsQueueTwoOverOne", rf.num(np.median(ratios) if ratios else math.nan, 2))
    )
    nums.append(
        rf.macro(
            "MwStatsServerTwoOverOne",
            rf.num(np.median(server_ratios) if server_ratios else math.nan, 2),
        )
    )
    return nums


def plt_colours() -> list[str]:
    import matplotlib.pyplot as plt

    return plt.rcParams["axes.prop_cycle"].by_key()["color"]


LAW_SERIES = [
    (setup, wl, marker)
    for (setup, wl), marker in zip(
        [(s, w) for s in SETUPS_M for w in WORKLOADS], ["o", "^", "s", "D"], strict=True
    )
]


def modified_interactive_law(m: pd.DataFrame, path: str) -> list[str]:
    """Seed 004's Fig. 6: the middleware's throughput predicted from the requests inside it
    (queue length and requests held by workers) over its response time, in the study's time
    (`m`: from `mw_statistics_points`)."""
    lengths = m.set_index("point")["queue_len_mean"]
    law = modified_law.law_table(m, lengths)
    colours = plt_colours()
    fig, axes = rf.figure(ncols=1, width=3.6, height=3.0)
    ax = axes[0][0]
    for i, (setup, wl, marker) in enumerate(LAW_SERIES):
        d = law[(law["level_setup"] == setup) & (law["level_workload"] == wl)]
        if not d.empty:
            ax.scatter(
                d["throughput_ops_mean"],
                d["predicted_ops"],
                s=16,
                marker=marker,
                # Hollow markers: points of different series at the same place stay visible.
                facecolors="none",
                edgecolors=colours[i % len(colours)],
                label=f"{setup.replace('_', ' ')}, {wl}",
            )
    lim = float(np.nanmax([law["throughput_ops_mean"].max(), law["predicted_ops"].max(), 1]))
    ax.plot([0, lim * 1.05], [0, lim * 1.05], color="grey", lw=0.8, label="prediction = X")
    ax.set(
        xlabel="measured X (middleware) [ops/s], study time",
        ylabel="(X T$_w$ + Q) / R$_{mw}$ [ops/s]",
    )
    ax.legend(fontsize=6)
    ax.xaxis.set_major_locator(MaxNLocator(5))  # long tick labels must not overlap
    rf.save(fig, path)

    dev = law["relative_error"].abs()
    net = (m["net_us_mean_mean"] / m["response_us_mean_mean"]).dropna()
    few = law[law["clients_total"] == law["clients_total"].min()]["relative_error"].abs()
    many = law[law["clients_total"] == law["clients_total"].max()]["relative_error"].abs()
    return [
        rf.macro("ModLawPoints", str(len(law))),
        rf.macro("ModLawMedianDev", rf.pct(dev.median() if len(dev) else math.nan)),
        rf.macro("ModLawMaxDev", rf.pct(dev.max() if len(dev) else math.nan)),
        rf.macro(
            "ModLawMeanSigned", rf.pct(law["relative_error"].median() if len(law) else math.nan)
        ),
        rf.macro("ModLawFewClients", rf.num(law["clients_total"].min() if len(law) else math.nan)),
        rf.macro("ModLawManyClients", rf.num(law["clients_total"].max() if len(law) else math.nan)),
        rf.macro("ModLawDevFew", rf.pct(few.median() if len(few) else math.nan)),
        rf.macro("ModLawDevMany", rf.pct(many.median() if len(many) else math.nan)),
        rf.macro("ModLawNetShare", rf.pct(net.median() if len(net) else math.nan)),
    ]


def main(sm) -> None:  # noqa: ANN001 - the Snakemake object
    log_to(sm.log[0])
    ref = reference(sm.input.reference)
    direct = points(sm.input.direct, validation=sm.input.validation)
    mw = points(sm.input.middleware, validation=sm.input.validation)
    # The same points in the study's time, for the tables beside seeds 002 and 004.
    mw_study = in_study_time(mw)
    out = sm.output
    # The sources the tables' captions (in the section) name.
    numbers = [
        rf.macro("BaseDirectSourceSeedFour", rf.escape(ref["baselines_direct"]["source"])),
        rf.macro(
            "BaseDirectSourceSeedTwo", rf.escape(ref["seed002"]["baselines_direct"]["source"])
        ),
        rf.macro("BaseMwSource", rf.escape(ref["baselines_middleware"]["source"])),
    ]
    figures(in_study_time(direct), mw_study, ref, out)
    numbers += direct_table(direct, ref, out.tab_direct)
    numbers += middleware_table(mw, ref, out.tab_mw)
    numbers += seeds_tables(mw_study, ref, out)
    numbers += interactive_law(direct, mw, out.fig_law)
    numbers += bandwidth_bound(direct, mw)
    numbers += link_bounds_table(direct, mw, ref, out.tab_linkcap)
    stats = mw_statistics_points(
        mw_study, pd.read_parquet(sm.input.queue), pd.read_parquet(sm.input.windows)
    )
    numbers += middleware_statistics(stats, out.fig_mw_stats)
    numbers += modified_interactive_law(stats, out.fig_law_mod)
    rf.write(out.numbers, "".join(numbers))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
