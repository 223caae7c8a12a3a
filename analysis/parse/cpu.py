"""Per-role CPU columns of the runs table, from run.json's `cpu` section (testbed.cpuaccount).

Per role, the largest value over the role's hosts: the busiest host is the one that binds.
`cpu_util_<role>` is CPU used over the clients' window divided by the host's budget (emulated
hosts) or the VM's busy share (ssh hosts); `throttled_share_<role>` the share of CFS periods
in which the host's quota ran out; `cpu_cores_<role>` the cores it used. `host_busy` is the
busy share of this machine's capacity over the window, `host_speed_us` the CPU's speed over
the window as the median CPU µs of the speed probe's fixed piece (testbed.speedprobe: larger
is slower), `host_speed_spread` how much that speed spread, and `host_saturated` 1.0 if its idle
time fell below 5 %, else 0.0. NaN where a run has no such number (older runs, unbudgeted hosts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

ROLES = ("server", "middleware", "client")
CPU_COLUMNS = [
    "cpu_accounting",
    *(f"cpu_util_{r}" for r in ROLES),
    *(f"throttled_share_{r}" for r in ROLES),
    *(f"cpu_cores_{r}" for r in ROLES),
    "host_busy",
    "host_steal",
    "host_speed_us",
    "host_speed_spread",
    "host_saturated",
    "cpu_outside_budgets_cores",
]


def _num(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return math.nan


def _max(values: list[Any]) -> float:
    numbers = [x for x in map(_num, values) if not math.isnan(x)]
    return max(numbers) if numbers else math.nan


def cpu_columns(cpu: Mapping[str, Any] | None) -> dict[str, object]:
    """The CPU columns of one run (every column present, NaN where unknown)."""
    if not isinstance(cpu, Mapping):
        return {c: (None if c == "cpu_accounting" else math.nan) for c in CPU_COLUMNS}
    hosts = [h for h in cpu.get("hosts") or [] if isinstance(h, Mapping)]
    out: dict[str, object] = {"cpu_accounting": cpu.get("accounting")}
    for role in ROLES:
        mine = [h for h in hosts if h.get("role") == role]
        out[f"cpu_util_{role}"] = _max([h.get("util") for h in mine])
        out[f"throttled_share_{role}"] = _max([h.get("throttled_share") for h in mine])
        out[f"cpu_cores_{role}"] = _max([h.get("cores_window") for h in mine])
    machine = cpu.get("machine") if isinstance(cpu.get("machine"), Mapping) else {}
    out["host_busy"] = _num(machine.get("busy_share"))
    out["host_steal"] = _num(machine.get("steal_share"))
    speed = cpu.get("machine_speed") if isinstance(cpu.get("machine_speed"), Mapping) else {}
    out["host_speed_us"] = _num(speed.get("piece_us_median"))
    out["host_speed_spread"] = _num(speed.get("spread"))
    saturated = cpu.get("host_saturated")
    # A number, so that its mean over repetitions is the share of them that saturated.
    out["host_saturated"] = float(saturated) if isinstance(saturated, bool) else math.nan
    out["cpu_outside_budgets_cores"] = _num(cpu.get("outside_budgets_cores"))
    return out
