"""GETs and multi-GETs, sharded against non-sharded: where the middleware's time goes per
multi-GET size, in which metric and for which sizes sharding pays, and how long each side's
tail is. Inputs are the points tables of the multiget family (one row per point, side and
request type) and per-point percentiles from analysis.histograms."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

SHARDED, NON_SHARDED = "sharded", "non-sharded"
SHARDING = (SHARDED, NON_SHARDED)
# The middleware's time split (README of the middleware: net + queue + server + worker =
# response), in the order the figure stacks them, with their names in words.
COMPONENTS = {
    "queue_us_mean": "in the queue",
    "server_us_mean": "at the servers",
    "worker_us_mean": "in the worker",
    "net_us_mean": "in the net-thread",
}
# Sharding "pays" in a metric when it improves it by more than this share: smaller
# differences are within the run-to-run noise of single measurements.
MARGIN = 0.05
# Metrics compared: column, words, and whether lower is better.
METRICS = (
    ("mean", "the mean response time", True),
    ("p50", "the median", True),
    ("p90", "the 90th percentile", True),
    ("p99", "the 99th percentile", True),
    ("keys_per_s", "the keys per second", False),
)


class MultigetError(ValueError):
    """Input tables that do not describe the multiget family."""


def get_rows(points: pd.DataFrame, side: str) -> pd.DataFrame:
    """One row per point of `side`: its GET-type row (plain GETs at size 1, multi-GETs
    above), with `size` the keys per request and `sharding` the level."""
    need = {"point", "side", "type", "level_sharding", "level_size", "throughput_ops_mean"}
    missing = need - set(points.columns)
    if missing:
        raise MultigetError(f"points table lacks columns {sorted(missing)}")
    rows = points[(points["side"] == side) & points["type"].isin(["get", "multiget"])].copy()
    rows["size"] = rows["level_size"].astype(int)
    rows["sharding"] = rows["level_sharding"].astype(str)
    # A size-1 point may also report a few multi-GET rows; the busier type is the point's.
    return (
        rows.sort_values("throughput_ops_mean", ascending=False)
        .drop_duplicates(["point"])
        .sort_values(["sharding", "size"])
        .reset_index(drop=True)
    )


def time_split(points: pd.DataFrame) -> pd.DataFrame:
    """Per sharding level and size: the middleware's mean time per component (µs, in the
    points' time base), its total and each component's share of the total."""
    rows = get_rows(points, "middleware")
    cols = {c: f"{c}_mean" for c in COMPONENTS}
    missing = {v for v in cols.values() if v not in rows.columns}
    if missing:
        raise MultigetError(f"points table lacks middleware times {sorted(missing)}")
    out = rows[["sharding", "size"]].copy()
    for c, col in cols.items():
        out[c] = pd.to_numeric(rows[col], errors="coerce").astype(float)
        # The component's confidence interval over repetitions, where the points carry it.
        for bound in ("low", "high"):
            ci = f"{col}_ci_{bound}"
            out[f"{c}_ci_{bound}"] = (
                pd.to_numeric(rows[ci], errors="coerce").astype(float) if ci in rows else math.nan
            )
    out["total_us"] = out[list(COMPONENTS)].sum(axis=1, min_count=1)
    for c in COMPONENTS:
        out[f"{c}_share"] = out[c] / out["total_us"]
    return out


def comparison(
    points: pd.DataFrame, percentiles: pd.DataFrame, side: str = "client"
) -> pd.DataFrame:
    """Per size present at both sharding levels: each metric of `METRICS` sharded and
    non-sharded (`<metric>_sharded`, `<metric>_non-sharded`) and the relative gain of
    sharding (`<metric>_gain`, positive = sharding better). Times come from `points`
    (`response_us_mean_mean`) and `percentiles` (columns sharding, size, p50, ...); keys per
    second from the middlewares' GET rates times the size."""
    client = get_rows(points, side).set_index(["sharding", "size"])
    mw = get_rows(points, "middleware").set_index(["sharding", "size"])
    pct = percentiles.set_index(["sharding", "size"]) if not percentiles.empty else None
    levels = client.index.get_level_values(0)
    sizes = sorted(
        set(client.index.get_level_values(1)[levels == SHARDED])
        & set(client.index.get_level_values(1)[levels == NON_SHARDED])
    )
    rows = []
    for size in sizes:
        row: dict[str, float] = {"size": size}
        for level in SHARDING:
            key = (level, size)
            values = {
                "mean": float(client.loc[key, "response_us_mean_mean"]),
                "keys_per_s": float(mw.loc[key, "throughput_ops_mean"]) * size
                if key in mw.index
                else math.nan,
            }
            for q in ("p50", "p90", "p99"):
                ok = pct is not None and key in pct.index and q in pct.columns
                values[q] = float(pct.loc[key, q]) if ok else math.nan
            for m, v in values.items():
                row[f"{m}_{level}"] = v
        for m, _, lower_better in METRICS:
            s, n = row[f"{m}_{SHARDED}"], row[f"{m}_{NON_SHARDED}"]
            gain = (n - s) / n if lower_better else (s - n) / n
            row[f"{m}_gain"] = gain if n and math.isfinite(gain) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Verdict:
    """For one metric: the sizes where sharding pays, where it costs, and where the two are
    within `MARGIN`."""

    metric: str
    words: str
    pays: tuple[int, ...]
    costs: tuple[int, ...]
    even: tuple[int, ...]


def verdicts(table: pd.DataFrame, margin: float = MARGIN) -> list[Verdict]:
    """One verdict per metric of `METRICS` from a `comparison` table (sizes whose gain is
    unknown are left out)."""
    out = []
    for m, words, _ in METRICS:
        col = f"{m}_gain"
        pays, costs, even = [], [], []
        for size, gain in zip(table.get("size", []), table.get(col, []), strict=True):
            if not math.isfinite(gain):
                continue
            (pays if gain > margin else costs if gain < -margin else even).append(int(size))
        out.append(Verdict(m, words, tuple(pays), tuple(costs), tuple(even)))
    return out


@dataclass(frozen=True)
class VerdictGroup:
    """Metrics (in words) that share one split of sizes: where sharding pays in them, where
    it costs and where the two are within `MARGIN`."""

    words: tuple[str, ...]
    pays: tuple[int, ...]
    costs: tuple[int, ...]
    even: tuple[int, ...]

    @property
    def shape(self) -> str:
        """`improves` (pays at every size), `worsens` (costs at every size), `even` (within
        the margin at every size) or `mixed`."""
        if self.pays and not self.costs and not self.even:
            return "improves"
        if self.costs and not self.pays and not self.even:
            return "worsens"
        if not self.pays and not self.costs:
            return "even"
        return "mixed"


def verdict_groups(verdicts: Sequence[Verdict]) -> list[VerdictGroup]:
    """The verdicts with metrics of the same split of sizes together, in the order of their
    first metric, so that the text says each split once."""
    groups: dict[tuple[tuple[int, ...], ...], list[str]] = {}
    for v in verdicts:
        groups.setdefault((v.pays, v.costs, v.even), []).append(v.words)
    return [VerdictGroup(tuple(names), *split) for split, names in groups.items()]


def tail_ratio(percentiles: pd.DataFrame, high: str = "p99", low: str = "p50") -> pd.Series:
    """Per row: how far the tail reaches beyond the median (`high` / `low`)."""
    lo = percentiles[low].astype(float)
    return percentiles[high].astype(float) / lo.where(lo > 0)


# The time split agrees with the study's reading (queue almost empty, the time spent at the
# servers) when the servers take at least this share of every point's middleware time...
SERVER_DOMINANT = 0.5
# ... and the queue at most this share.
QUEUE_NEGLIGIBLE = 0.1


def split_case(split: pd.DataFrame) -> str:
    """How the middleware's time divides, against seed 004's reading of its Figs. 9 and 11
    (the queue almost empty, the time spent communicating with memcached): `none` without a
    split, `holds` (the servers take most of it and the queue is negligible at every size),
    `queue` (the servers take most of it, the queue is not negligible everywhere) or `fails`
    (somewhere the servers do not take most of it: `least_server_share` is the point)."""
    if split.empty:
        return "none"
    if not split["server_us_mean_share"].min() >= SERVER_DOMINANT:  # unknown shares too
        return "fails"
    return "holds" if split["queue_us_mean_share"].max() <= QUEUE_NEGLIGIBLE else "queue"


def least_server_share(split: pd.DataFrame) -> pd.Series:
    """The row of a (non-empty) time split where the servers take the smallest share."""
    return split.loc[split["server_us_mean_share"].idxmin()]


def tail_case(sharded: float, non_sharded: float) -> str:
    """Which side's tail reaches further beyond its median (ratios p99 / p50): `sharded`,
    `nonsharded`, `even` (within `MARGIN` of each other) or `none` (a ratio is unknown)."""
    if not (math.isfinite(sharded) and math.isfinite(non_sharded)):
        return "none"
    if abs(sharded - non_sharded) <= MARGIN * max(sharded, non_sharded):
        return "even"
    return "sharded" if sharded > non_sharded else "nonsharded"


# Linux's minimum TCP retransmission timeout (TCP_RTO_MIN). Emulated hosts under the scale
# model stretch it to RTO_MIN_MS / s on their routes (testbed.emulation.rto_min_ms).
RTO_MIN_MS = 200.0


def queue_values(rate_mbit: float, latency_ms: float, value_bytes: int) -> float:
    """How many values fit in a token-bucket queue that drops what would wait longer than
    `latency_ms` at `rate_mbit`."""
    if rate_mbit <= 0 or latency_ms <= 0 or value_bytes <= 0:
        raise MultigetError("rate, latency and value size must be positive")
    return rate_mbit * 1e6 / 8 * latency_ms / 1e3 / value_bytes


# The loss counters compared per 1000 requests (analysis.parse.network's columns).
LOSS_COUNTERS = {
    "rto_timeouts": "rto",
    "spurious_rtos": "spurious",
    "retrans_segs": "retrans",
    "qdisc_drops": "drops",
}


def loss_rates(manifests: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per sharding and multi-GET size: the measured runs' requests (client side, every type)
    and their retransmission timeouts, retransmitted segments and link-cap drops per 1000
    requests, summed over repetitions. Runs without counters are left out; sizes without any
    counted run are absent."""
    columns = ["sharding", "size", "requests", *(f"{v}_per_1k" for v in LOSS_COUNTERS.values())]
    need = {"run", "status", "middleware.sharded", "workload.multiget", *LOSS_COUNTERS}
    missing = need - set(manifests.columns)
    if missing or manifests.empty:
        return pd.DataFrame(columns=columns)
    m = manifests[(manifests["status"] == "ok") & manifests["rto_timeouts"].notna()]
    clients = runs[runs["side"] == "client"].groupby("run")["count"].sum().rename("requests")
    m = m.join(clients, on="run").dropna(subset=["requests"])
    m = m.assign(
        sharding=m["middleware.sharded"].map({True: SHARDED, False: NON_SHARDED}),
        size=m["workload.multiget"].astype(int),
    )
    g = m.groupby(["sharding", "size"])[["requests", *LOSS_COUNTERS]].sum().reset_index()
    for counter, short in LOSS_COUNTERS.items():
        g[f"{short}_per_1k"] = 1000 * g[counter] / g["requests"]
    return g[columns]


# A tail percentile the timeouts can reach: the 99th, so one request in a hundred.
TAIL_SHARE = 0.01


def rates_at(size: int, rates: pd.DataFrame) -> pd.DataFrame | None:
    """The loss rates (`loss_rates`) at `size` keys by sharding, or None unless both sharding
    levels were counted there."""
    at = rates[rates["size"] == size].set_index("sharding") if not rates.empty else rates
    return None if any(k not in at.index for k in SHARDING) else at


def rto_case(at: pd.DataFrame | None) -> str:
    """What the counted retransmission timeouts (`rates_at`) say about the tails: `uncounted`
    (no counters), `none` (no timeout and no dropped packet at either setting), `few` (fewer
    sharded timeouts than requests beyond the 99th percentile), `supports` (as many or more,
    and more sharded than non-sharded ones) or `unsupported` (as many or more, but no more
    sharded ones)."""
    if at is None:
        return "uncounted"
    s, n = (float(at.loc[k, "rto_per_1k"]) for k in SHARDING)
    if s == n == 0 and all(float(at.loc[k, "drops_per_1k"]) == 0 for k in SHARDING):
        return "none"
    if s < TAIL_SHARE * 1000:
        return "few"
    return "supports" if s > n else "unsupported"
