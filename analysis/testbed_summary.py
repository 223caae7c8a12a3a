"""The testbed the runs used, for the report's "Testbed and deviations" section: the machine
(cores, kernel), the kind of hosts, link caps and measured capacities, CPU budgets, the scale
factor and the link delays, from the runs' manifests; and the measured accuracy of the delay
stage when a delay check was recorded.

`python -m analysis.testbed_summary host` prints this machine's description as JSON.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.latex import escape
from analysis.scale_model import scale_of
from common.cfs import period_us

ROLES = ("server", "middleware", "client")
PAIRS = ("client_middleware", "middleware_server", "client_server")


def host() -> dict[str, Any]:
    """This machine: logical cores, kernel, CPU model and memory."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory_kb = 0
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_kb = int(line.split()[1])
    return {
        "cores": os.cpu_count() or 0,
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0,
        "kernel": platform.release(),
        "system": platform.system(),
        "machine": platform.machine(),
        "cpu_model": model,
        "memory_gib": round(memory_kb / 2**20, 1),
    }


def _get(doc: Mapping[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(key)  # type: ignore[assignment]
    return doc


def runs_table(manifests: Iterable[Path]) -> pd.DataFrame:
    """One row per run: host kind, scale, budgets, delays, caps, measured capacities and
    whether CPU was accounted."""
    rows = []
    for path in manifests:
        doc = json.loads(Path(path).read_text())
        point = doc.get("point") or {}
        row: dict[str, Any] = {
            "run": point.get("name", str(path)),
            "host_kind": doc.get("host_kind"),
            # Every planned point has one (1 without the scale model); scale_of checks it.
            "scale": point.get("scale"),
            "cpu_accounted": bool(doc.get("cpu")),
        }
        for role in ROLES:
            row[f"budget_{role}"] = _get(point, "budgets_cores", role)
            row[f"cap_{role}"] = _get(point, "caps_mbit", role)
            row[f"capacity_{role}"] = _get(doc, "link_capacity_mbit", role)
        for pair in PAIRS:
            row[f"delay_{pair}"] = _get(point, "delays_ms", pair) or 0.0
        row["exempt_cores_middleware"] = _exempt_cores(doc.get("cpu") or {}, "middleware")
        rows.append(row)
    return pd.DataFrame(rows)


def _exempt_cores(cpu: Mapping[str, Any], role: str) -> float | None:
    """The most cores any budgeted host of `role` used outside its budget (JIT compiler and
    statistics threads) over the measurement; None where the run recorded none."""
    window = cpu.get("window_s")
    used = [
        h["exempt_cpu_s_window"] / window
        for h in cpu.get("hosts") or []
        if h.get("role") == role
        and h.get("budget_cores") is not None
        and h.get("exempt_cpu_s_window") is not None
    ]
    return max(used) if used and window else None


def _values(series: pd.Series, digits: int = 2, none: str = "none") -> str:
    values = sorted({round(float(v), digits) for v in series.dropna()})
    if not values:
        return none
    return ", ".join(f"{v:g}" for v in values)


def _delay_levels(check: Mapping[str, Any] | None) -> list[Mapping[str, Any]] | None:
    """The delay check's levels, or None when it lists none."""
    levels = check.get("levels") if isinstance(check, Mapping) else None
    return levels if isinstance(levels, list) and levels else None


def delay_items(check: Mapping[str, Any] | None) -> list[str]:
    """The delay check (`python -m mwlab delay-check`) as the section's items, one per
    one-way delay with a measured round trip: `\\TestbedDelayLevel{one way}{idle}{target}
    {loaded}`, the median round trip idle (ICMP) against its target, and how far it lies over
    it under load (memcached; empty where not measured), in ms."""
    items = []
    for level in _delay_levels(check) or []:
        target = level.get("target_rtt_ms")
        idle = _get(level, "idle", "icmp", "rtt_ms", "median")
        loaded = _get(level, "loaded", "memcached", "excess_ms", "median")
        if target is None or idle is None:
            continue
        items.append(
            rf"\TestbedDelayLevel{{{float(level.get('one_way_ms', 0)):g}}}"
            f"{{{float(idle):.3g}}}{{{float(target):g}}}"
            f"{{{'' if loaded is None else format(float(loaded), '+.3g')}}}"
        )
    return items


def delay_case(check: Mapping[str, Any] | None) -> str:
    """What the delay check recorded: `none` (no check), `empty` (a check without delays),
    `unmeasured` (delays without measured round trips) or `measured` (`delay_items`)."""
    if not check:
        return "none"
    if _delay_levels(check) is None:
        return "empty"
    return "measured" if delay_items(check) else "unmeasured"


def _macro(name: str, value: object) -> str:
    return rf"\newcommand{{\{name}}}{{{value}}}" + "\n"


def _camel(text: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in text.split("_"))


def numbers(
    runs: pd.DataFrame,
    machine: Mapping[str, Any],
    check: Mapping | None,
    kernel: str | None = None,
) -> str:
    """The section's macros; `kernel` (LaTeX) names each study's kernel where a merged
    dataset's studies ran on other kernels than its environment records."""
    if runs.empty:
        raise ValueError("no runs to describe")
    out = [
        _macro("TestbedCores", machine.get("cores", "?")),
        _macro("TestbedKernel", kernel or escape(str(machine.get("kernel", "?")))),
        _macro("TestbedCpuModel", escape(str(machine.get("cpu_model") or "unknown"))),
        _macro("TestbedMemoryGiB", machine.get("memory_gib", "?")),
        _macro("TestbedHostKinds", escape(", ".join(sorted(runs["host_kind"].dropna().unique())))),
        _macro("TestbedRuns", len(runs)),
        _macro("TestbedScale", _values(scale_of(runs, "table of runs"), 3)),
        _macro(
            "TestbedRunsBudgeted",
            int(runs[[f"budget_{r}" for r in ROLES]].notna().any(axis=1).sum()),
        ),
        _macro("TestbedRunsCpuAccounted", int(runs["cpu_accounted"].sum())),
        _macro("TestbedDelayCheckCase", delay_case(check)),
        _macro("TestbedDelayCheckLevels", "; ".join(delay_items(check)) or "--"),
    ]
    delayed = (runs[[f"delay_{p}" for p in PAIRS]].astype(float) > 0).any(axis=1)
    out.append(_macro("TestbedRunsDelayed", int(delayed.sum())))
    for role in ROLES:
        name = _camel(role)
        out.append(_macro(f"TestbedCap{name}", _values(runs[f"cap_{role}"], 0)))
        out.append(_macro(f"TestbedBudget{name}", _values(runs[f"budget_{role}"], 2, "none")))
        cap = pd.to_numeric(runs[f"capacity_{role}"], errors="coerce").dropna()
        out.append(_macro(f"TestbedCapacity{name}", f"{cap.median():.0f}" if len(cap) else "--"))
    for pair in PAIRS:
        out.append(_macro(f"TestbedDelay{_camel(pair)}", _values(runs[f"delay_{pair}"], 3, "0")))
    out += period_numbers(runs)
    exempt = pd.to_numeric(runs["exempt_cores_middleware"], errors="coerce").dropna()
    out.append(_macro("TestbedExemptRuns", len(exempt)))
    out.append(_macro("TestbedExemptMedian", f"{exempt.median():.3f}" if len(exempt) else "--"))
    out.append(_macro("TestbedExemptMax", f"{exempt.max():.3f}" if len(exempt) else "--"))
    return "".join(out)


def period_numbers(runs: pd.DataFrame) -> list[str]:
    """The CFS periods the runs' budgets had (common.cfs: 2 ms, longer where the quota would
    fall below 1 ms), the longest a throttled host waits: the longest period in ms as
    measured and in the study's time (times the run's s), and its role."""
    longest: tuple[float, float, str] | None = None
    for role in ROLES:
        budget = pd.to_numeric(runs[f"budget_{role}"], errors="coerce")
        for i in budget[budget > 0].index:
            ms = period_us(float(budget[i])) / 1e3
            study = ms * float(pd.to_numeric(runs.loc[i, "scale"], errors="coerce"))
            if longest is None or ms > longest[0]:
                longest = (ms, study, role)
    if longest is None:
        return [_macro("TestbedPeriodLongest", "--"), _macro("TestbedPeriodLongestStudy", "--"),
                _macro("TestbedPeriodLongestRole", "--")]  # fmt: skip
    ms, study, role = longest
    return [
        _macro("TestbedPeriodLongest", f"{ms:.0f}"),
        _macro("TestbedPeriodLongestStudy", f"{study:.1f}"),
        _macro("TestbedPeriodLongestRole", role),
    ]


def table(runs: pd.DataFrame) -> str:
    """Per role: the cap, the median measured capacity and the CPU budgets of the runs."""
    lines = []
    for role in ROLES:
        cap = pd.to_numeric(runs[f"capacity_{role}"], errors="coerce").dropna()
        lines.append(
            rf"{role} & {_values(runs[f'cap_{role}'], 0)} & "
            rf"{(f'{cap.median():.0f}' if len(cap) else '--')} & "
            rf"{_values(runs[f'budget_{role}'], 2, 'none')} \\"
        )
    return "\n".join(
        [
            r"\begin{tabular}{@{}lrrr@{}}",
            r"\toprule",
            r"Role & Cap [Mbit/s] & Measured [Mbit/s] & CPU budget [cores] \\",
            r"\midrule",
            *lines,
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["host"]:
        sys.exit("usage: python -m analysis.testbed_summary host")
    print(json.dumps(host(), indent=1))
