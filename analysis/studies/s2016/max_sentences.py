"""Sentences that set the 2016 maximum-throughput family beside the original's findings:
our highest throughput at its pool size, whether fewer threads per pool are slower, what the
scale model's CPU budget gave the middleware, and where a GET's time goes."""

from __future__ import annotations

import math

import pandas as pd

from analysis.bottleneck import SATURATED  # a resource used this share of its budget is full
from analysis.report import figures as fg
from analysis.scaling import scale_of
from analysis.studies.s2016.formats import ms, value_range
from analysis.studies.s2016.tables import WORKERS, at_original
from analysis.studies.s2016.times import get_part_times


def like_sentence(best: pd.DataFrame, mx: dict) -> str:
    """Our highest throughput at the original's pool size against its maximum there."""
    at = at_original(best, mx)
    orig = (
        f"the original's maximum of {fg.num(mx['throughput_ops'])} ops/s at"
        f" {fg.num(mx['clients'])} clients and {mx['threads_per_pool']} threads per pool"
    )
    if at is None:
        return (
            f"We did not run the original's $T = {mx['threads_per_pool']}$ to compare with {orig}."
        )
    return (
        f"Like with like, at the original's $T = {mx['threads_per_pool']}$ ours reaches at most"
        f" {fg.num(at['throughput_ops_mean'])} ops/s (at {fg.num(at['clients_total'])}"
        f" clients), {fg.pct(at['throughput_ops_mean'] / mx['throughput_ops'])} of {orig}."
    )


def threads_sentence(best: pd.DataFrame, mx: dict, tolerance: float) -> str:
    """Whether the original's finding that fewer threads per pool are slower holds in ours:
    each smaller pool size's highest throughput against the one at the original's size,
    ours and the original's (its text's values), within `tolerance` counting as equal."""
    ref_workers, ref = mx["threads_per_pool"], at_original(best, mx)
    plateau = {int(k): float(v) for k, v in mx["plateau_ops"].items()}
    smaller = [int(workers) for workers in best.index if int(workers) < ref_workers]
    if ref is None or not smaller or ref_workers not in plateau:
        return (
            f"Our grid does not hold both $T = {mx['threads_per_pool']}$ and a smaller pool, "
            "so the original's finding on the number of threads is not tested here."
        )
    x_ref = float(ref["throughput_ops_mean"])
    parts, verdicts = [], []
    for workers in smaller:
        x = float(best.loc[workers, "throughput_ops_mean"])
        verdicts.append(x < (1 - tolerance) * x_ref)
        part = f"{fg.num(x)} ops/s with $T = {workers}$ ({fg.pct(x / x_ref, 0)} of that"
        if workers in plateau:
            part += (
                f"; the original's {fg.num(plateau[workers])} is"
                f" {fg.pct(plateau[workers] / plateau[ref_workers], 0)} of its"
                f" {fg.num(plateau[ref_workers])}"
            )
        parts.append(part + ")")
    below = [workers for workers in sorted(plateau) if workers < ref_workers]
    claim = (
        f"The original found fewer threads per pool slower (its {mx['section']}: about"
        f" {' and '.join(fg.num(plateau[workers]) for workers in below)} ops/s with"
        f" {' and '.join(str(workers) for workers in below)} threads against"
        f" {fg.num(plateau[ref_workers])} with {ref_workers}) and concluded that above"
        f" {ref_workers} threads the number of threads is no longer the bottleneck. Ours"
        f" reaches at most {fg.num(x_ref)} ops/s with $T = {ref_workers}$"
        f" (at {fg.num(ref['clients_total'])} clients) and"
    )
    if all(verdicts):
        verdict = " " + "; ".join(parts) + ": this agrees with the original."
    elif not any(verdicts):
        verdict = (
            " " + "; ".join(parts) + ". The original's finding does not reproduce: here"
            f" fewer threads per pool are not slower, and our highest throughput of all is"
            f" with $T = {int(best['throughput_ops_mean'].idxmax())}$."
        )
    else:
        verdict = " " + "; ".join(parts) + ": the original's finding holds only in part."
    return claim + verdict


def cpu_sentence(points: pd.DataFrame) -> str:
    """What the scale model gives the middleware (its CPU budget in cores of this machine
    and the time dilation) and how much of it the middleware used over the family."""
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
        return "The middleware ran without a CPU budget in this family, so no use of one is shown."
    return (
        f"The scale model gives the 2016 middleware a CPU budget of {fg.num(budget, 3)} cores"
        f" of this machine, its study vCPUs times $s = {fg.num(scale, 2)}$ times its speed"
        f" factor (Section~\\ref{{sec:scale-model}}), and runs the whole system $1/s ="
        f" {fg.num(1 / scale)}$ times slower: in the study's time that budget stands for the"
        f" study's middleware machine, but it is {fg.pct(budget, 0)} of one core, shared by"
        f" {value_range(threads[0], threads[-1], str)} threads ($S(T+1)$ pool threads and the"
        f" net-thread). The middleware used {value_range(used.min(), used.max(), fg.pct, 0)} of"
        f" that budget at the points of this family, and its quota ran out in"
        f" {value_range(throttled.min(), throttled.max(), fg.pct, 0)} of the scheduler's periods,"
        f" while its memcached servers used {value_range(servers.min(), servers.max(), fg.pct, 0)}"
        " of theirs"
        + (
            ": the resource at its limit is the middleware's CPU, not memcached, and more"
            " threads per pool add no capacity, only more threads sharing the same budget."
            if used.max() >= SATURATED > servers.max()
            else "."
        )
    )


def wait_sentence(
    pct: pd.DataFrame, pool_requests: pd.DataFrame, ok: set[str], client: pd.DataFrame, mx: dict,
    b: dict,
) -> str:  # fmt: skip
    """Where a GET's time goes at our point nearest the original's configuration (its pool
    size, the nearest client count), medians against the original's Table 1: in the queue or
    waiting for memcached."""
    workers = mx["threads_per_pool"]
    same = client[client["workers"] == workers]
    if same.empty:
        return f"We ran no point with $T = {workers}$ to set beside the original's breakdown."
    row = same.loc[
        (same["clients_total"] - mx["clients"]).abs().sort_values(kind="stable").index[0]
    ]
    part = get_part_times(pool_requests, ok, row["point"])
    queue, server = (
        float(part["queue"].get("p50", math.nan)),
        float(part["server"].get("p50", math.nan)),
    )
    response = float(pct.set_index("point")["p50_mean"].get(row["point"], math.nan))
    oq, os_, orr = b["queue"][0], b["server"][0], b["response"][0]
    where = f"$T = {workers}$ and {fg.num(row['clients_total'])} clients"
    if int(row["clients_total"]) != int(mx["clients"]):
        where += f", our client count nearest to its {fg.num(mx['clients'])}"
    text = (
        f"At the original's pool size ({where}) a \\texttt{{get}} waits {ms(queue)}\\,ms in its"
        f" read queue and {ms(server)}\\,ms for memcached at the median, of a median middleware"
        f" response time of {ms(response)}\\,ms; the original's were {fg.num(oq, 3)},"
        f" {fg.num(os_, 3)} and {fg.num(orr, 3)}\\,ms ({b['table']})."
    )
    cpu = float(row.get("cpu_util_middleware_mean", math.nan))
    if oq < os_ and queue > server and cpu >= SATURATED:
        text += (
            " The breakdown is inverted: the study's middleware waited on its servers, ours"
            f" waits on its CPU ({fg.pct(cpu, 0)} of its budget used at this point), its"
            " requests queueing for read threads that themselves wait for a share of it."
        )
    elif oq < os_ and queue > server:
        text += (
            " The breakdown is inverted: the study's middleware waited on its servers, ours"
            " waits in its own queues."
        )
    elif queue < server:
        text += " As in the original, the wait for memcached outweighs the queue."
    return text
