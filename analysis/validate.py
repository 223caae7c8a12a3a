"""Checks on measurements: interactive response time law and bandwidth bounds (stability:
common.stability), and the per-run validation table built from them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis import stability
from analysis.bottleneck import SATURATED
from analysis.calibration import MAX_STEAL_SHARE
from analysis.linkload import DEFAULT_KEY_BYTES
from analysis.models import linkbounds
from common import stability as criteria
from common.machinespeed import MAX_SPREAD as MAX_SPEED_SPREAD

# The interactive law holds for a run whose measured throughput is within this relative
# distance of N/(R + Z): the validation appendix flags the others, and the 2016 section counts
# the runs within it. It checks bookkeeping (every client active, every request counted), so
# it is looser than the precision the stability check asks of a run's mean.
LAW_TOLERANCE = 0.10
# A run at this share of its bandwidth bound or more is link-limited (flagged, not excluded).
NEAR_BOUND = SATURATED
# The stability check's failed criteria (common.stability), as they open its reasons.
UNSTABLE_REASONS = ("trend", "imprecise", "too few windows")


@dataclass(frozen=True)
class InteractiveLaw:
    clients: int
    throughput: float  # measured X, requests per second
    response_time: float  # measured R, seconds
    think_time: float  # assumed Z, seconds
    predicted_response_time: float  # N/X − Z
    predicted_throughput: float  # N/(R + Z)
    relative_error: float  # (X − N/(R + Z)) / X
    fitted_think_time: float  # the Z that makes the law exact: N/X − R

    def holds(self, tolerance: float | None = None) -> bool:
        """Within `tolerance`, by default the validation's one tolerance (read when asked)."""
        return abs(self.relative_error) <= (LAW_TOLERANCE if tolerance is None else tolerance)


def interactive_law(
    clients: int, throughput: float, response_time: float, think_time: float = 0.0
) -> InteractiveLaw:
    """R = N/X − Z for a closed system of N clients (Jain §33.3)."""
    if clients < 1 or throughput <= 0 or response_time < 0:
        raise ValueError("need clients >= 1, throughput > 0 and response time >= 0")
    predicted_x = clients / (response_time + think_time)
    return InteractiveLaw(
        clients=clients,
        throughput=throughput,
        response_time=response_time,
        think_time=think_time,
        predicted_response_time=clients / throughput - think_time,
        predicted_throughput=predicted_x,
        relative_error=(throughput - predicted_x) / throughput,
        fitted_think_time=clients / throughput - response_time,
    )


def interactive_law_table(
    summary: pd.DataFrame,
    clients: str = "clients_total",
    throughput: str = "throughput_ops",
    response_us: str = "response_us_mean",
    think_time: float = 0.0,
) -> pd.DataFrame:
    """Adds the law's columns to a per-run (or per-point) table of all request types."""
    rows = []
    for _, r in summary.iterrows():
        law = interactive_law(
            int(r[clients]), float(r[throughput]), float(r[response_us]) / 1e6, think_time
        )
        rows.append(
            {
                "predicted_response_us": law.predicted_response_time * 1e6,
                "predicted_throughput_ops": law.predicted_throughput,
                "relative_error": law.relative_error,
                "fitted_think_us": law.fitted_think_time * 1e6,
            }
        )
    return pd.concat([summary.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def message_sizes(
    data_size: int, key_size: int, multiget: int = 0, parts: int = 1
) -> dict[str, int]:
    """Bytes on the wire in memcached's text protocol (no TCP/IP overhead), for a value of
    `data_size` bytes and keys of `key_size` bytes. A multi-get of `multiget` keys that the
    middleware splits into `parts` requests (sharded: one per server it asks) also has the
    bytes of all its parts towards the servers and of all their replies: every part is a
    `get` line of its own keys, and every reply ends in its own `END`."""
    if multiget < 0 or not 1 <= parts <= max(multiget, 1):
        raise ValueError("need multiget >= 0 and 1 <= parts <= max(multiget, 1)")
    value_line = len(f"VALUE {'k' * key_size} 0 {data_size}\r\n") + data_size + 2
    end, get = len("END\r\n"), len("get\r\n")
    sizes = {
        "set_request": len(f"set {'k' * key_size} 0 0 {data_size}\r\n") + data_size + 2,
        "set_reply": len("STORED\r\n"),
        "get_request": len(f"get {'k' * key_size}\r\n"),
        "get_reply": value_line + end,
    }
    if multiget > 0:
        keys = multiget * (key_size + 1)  # " <key>" per key
        sizes["multiget_request"] = get + keys
        sizes["multiget_reply"] = multiget * value_line + end
        sizes["multiget_server_request"] = parts * get + keys
        sizes["multiget_server_reply"] = multiget * value_line + parts * end
    return sizes


def set_share(ratio: str, multiget: int = 0) -> float:
    """The share of operations that are SETs under memtier's `--ratio S:G`: per cycle S
    SETs and G keys read, in multi-gets of up to `multiget` keys (one operation each)."""
    try:
        sets, gets = (int(x) for x in str(ratio).split(":"))
    except ValueError:
        raise ValueError(f"ratio must look like S:G, got {ratio!r}") from None
    if sets < 0 or gets < 0 or sets + gets == 0:
        raise ValueError(f"ratio needs non-negative parts and at least one > 0: {ratio!r}")
    reads = -(-gets // multiget) if multiget > 1 else gets
    return sets / (sets + reads)


@dataclass(frozen=True)
class BandwidthBound:
    per_role: dict[str, float]  # ops/s each role's egress capacity allows
    bound: float  # the smallest
    binding: str  # the role that binds


def bandwidth_bound(
    capacity_mbit: dict[str, float],
    machines: dict[str, int],
    sizes: dict[str, int],
    set_fraction: float,
    replication: int = 1,
    servers: int = 1,
    via_middleware: bool = True,
) -> BandwidthBound:
    """Throughput bound (ops/s) from each role's egress capacity, every machine of a role
    sharing the load evenly. `set_fraction` is the share of operations that are SETs (a
    multi-get is one operation, see `set_share`). Writes go to `replication` of `servers`
    servers; reads to one server, or through the middleware in the parts of `sizes`.

    Per operation, what leaves each role: a client sends the request; a server sends a
    reply per replica written and the replies to the parts it was asked; the middleware
    sends the client its one reply and the servers a request per replica and the parts.
    """
    if not 0 <= set_fraction <= 1:
        raise ValueError("set_fraction must lie in [0, 1]")
    fs, fg = set_fraction, 1 - set_fraction
    get_req = sizes.get("multiget_request", sizes["get_request"])
    get_rep = sizes.get("multiget_reply", sizes["get_reply"])
    if via_middleware:
        part_req = sizes.get("multiget_server_request", get_req)
        part_rep = sizes.get("multiget_server_reply", get_rep)
    else:  # the client asks one server for all its keys
        part_req, part_rep = get_req, get_rep
    per_op = {
        "client": fs * sizes["set_request"] + fg * get_req,
        "server": fs * replication * sizes["set_reply"] + fg * part_rep,
    }
    if via_middleware:
        per_op["middleware"] = (
            fs * sizes["set_reply"]
            + fg * get_rep
            + fs * replication * sizes["set_request"]
            + fg * part_req
        )
    per_role = {}
    for role, nbytes in per_op.items():
        count = machines.get(role, servers if role == "server" else 1)
        cap = capacity_mbit.get(role)
        if cap is None or nbytes <= 0:
            continue
        per_role[role] = count * cap * 1e6 / (8 * nbytes)
    if not per_role:
        raise ValueError("no role has both a capacity and traffic")
    binding = min(per_role, key=per_role.__getitem__)
    return BandwidthBound(per_role, per_role[binding], binding)


def run_bound(manifest: pd.Series) -> float:
    """The bandwidth bound (ops/s, as run) of one run from its manifest row: the link
    capacities (analysis.models.linkbounds.bound_capacity_mbit: the caps on capped hosts, else as
    measured), the point's machines, message sizes and write share; NaN without any
    capacity."""
    bound = run_bandwidth_bound(manifest)
    return math.nan if bound is None else bound.bound


def run_bandwidth_bound(manifest: pd.Series) -> BandwidthBound | None:
    """`run_bound` with every role's bound and the binding role; None without any capacity."""
    capacity = {
        role: cap
        for role in ("client", "middleware", "server")
        if math.isfinite(cap := linkbounds.bound_capacity_mbit(manifest, role))
    }
    if not capacity:
        return None
    key = manifest.get("workload.key_size")
    multiget = int(manifest.get("workload.multiget") or 0)
    multiget = multiget if multiget > 1 else 0
    servers = int(manifest["servers"])
    middlewares = int(manifest["middlewares"])
    # A sharded multi-get asks every server for its share of the keys, one part each.
    flag = manifest.get("middleware.sharded")
    sharded = middlewares > 0 and multiget > 0 and pd.notna(flag) and bool(flag)
    sizes = message_sizes(
        int(manifest["workload.data_size"]),
        int(key) if pd.notna(key) else DEFAULT_KEY_BYTES,
        multiget,
        parts=min(multiget, servers) if sharded else 1,
    )
    replication = manifest.get("middleware.replication")
    machines = {"client": int(manifest["client_machines"]), "server": servers}
    if middlewares:
        machines["middleware"] = middlewares
    return bandwidth_bound(
        capacity,
        machines,
        sizes,
        set_share(manifest["workload.ratio"], multiget),
        replication=int(replication) if pd.notna(replication) else servers,
        servers=servers,
        via_middleware=middlewares > 0,
    )


def check_runs(
    runs: pd.DataFrame, manifests: pd.DataFrame, family: str, windows: pd.DataFrame
) -> pd.DataFrame:
    """One row per run of a family (client side, every request type together, measured
    windows): the stability check, the interactive law's relative error, the share of the
    bandwidth bound reached, the reruns of its point, its flags, and whether it is
    `excluded` (failed or unstable after its reruns: left out of statistics and fits).
    `runs` and `manifests` as analysis.family writes them, `windows` its tidy windows."""
    client = runs[(runs["side"] == "client") & (runs["type"] == "all")] if "side" in runs else runs
    checked = stability.stability_table(windows).set_index("run")
    rows = []
    for _, manifest in manifests.iterrows():
        measured = client[client["run"] == manifest["run"]]
        reruns = manifest.get("reruns")
        row = {
            "family": family,
            "run": manifest["run"],
            "status": manifest["status"],
            "error": manifest.get("error"),
            "reruns": int(reruns) if pd.notna(reruns) else 0,
            "throughput_ops": math.nan,
            "stable": False,
            "stability": "",
            "windows": 0,
            "trend_p": math.nan,
            "rel_half_width": math.nan,
            "law_error": math.nan,
            "bound_ops": math.nan,
            "measured_s": _measured_s(manifest),
            # The run's scale factor s: a measured second stands for s seconds of the study.
            "scale": _float(manifest.get("scale")),
            # The share of the machine's CPU the hypervisor took during the measurement.
            "steal": float(manifest.get("host_steal", math.nan)),
            # How much the CPU's speed spread over the measurement (testbed.speedprobe): a
            # budget is CPU time, and a slower CPU second does less work.
            "speed_spread": float(manifest.get("host_speed_spread", math.nan)),
            # TCP's retransmission timeouts and the packets the links' token buckets dropped:
            # a client waiting out a timeout holds a request no response time counts yet.
            "rto_timeouts": _float(manifest.get("rto_timeouts")),
            "qdisc_drops": _float(manifest.get("qdisc_drops")),
        }
        if manifest["status"] == "ok" and not measured.empty:
            m = measured.iloc[0]
            row["throughput_ops"] = float(m["throughput_ops"])
            if manifest["run"] in checked.index:
                verdict = checked.loc[manifest["run"]]
                row["stable"] = bool(verdict["stable"])
                row["stability"] = str(verdict["reason"])
                row["windows"] = int(verdict["windows"])
                row["trend_p"] = float(verdict["trend_p"])
                row["rel_half_width"] = float(verdict["rel_half_width"])
            else:
                row["stability"] = "no complete client windows"
            if m["throughput_ops"] > 0 and pd.notna(m["response_us_mean"]):
                law = interactive_law(
                    int(manifest["clients_total"]),
                    float(m["throughput_ops"]),
                    float(m["response_us_mean"]) / 1e6,
                )
                row["law_error"] = law.relative_error
            row["bound_ops"] = run_bound(manifest)
        rows.append(row)
    out = pd.DataFrame(rows)
    out["bound_fraction"] = out["throughput_ops"] / out["bound_ops"]
    out["flags"] = [", ".join(_flags(r)) for _, r in out.iterrows()]
    out["flagged"] = out["flags"].str.contains("failed|unstable|law")
    # The stated rule: what is still failed or unstable after the reruns stays out of fits.
    out["excluded"] = (out["status"] != "ok") | ~out["stable"]
    return out


def usable_points(points: pd.DataFrame, validation: pd.DataFrame, family: str) -> pd.DataFrame:
    """The rows of a family's `points` (or any table with a `point` column) that statistics,
    tables and fits may use: points with at least one run the validation kept (`excluded`
    false). A point all of whose runs are excluded (failed, or unstable after the reruns)
    keeps its completed runs in the tidy data, so that a factorial grid misses no level; every
    other table leaves it out. Points the validation does not know stay, and so does every
    point of a family none of whose runs the validation kept."""
    runs = validation[validation["family"] == family]
    point = runs["run"].astype(str).str.split("/").str[1]
    kept = set(point[~runs["excluded"].astype(bool)])
    if not kept:
        # No run of the family passed (steps shorter than the check needs, as the smoke
        # profile's): nothing is left to prefer, so its tables show every point, unchecked,
        # and the validation appendix lists each run as unstable.
        return points.copy()
    dropped = set(point) - kept
    return points[~points["point"].isin(dropped)].copy()


def _float(value: object) -> float:
    """A number from a manifest column that may be missing (NaN then)."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _measured_s(manifest: pd.Series) -> float:
    """The run's measured interval: its (last attempt's) step less the warm-up and cool-down
    cut."""
    try:
        return (
            float(manifest["duration_s"])
            - float(manifest["warmup_s"])
            - float(manifest["cooldown_s"])
        )
    except (KeyError, TypeError, ValueError):
        return math.nan


def needed_seconds(
    measured_s: float, rel_half_width: float, bound: float = criteria.MAX_REL_HALF_WIDTH
) -> float:
    """The measured interval at which a run's confidence interval would close to `bound`
    (common.stability.length_factor)."""
    if not (measured_s > 0 and rel_half_width >= 0):
        return math.nan
    return measured_s * criteria.length_factor(rel_half_width, bound)


def run_lengths(table: pd.DataFrame) -> pd.DataFrame:
    """Per family of a `check_runs` table, over its completed runs with an interval: runs,
    median measured seconds, median and 90th-percentile CI half-width, and the median and
    90th-percentile measured length the check asks for (`needed_seconds`, and at least
    MIN_WINDOWS of the run's windows): at the latter, nine runs in ten of the family would
    have passed criteria (a) and (c)."""
    columns = ["family", "runs", "measured_s", "half_width", "half_width_p90", "needed_s",
               "needed_s_p90"]  # fmt: skip
    ok = table[(table["status"] == "ok") & table["rel_half_width"].notna()].copy()
    if "measured_s" not in ok:
        return pd.DataFrame(columns=columns)
    # Criterion (a) asks for MIN_WINDOWS windows whatever the variation.
    window_s = ok["measured_s"] / ok["windows"].where(ok["windows"] > 0)
    ok["needed_s"] = [
        max(needed_seconds(m, h), criteria.MIN_WINDOWS * w)
        for m, h, w in zip(ok["measured_s"], ok["rel_half_width"], window_s, strict=True)
    ]
    rows = [
        {
            "family": family,
            "runs": len(g),
            "measured_s": g["measured_s"].median(),
            "half_width": g["rel_half_width"].median(),
            "half_width_p90": g["rel_half_width"].quantile(0.9),
            "needed_s": g["needed_s"].median(),
            "needed_s_p90": g["needed_s"].quantile(0.9),
        }
        for family, g in ok.groupby("family", sort=True)
    ]
    return pd.DataFrame(rows, columns=columns)


def _flags(r: pd.Series) -> list[str]:
    f = []
    if r["status"] != "ok":
        f.append("failed")
    if r["status"] == "ok" and not r["stable"]:
        f.append("unstable")
    if pd.notna(r["law_error"]) and abs(r["law_error"]) > LAW_TOLERANCE:
        f.append("law")
    if pd.notna(r["bound_fraction"]) and r["bound_fraction"] >= NEAR_BOUND:
        f.append("at bound")
    if r.get("steal", math.nan) > MAX_STEAL_SHARE:
        f.append("steal")
    if r.get("speed_spread", math.nan) > MAX_SPEED_SPREAD:
        f.append("speed")
    return f


def with_point_reruns(table: pd.DataFrame, run_times: pd.DataFrame) -> pd.DataFrame:
    """A `check_runs` table whose reruns are those the run times count (analysis.protocol:
    a series step's attempts, or the earlier attempts a run measured alone left among the
    failures, which its manifest does not list), so that every table counts them alike."""
    if "attempts" not in run_times.columns or table.empty:
        return table
    attempts = run_times.drop_duplicates("run").set_index("run")["attempts"]
    counted = table["run"].map(attempts)
    reruns = (counted - 1).clip(lower=0)
    return table.assign(reruns=reruns.where(counted.notna(), table["reruns"]).astype(int))


def family_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per family of a `check_runs` table: runs, stable runs, unstable runs (completed, not
        stable) and among them those failing each criterion of `UNSTABLE_REASONS` (a run can
        fail several), the unstable runs measured while the hypervisor took more than
        MAX_STEAL_SHARE of the machine (`steal`), those during which the CPU's speed spread by more
    than MAX_SPEED_SPREAD (`speed`), failed runs and reruns. A completed run without
        complete windows counts as having too few."""
    columns = ["family", "runs", "stable", "unstable", *UNSTABLE_REASONS, "steal", "speed",
               "failed", "reruns"]  # fmt: skip
    rows = []
    for family, g in table.groupby("family", sort=True):
        ok = g[g["status"] == "ok"]
        unstable = ok[~ok["stable"].astype(bool)]
        reasons = unstable["stability"].fillna("").str.split("; ")
        row = {
            "family": family,
            "runs": len(g),
            "stable": int(ok["stable"].astype(bool).sum()),
            "unstable": len(unstable),
            "failed": int((g["status"] != "ok").sum()),
            "reruns": int(g["reruns"].sum()) if "reruns" in g else 0,
        }
        for reason in UNSTABLE_REASONS:
            row[reason] = int(reasons.apply(lambda parts, r=reason: _fails(parts, r)).sum())
        steal = unstable["steal"] if "steal" in unstable else pd.Series(dtype=float)
        row["steal"] = int((steal > MAX_STEAL_SHARE).sum())
        spread = unstable["speed_spread"] if "speed_spread" in unstable else pd.Series(dtype=float)
        row["speed"] = int((spread > MAX_SPEED_SPREAD).sum())
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _fails(parts: list[str], reason: str) -> bool:
    if reason == "too few windows" and any(p.startswith("no complete") for p in parts):
        return True
    return any(p.startswith(reason) for p in parts)
