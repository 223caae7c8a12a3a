"""Snakemake script: batching workers beside the study's one request per worker turn, at the
same points: throughput, and the middleware's time in queue, in the worker and waiting for
memcached, as a figure, a table and number macros, in the study's time (throughput / s,
times * s) with the raw throughput beside."""

import math

import numpy as np
import pandas as pd
from r2018_common import camel, log_to, points

from analysis.report import figures as rf
from analysis.scaling import in_study_time


def at_most_clients(d: pd.DataFrame) -> pd.DataFrame:
    """The rows of the largest client count, where the queue is longest."""
    return d[d["clients"] == d["clients"].max()] if not d.empty else d


def main(sm) -> None:  # noqa: ANN001
    log_to(sm.log[0])
    out = sm.output
    raw = points(sm.input.points, validation=sm.input.validation)
    raw_x = raw.set_index(["point", "side"])["throughput_ops_mean"]
    pts = in_study_time(raw)
    numbers = []

    pts["batch"] = pts["middleware.max_batch"].astype(int)
    pts["clients"] = pts["clients_total"].astype(int)
    client = pts[pts["side"] == "client"]
    mw = pts[pts["side"] == "middleware"].set_index("point")
    batches = sorted(client["batch"].unique()) if not client.empty else []
    top = max(batches) if batches else 1
    workloads = rf.levels_sorted(client["level_workload"]) if not client.empty else []

    fig, grid = rf.figure(ncols=2, height=2.4)
    axes = list(np.ravel(grid))
    for ax, wl in zip(axes, ["read-only", "write-only"], strict=True):
        d = client[client["level_workload"] == wl]
        if d.empty:
            ax.text(0.5, 0.5, "no points", ha="center", transform=ax.transAxes)
        else:
            d = d.assign(series="batch " + d["batch"].astype(str))
            rf.error_lines(ax, d, "clients_total", "throughput_ops", "series", 1)
        ax.set(xlabel="clients (virtual)", ylabel="throughput [ops/s], study time", title=wl)
        ax.set_ylim(bottom=0)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=6)
    rf.save(fig, out.fig)

    rows = []
    summary: dict[tuple[str, int], dict[str, float]] = {}
    for wl in workloads:
        d = at_most_clients(client[client["level_workload"] == wl])
        for _, p in d.sort_values("batch").iterrows():
            m = mw.loc[p["point"]] if p["point"] in mw.index else pd.Series(dtype=float)
            v = {
                "x": p["throughput_ops_mean"],
                "x_raw": raw_x.get((p["point"], "client"), math.nan),
                "queue": m.get("queue_us_mean_mean", math.nan),
                "worker": m.get("worker_us_mean_mean", math.nan),
                "server": m.get("server_us_mean_mean", math.nan),
                "response": m.get("response_us_mean_mean", math.nan),
            }
            summary[(wl, int(p["batch"]))] = v
            rows.append(
                [
                    wl,
                    str(int(p["batch"])),
                    str(int(p["clients"])),
                    rf.num(v["x"]),
                    rf.num(v["x_raw"]),
                    rf.num(v["queue"], 1),
                    rf.num(v["worker"], 1),
                    rf.num(v["server"], 1),
                    rf.num(v["response"], 1),
                ]
            )
    rf.write(
        out.table,
        rf.tabular(
            [
                "load",
                "batch",
                "clients",
                "X [ops/s]",
                "X raw",
                "queue [\\textmu s]",
                "worker [\\textmu s]",
                "memcached [\\textmu s]",
                "response [\\textmu s]",
            ],
            rows,
            "lrrrrrrrr",
        ),
    )

    numbers.append(rf.macro("BatchTop", str(top)))
    for wl in ["read-only", "write-only"]:
        one = summary.get((wl, 1), {})
        big = summary.get((wl, top), {})
        key = camel("Batch", wl)
        fields = [("X", "x"), ("XRaw", "x_raw"), ("Queue", "queue"), ("Worker", "worker")]
        for name, field in [*fields, ("Server", "server")]:
            numbers.append(rf.macro(f"{key}One{name}", rf.num(one.get(field, math.nan))))
            numbers.append(rf.macro(f"{key}Top{name}", rf.num(big.get(field, math.nan))))
        ratio = big.get("x", math.nan) / one.get("x", math.nan) if one.get("x") else math.nan
        numbers.append(rf.macro(f"{key}Speedup", rf.num(ratio, 2)))
    rf.write(out.numbers, "".join(numbers))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
