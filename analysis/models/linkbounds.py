"""Per-machine throughput bounds from measured link capacities, in the layout of the 2018
study's Table 1 (seed 004): for each role, how many messages of each kind it sends could
leave its link per second if it sent nothing else.

Sizes are payload only (analysis.linkload.Sizes, as in the study): TCP/IP headers are left
out, so a bound is an upper limit, reached only by a saturated link.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis.linkload import Sizes

# Host kinds whose egress the testbed caps with a token bucket (testbed/emulation.py).
CAPPED_HOSTS = ("emulated",)

# The messages each role sends (its egress): clients send requests, servers replies, and the
# middleware forwards requests to the servers and replies to the clients.
MESSAGES = ("set_request", "set_reply", "get_request", "get_reply")
ROLE_MESSAGES: dict[str, tuple[str, ...]] = {
    "client": ("set_request", "get_request"),
    "middleware": MESSAGES,
    "server": ("set_reply", "get_reply"),
}


def message_bytes(sizes: Sizes) -> dict[str, int]:
    """Bytes of each single-key message for one workload's key and value sizes."""
    return {
        "set_request": sizes.set_request(),
        "set_reply": sizes.set_reply(),
        "get_request": sizes.get_request(1),
        "get_reply": sizes.get_reply(1),
    }


def bound_ops(capacity_mbit: float, nbytes: int) -> float:
    """Messages of `nbytes` bytes per second that `capacity_mbit` Mbit/s can carry."""
    if nbytes <= 0:
        raise ValueError(f"a message has a positive size, not {nbytes} bytes")
    return capacity_mbit * 1e6 / 8 / nbytes


def message_bounds(capacity_mbit: Mapping[str, float], sizes: Sizes) -> pd.DataFrame:
    """One row per role and message it sends: `role`, `message`, `bytes`, `capacity_mbit`
    and `bound_ops` = capacity / message size (messages per second). Roles without a finite,
    positive capacity are an error: a bound from no capacity would read as a measurement."""
    unknown = set(capacity_mbit) - set(ROLE_MESSAGES)
    if unknown:
        raise ValueError(f"unknown roles {sorted(unknown)}; known: {sorted(ROLE_MESSAGES)}")
    nbytes = message_bytes(sizes)
    rows = []
    for role, cap in capacity_mbit.items():
        cap = float(cap)
        if not (math.isfinite(cap) and cap > 0):
            raise ValueError(f"capacity of {role} must be a positive number of Mbit/s: {cap}")
        for message in ROLE_MESSAGES[role]:
            rows.append(
                {
                    "role": role,
                    "message": message,
                    "bytes": nbytes[message],
                    "capacity_mbit": cap,
                    "bound_ops": bound_ops(cap, nbytes[message]),
                }
            )
    return pd.DataFrame(rows, columns=["role", "message", "bytes", "capacity_mbit", "bound_ops"])


def measured_capacity(points: pd.DataFrame, role: str) -> float:
    """A role's measured link capacity over a family's points (`link_<role>_mbit`): the
    median, so one disturbed iperf3 measurement does not move it; NaN where none was
    measured (local processes, or a role the family does not have)."""
    column = f"link_{role}_mbit"
    if column not in points.columns:
        return math.nan
    values = pd.to_numeric(points[column], errors="coerce").dropna()
    return float(values.median()) if len(values) else math.nan


def bound_capacity_mbit(row: Mapping[str, object], role: str) -> float:
    """The capacity (Mbit/s, as run) that a role's link bound is computed from: the egress cap
    where the testbed enforced one (`caps_mbit.<role>` on capped hosts), else the capacity
    iperf3 measured (`link_<role>_mbit`, remote hosts); NaN where neither applies (local
    processes). The cap counts headers as well as payload, so no run's payload exceeds the
    bound it gives, while iperf3's one TCP stream reaches a few per cent less than the cap and
    a run's many connections can pass what it measured."""
    if str(row.get("host_kind")) in CAPPED_HOSTS:
        cap = _positive(row.get(f"caps_mbit.{role}"))
        if math.isfinite(cap):
            return cap
    return _positive(row.get(f"link_{role}_mbit"))


def _positive(value: object) -> float:
    """A positive finite number, else NaN."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) and x > 0 else math.nan
