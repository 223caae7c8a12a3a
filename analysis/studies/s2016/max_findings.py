"""The 2016 maximum-throughput family beside the original's findings, as numbers and cases
for the section's prose: our highest throughput at its pool size, whether fewer threads per
pool are slower, what the scale model's CPU budget gave the middleware, and where a GET's
time goes."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis.bottleneck import SATURATED  # a resource used this share of its budget is full
from analysis.report import figures as fg
from analysis.scale_model import scale_of
from analysis.studies.s2016.formats import bounds, ms
from analysis.studies.s2016.tables import WORKERS, at_original
from analysis.studies.s2016.times import get_part_times


def like_numbers(best: pd.DataFrame, mx: dict) -> dict[str, str]:
    """Our highest throughput at the original's pool size (`SixteenMaxLikeCase`: `compared`,
    or `untested` where we did not run that size)."""
    at = at_original(best, mx)
    if at is None:
        return {
            "SixteenMaxLikeCase": "untested",
            "SixteenMaxLikeThroughput": fg.MISSING,
            "SixteenMaxLikeClients": fg.MISSING,
        }
    return {
        "SixteenMaxLikeCase": "compared",
        "SixteenMaxLikeThroughput": fg.num(at["throughput_ops_mean"]),
        "SixteenMaxLikeClients": fg.num(at["clients_total"]),
    }


def threads_numbers(best: pd.DataFrame, mx: dict, tolerance: float) -> dict[str, str]:
    """Whether the original's finding that fewer threads per pool are slower holds in ours
    (`SixteenMaxThreadsCase`: `holds`, `fails`, `partial` or `untested`): each smaller pool
    size's highest throughput against the one at the original's size, ours and the
    original's (its text's values), within `tolerance` counting as equal. Each smaller pool
    size is an item `\\SixteenThreadsItem{ours}{T}{share}{original}{its share}`, the last two
    empty where the original gives no value for that size."""
    ref_workers, ref = mx["threads_per_pool"], at_original(best, mx)
    plateau = {int(k): float(v) for k, v in mx["plateau_ops"].items()}
    smaller = [int(workers) for workers in best.index if int(workers) < ref_workers]
    below = [workers for workers in sorted(plateau) if workers < ref_workers]
    out = {
        "SixteenOrigMaxSection": str(mx["section"]),
        "SixteenMaxOrigPlateau": fg.num(plateau.get(ref_workers, math.nan)),
        "SixteenMaxOrigBelowThroughputs": " and ".join(fg.num(plateau[w]) for w in below),
        "SixteenMaxOrigBelowThreads": " and ".join(str(w) for w in below),
    }
    if ref is None or not smaller or ref_workers not in plateau:
        return out | {"SixteenMaxThreadsCase": "untested", "SixteenMaxThreadsItems": ""}
    x_ref = float(ref["throughput_ops_mean"])
    items, verdicts = [], []
    for workers in smaller:
        x = float(best.loc[workers, "throughput_ops_mean"])
        verdicts.append(x < (1 - tolerance) * x_ref)
        theirs, share = "", ""
        if workers in plateau:
            theirs = fg.num(plateau[workers])
            share = fg.pct(plateau[workers] / plateau[ref_workers], 0)
        items.append(
            f"\\SixteenThreadsItem{{{fg.num(x)}}}{{{workers}}}{{{fg.pct(x / x_ref, 0)}}}"
            f"{{{theirs}}}{{{share}}}"
        )
    case = "holds" if all(verdicts) else "fails" if not any(verdicts) else "partial"
    return out | {"SixteenMaxThreadsCase": case, "SixteenMaxThreadsItems": "; ".join(items)}


def cpu_numbers(points: pd.DataFrame) -> dict[str, str]:
    """What the scale model gives the middleware (its CPU budget in cores of this machine
    and the time dilation) and how much of it the middleware used over the family, each
    range as its `Low` and `High` (`SixteenMaxCpuCase`: `cpu` where the middleware's CPU is
    the resource at its limit, not memcached, `other`, or `unbudgeted`)."""
    per_point = points.drop_duplicates("point")
    used = per_point["cpu_util_middleware_mean"].astype(float)
    servers = per_point["cpu_util_server_mean"].astype(float)
    throttled = per_point["throttled_share_middleware_mean"].astype(float)
    budget = float(pd.to_numeric(per_point["budgets_cores.middleware"], errors="coerce").iloc[0])
    scale = float(scale_of(per_point, "table of points").iloc[0])
    threads = sorted(
        int(r["servers"]) * (int(r[WORKERS]) + 1) + 1 for _, r in per_point.iterrows()
    )  # `workers` read threads and a write thread per server, and the net-thread
    if used.isna().all() or not math.isfinite(budget):
        case = "unbudgeted"
    else:
        case = "cpu" if used.max() >= SATURATED > servers.max() else "other"
    return {
        "SixteenMaxCpuCase": case,
        "SixteenMaxCpuBudget": fg.num(budget, 3),
        "SixteenMaxCpuScale": fg.num(scale, 2),
        "SixteenMaxCpuSlowdown": fg.num(1 / scale),
        "SixteenMaxCpuBudgetCore": fg.pct(budget, 0),
        "SixteenMaxCpuThreadsLow": str(threads[0]),
        "SixteenMaxCpuThreadsHigh": str(threads[-1]),
        **bounds("SixteenMaxCpuUsed", used, fg.pct, 0),
        **bounds("SixteenMaxCpuThrottled", throttled, fg.pct, 0),
        **bounds("SixteenMaxCpuServers", servers, fg.pct, 0),
    }


def split_numbers(part: Mapping[str, pd.Series]) -> dict[str, str]:
    """Which part of a GET's middleware time is the larger at the chosen configuration, at
    the median (`get_part_times`): `SixteenMaxSplitCase` `queue` (its read queue), `server`
    (the wait for memcached) or `even` (alike as printed, to the microsecond, or either not
    measured). The chosen point need not be the one nearest the original's configuration
    that `wait_numbers` compares, so the two may differ."""
    queue, server = (float(part[name].get("p50", math.nan)) for name in ("queue", "server"))
    if not abs(queue - server) >= 1:  # µs; a NaN falls here too
        return {"SixteenMaxSplitCase": "even"}
    return {"SixteenMaxSplitCase": "queue" if queue > server else "server"}


def wait_numbers(
    pct: pd.DataFrame, pool_requests: pd.DataFrame, ok: set[str], client: pd.DataFrame, mx: dict,
    b: dict,
) -> dict[str, str]:  # fmt: skip
    """Where a GET's time goes at our point nearest the original's configuration (its pool
    size, the nearest client count), medians against the original's Table 1: in the queue or
    waiting for memcached. `SixteenMaxWaitCase`: `agrees` (the wait for memcached outweighs
    the queue, as in the original), `inverted` (ours waits in its queues, the original on its
    servers), `cpu` (inverted, in a middleware at its CPU budget), `even` (neither), or
    `unrun` (no point with the original's pool size); `SixteenMaxWaitClientsCase`: `same`
    client count as the original's, or the `nearest` one; `SixteenMaxWaitQueueRatio`: our
    median queue time over the original's, `SixteenMaxWaitQueueCase` `longer` (twice or
    more), `shorter` (half or less), `similar` or `unknown`."""
    out = {
        "SixteenOrigWaitQueue": fg.num(b["queue"][0], 3),
        "SixteenOrigWaitServer": fg.num(b["server"][0], 3),
        "SixteenOrigWaitResponse": fg.num(b["response"][0], 3),
        "SixteenOrigBreakdownTable": str(b["table"]),
    }
    same = client[client["workers"] == mx["threads_per_pool"]]
    if same.empty:
        missing = ("Clients", "Queue", "Server", "Response", "Cpu")
        return out | {
            "SixteenMaxWaitCase": "unrun",
            "SixteenMaxWaitClientsCase": "same",
            **{f"SixteenMaxWait{name}": fg.MISSING for name in missing},
            "SixteenMaxWaitQueueRatio": fg.MISSING,
            "SixteenMaxWaitQueueCase": "unknown",
        }
    row = same.loc[
        (same["clients_total"] - mx["clients"]).abs().sort_values(kind="stable").index[0]
    ]
    part = get_part_times(pool_requests, ok, row["point"])
    queue, server = (
        float(part["queue"].get("p50", math.nan)),
        float(part["server"].get("p50", math.nan)),
    )
    response = float(pct.set_index("point")["p50_mean"].get(row["point"], math.nan))
    cpu = float(row.get("cpu_util_middleware_mean", math.nan))
    if b["queue"][0] < b["server"][0] and queue > server:
        case = "cpu" if cpu >= SATURATED else "inverted"
    else:
        case = "agrees" if queue < server else "even"
    nearest = int(row["clients_total"]) != int(mx["clients"])
    # Ours against the original's queue (its times in ms, ours in µs).
    ratio = queue / 1e3 / b["queue"][0] if b["queue"][0] > 0 else math.nan
    return out | {
        "SixteenMaxWaitQueueRatio": fg.num(ratio, 0 if ratio >= 10 else 1),
        "SixteenMaxWaitQueueCase": (
            "longer" if ratio >= 2 else "shorter" if ratio <= 0.5 else "similar"
        )
        if math.isfinite(ratio)
        else "unknown",
        "SixteenMaxWaitCase": case,
        "SixteenMaxWaitClientsCase": "nearest" if nearest else "same",
        "SixteenMaxWaitClients": fg.num(row["clients_total"]),
        "SixteenMaxWaitQueue": ms(queue),
        "SixteenMaxWaitServer": ms(server),
        "SixteenMaxWaitResponse": ms(response),
        "SixteenMaxWaitCpu": fg.pct(cpu, 0),
    }
