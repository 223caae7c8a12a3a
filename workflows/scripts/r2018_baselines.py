"""Snakemake script: the baselines section (without and with middlewares): figures, the
maximum-throughput tables beside the study's, the interactive-law check and numbers."""

import math

import numpy as np
import pandas as pd
from r2018_common import beside_rows, camel, law_rows_tabular, log_to, points, reference

from analysis import seed2018, validate
from analysis.report import figures as rf
from analysis.scaling import in_study_time

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
log_to(sm.log[0])
ref = reference(sm.input.reference)
direct = points(sm.input.direct)
mw = points(sm.input.middleware)
# The same points in the study's time, for the tables beside seeds 002 and 004.
mw_study = in_study_time(mw)
out = sm.output
SETUPS_D = ["one_server", "two_servers"]
SETUPS_M = ["one_middleware", "two_middlewares"]
WORKLOADS = ["read-only", "write-only"]
numbers = []


def panel_grid(data: pd.DataFrame, series: str | None, title: str, path: str) -> None:
    fig, axes = rf.figure(ncols=2, nrows=2, height=4.6)
    for row, wl in enumerate(WORKLOADS):
        d = data[data["level_workload"] == wl]
        for col, (metric, scale, unit) in enumerate(
            [("throughput_ops", 1, "throughput [ops/s]"), ("response_us_mean", 1e-3, "resp. [ms]")]
        ):
            ax = axes[row][col]
            if d.empty:
                ax.text(0.5, 0.5, "no points at this level", ha="center", transform=ax.transAxes)
            else:
                rf.error_lines(ax, d, "clients_total", metric, series, scale)
            ax.set(xlabel="clients (virtual)", ylabel=f"{wl}: {unit}")
            ax.set_ylim(bottom=0)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=6)
    fig.suptitle(title, fontsize=8)
    rf.save(fig, path)


# Figures: direct baseline per setup; middleware baseline per setup with workers as series.
direct["setup"] = direct["level_setup"].str.replace("_", " ")
panel_grid(direct, "setup", "Baseline without middleware (client side)", out.fig_direct)
mw["workers"] = mw["middleware.workers"].astype(int).astype(str) + " WT"
for setup, path in zip(SETUPS_M, [out.fig_mw1, out.fig_mw2], strict=True):
    d = mw[mw["level_setup"] == setup]
    panel_grid(d, "workers", f"Baseline with middleware: {setup.replace('_', ' ')}", path)


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


# Table: maximum throughput without middleware (seed 004 Table 3 layout), ours beside theirs.
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
            rf.macro(f"{key}XRaw", rf.MISSING if b is None else rf.num(b["throughput_ops_mean"]))
        )
        numbers.append(rf.macro(f"{key}XStudy", rf.num(theirs)))
        numbers.append(
            rf.macro(
                f"{key}XSeedTwo",
                rf.num(low) if low == high else f"{rf.num(low)}/{rf.num(high)}",
            )
        )
rf.write(
    out.tab_direct,
    rf.table(
        [
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
        ],
        rows,
        "llrrrrrrrr",
        "Maximum throughput without middleware (client side; CI half-width over repetitions), "
        "as measured and rescaled to the study's time by the runs' scale factor $s$, "
        f"beside the two 2018 reports ({ref['baselines_direct']['source']}; "
        f"{ref['seed002']['baselines_direct']['source']}, where two values are given for "
        "8 and 16 clients).",
        "tab:base-direct-max",
    ),
)

# Table: maximum throughput with middlewares (seed 004 Table 5 layout).
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
    out.tab_mw,
    rf.table(
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
        "Maximum throughput with middlewares: client (cl.) and middleware (mw) side at the "
        "point of highest client throughput (N clients, WT workers per middleware), "
        "rescaled to the study's time by the runs' scale factor $s$ (throughputs $/s$, times "
        "$\\cdot s$; raw: as measured), beside "
        f"the original study ({ref['baselines_middleware']['source']}).",
        "tab:base-mw-max",
    ),
)

# Beside the two 2018 reports: the maximum with middlewares, and the interactive law in
# seed 002's form (R_client - N/X_mw, ms).
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
            r = by_key.loc[(setup, wl, quantity)] if (setup, wl, quantity) in by_key.index else {}
            key = camel("Seeds", setup, wl, quantity)
            numbers += [
                rf.macro(f"{key}{who}", rf.num(r.get(col, math.nan), digits))
                for who, col in (("Ours", "ours"), ("SeedTwo", "seed002"), ("SeedFour", "seed004"))
            ]
        r = law_key.loc[(setup, wl)] if (setup, wl) in law_key.index else {}
        key = camel("SeedsLaw", setup, wl)
        numbers += [
            rf.macro(f"{key}OursMax", rf.num(r.get("ours_max_abs_ms", math.nan), 1)),
            rf.macro(f"{key}SeedTwoMax", rf.num(r.get("seed002_max_abs_ms", math.nan), 1)),
        ]

# Interactive law, Z = 0: client X against N/(R+Z) for every point of both families.
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
lim = float(np.nanmax([law["throughput_ops_mean"].max(), law["predicted_throughput_ops"].max(), 1]))
ax.plot([0, lim * 1.05], [0, lim * 1.05], color="grey", lw=0.8, label="X = N/(R+Z)")
ax.set(xlabel="measured X (client) [ops/s]", ylabel="N/(R+Z), Z = 0 [ops/s]")
ax.legend(fontsize=6)
rf.save(fig, out.fig_law)
numbers.append(rf.macro("BaseLawPoints", str(len(law))))
numbers.append(rf.macro("BaseLawMaxDev", rf.pct(dev.max() if len(dev) else math.nan)))
numbers.append(rf.macro("BaseLawMedianDev", rf.pct(dev.median() if len(dev) else math.nan)))
numbers.append(
    rf.macro(
        "BaseLawThinkUs",
        rf.num(law["fitted_think_us"].median() if len(law) else math.nan, 0),
    )
)

# Bandwidth bound of the one-server read-only baseline with our link capacities.
one = direct[direct["level_setup"] == "one_server"]
sizes = validate.message_sizes(4096, len("memtier-") + len(str(10000)))
src = one.iloc[0] if not one.empty else direct.iloc[0]


def cap(role: str) -> float:
    v = src.get(f"link_{role}_mbit", math.nan)
    return (
        float(v) if v is not None and math.isfinite(float(v)) else float(src[f"caps_mbit.{role}"])
    )


bound = validate.bandwidth_bound(
    {r: cap(r) for r in ("client", "server")},
    {"client": int(src["client_machines"]), "server": 1},
    sizes,
    set_fraction=0.0,
    servers=1,
    via_middleware=False,
)
numbers += [
    rf.macro("BaseBoundGetOneServer", rf.num(bound.bound)),
    rf.macro("BaseBoundGetOneServerStudy", rf.num(ref["bandwidth"]["server_get_reply_ops"])),
    rf.macro("BaseBoundServerMbit", rf.num(cap("server"))),
    rf.macro("BaseBoundGetReplyBytes", str(sizes["get_reply"])),
    rf.macro("BaseHostKind", str(src["host_kind"])),
    rf.macro(
        "BaseBoundNote",
        "applies (capped links)"
        if str(src["host_kind"]) != "local"
        else "does not apply (local processes, no capped links)",
    ),
]
rf.write(out.numbers, "".join(numbers))
