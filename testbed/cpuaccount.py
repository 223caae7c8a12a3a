"""CPU accounting of a run: what each host and the machine used, over the clients' window and
over the whole run, for run.json's `cpu` section.

Samples are cumulative counters taken at marks of the run (`start`, `window_start`,
`window_end`, `end`); the section is built from their differences. Emulated hosts are read
from their cgroups, the machine from /proc/stat; ssh hosts from their own /proc/stat.

The machine saturates when its idle time over the window is below SATURATED_IDLE of its
capacity. A CFS quota caps a host but reserves nothing: with no idle CPU left, a host can get
less than its budget (and the harness can fall behind), so the scale model no longer holds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.scalemodel import SATURATED_IDLE
from testbed.cpubudget import CgroupSample, HostCgroup


@dataclass(frozen=True)
class MachineSample:
    """/proc/stat's `cpu` line at one moment, in clock ticks summed over every core."""

    busy: int  # user, nice, system, irq, softirq
    idle: int  # idle, iowait
    steal: int  # taken by the hypervisor: neither ours nor idle
    cores: int

    @property
    def total(self) -> int:
        return self.busy + self.idle + self.steal


def parse_proc_stat(text: str) -> MachineSample:
    """The machine's CPU counters from the text of /proc/stat."""
    lines = text.splitlines()
    head = next((ln.split() for ln in lines if ln.startswith("cpu ")), None)
    if head is None:
        raise ValueError("/proc/stat has no 'cpu' line")
    v = [int(x) for x in head[1:]] + [0] * 10
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    # guest time is already counted in user and nice.
    cores = sum(1 for ln in lines if ln.startswith("cpu") and ln[3:4].isdigit())
    return MachineSample(user + nice + system + irq + softirq, idle + iowait, steal, cores or 1)


def machine_sample(proc_stat: Path = Path("/proc/stat")) -> MachineSample:
    return parse_proc_stat(proc_stat.read_text())


@dataclass(frozen=True)
class Mark:
    """Every counter at one moment of the run."""

    at: float  # time.monotonic()
    machine: MachineSample | None
    cgroups: dict[str, CgroupSample]  # emulated hosts by name
    remote: dict[str, MachineSample]  # ssh hosts by name


def machine_window(before: MachineSample, after: MachineSample) -> dict[str, Any]:
    """Busy, idle and steal shares of the capacity between two samples."""
    total = after.total - before.total
    if total <= 0:
        return {"cores": after.cores, "busy_share": None, "idle_share": None, "steal_share": None}
    return {
        "cores": after.cores,
        "busy_share": (after.busy - before.busy) / total,
        "idle_share": (after.idle - before.idle) / total,
        "steal_share": (after.steal - before.steal) / total,
    }


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def host_entry(
    cg: HostCgroup,
    window: tuple[CgroupSample, CgroupSample] | None,
    run: CgroupSample | None,
    window_s: float | None,
) -> dict[str, Any]:
    """One emulated host: its budget, and its CPU over the window and the whole run."""
    entry: dict[str, Any] = {
        "name": cg.host,
        "role": cg.role,
        "budget_cores": cg.budget,
        "period_us": cg.period_us,
        "quota_us": cg.quota_us,
        "cpu_s_window": None,
        "cores_window": None,
        "util": None,
        "nr_periods": None,
        "nr_throttled": None,
        "throttled_s": None,
        "throttled_share": None,
        "cpu_s_run": run.cpu_s if run else None,
        "nr_periods_run": run.nr_periods if run else None,
        "nr_throttled_run": run.nr_throttled if run else None,
        "throttled_s_run": run.throttled_s if run else None,
        # Threads outside the budget (see cpubudget.EXEMPT_THREADS).
        "exempt_threads": sorted(cg.exempted),
        "exempt_cpu_s_window": None,
        "exempt_cpu_s_run": run.exempt_cpu_s if run else None,
    }
    if window is not None and window_s:
        a, b = window
        cpu_s = b.cpu_s - a.cpu_s
        periods = b.nr_periods - a.nr_periods
        throttled = b.nr_throttled - a.nr_throttled
        entry.update(
            cpu_s_window=cpu_s,
            cores_window=cpu_s / window_s,
            util=_ratio(cpu_s, cg.budget * window_s) if cg.budget else None,
            nr_periods=periods,
            nr_throttled=throttled,
            throttled_s=b.throttled_s - a.throttled_s,
            throttled_share=_ratio(throttled, periods),
            exempt_cpu_s_window=b.exempt_cpu_s - a.exempt_cpu_s,
        )
    return entry


def section(
    accounting: str,
    cgroups: list[HostCgroup],
    marks: Mapping[str, Mark],
    remote_roles: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """run.json's `cpu` section from the marks a run reached (any may be missing)."""
    start, w0, w1, end = (marks.get(k) for k in ("start", "window_start", "window_end", "end"))
    window_s = (w1.at - w0.at) if w0 and w1 else None
    out: dict[str, Any] = {
        "accounting": accounting,
        "budgets_cores": {cg.host: cg.budget for cg in cgroups},
        "window_s": window_s,
        "machine": None,
        "machine_run": None,
        "hosts_cores": None,
        "outside_budgets_cores": None,
        "host_saturated": None,
        "hosts": [],
    }
    if w0 and w1 and w0.machine and w1.machine:
        out["machine"] = machine_window(w0.machine, w1.machine)
    if start and end and start.machine and end.machine:
        out["machine_run"] = machine_window(start.machine, end.machine)
    for cg in cgroups:
        pair = None
        if w0 and w1 and cg.host in w0.cgroups and cg.host in w1.cgroups:
            pair = (w0.cgroups[cg.host], w1.cgroups[cg.host])
        run = end.cgroups.get(cg.host) if end else None
        if run is None and w1 is not None:
            run = w1.cgroups.get(cg.host)
        out["hosts"].append(host_entry(cg, pair, run, window_s))
    for name, role in (remote_roles or {}).items():
        entry: dict[str, Any] = {"name": name, "role": role, "cores": None, "util": None}
        if w0 and w1 and name in w0.remote and name in w1.remote:
            m = machine_window(w0.remote[name], w1.remote[name])
            entry.update(cores=m["cores"], util=m["busy_share"], steal_share=m["steal_share"])
        out["hosts"].append(entry)
    machine = out["machine"]
    if machine and machine["busy_share"] is not None and window_s:
        busy_cores = machine["busy_share"] * machine["cores"]
        used = [h["cores_window"] for h in out["hosts"] if h.get("cores_window") is not None]
        used += [h["exempt_cpu_s_window"] / window_s for h in out["hosts"]
                 if h.get("exempt_cpu_s_window") is not None]  # fmt: skip
        out["hosts_cores"] = sum(used)
        out["outside_budgets_cores"] = busy_cores - sum(used)
        out["host_saturated"] = machine["idle_share"] < SATURATED_IDLE
    return out


def saturation_warning(cpu: Mapping[str, Any]) -> str | None:
    """The warning of a run whose machine saturated during the window, else None."""
    if not cpu.get("host_saturated"):
        return None
    m = cpu["machine"]
    return (
        f"the machine saturated during the measurement window: idle {m['idle_share']:.1%} of"
        f" {m['cores']} cores (below {SATURATED_IDLE:.0%}); CPU budgets may not have held"
    )


def cores() -> int:
    """Cores of this machine, as /proc/stat counts them (os.cpu_count() where it cannot)."""
    try:
        return machine_sample().cores
    except (OSError, ValueError):
        return os.cpu_count() or 1
