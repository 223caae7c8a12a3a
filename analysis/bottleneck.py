"""The bottleneck of a point: the link or the CPU that limits it.

A link or a CPU budget used at SATURATED or more limits the point. Links come first (a full
link is a hard limit whatever the CPUs do); then the machine's shared CPU, when it had no idle
time left (every emulated host then competes for the same cores); then the role whose CPU
budget is used up. Without CPU accounting and with no full link, the bottleneck is not
identified.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

ROLES = ("server", "middleware", "client")
SATURATED = 0.9
NOT_IDENTIFIED = "not identified"
NONE_SATURATED = "none saturated"
HOST_CPU = "host CPU"


def _column(row: pd.Series, *names: str) -> str | None:
    return next((n for n in names if n in row.index), None)


def cpu_utilisation(row: pd.Series) -> dict[str, float]:
    """Measured CPU use per role as a fraction of its budget (`cpu_util_<role>`, or its
    `_mean` over repetitions); roles without accounting are absent."""
    out = {}
    for role in ROLES:
        name = _column(row, f"cpu_util_{role}", f"cpu_util_{role}_mean")
        if name is not None and pd.notna(row[name]):
            out[role] = float(row[name])
    return out


def host_saturated(row: pd.Series) -> bool | None:
    """Whether the machine hosting every emulated host had no idle CPU (in at least half the
    repetitions); None when it was not measured."""
    name = _column(row, "host_saturated", "host_saturated_mean")
    if name is None or pd.isna(row[name]):
        return None
    return bool(float(row[name]) >= 0.5)


def name_bottleneck(
    link: Mapping[str, float], cpu: Mapping[str, float], saturated_host: bool | None
) -> str:
    """`<role> link`, `host CPU`, `<role> CPU`, `none saturated` or `not identified`."""
    for name, value in {**link, **cpu}.items():
        if value < 0:
            raise ValueError(f"utilisation of {name} is negative: {value}")
    busiest_link = max(link.items(), key=lambda kv: kv[1], default=None)
    if busiest_link and busiest_link[1] >= SATURATED:
        return f"{busiest_link[0]} link"
    if saturated_host:
        return HOST_CPU
    busiest_cpu = max(cpu.items(), key=lambda kv: kv[1], default=None)
    if busiest_cpu and busiest_cpu[1] >= SATURATED:
        return f"{busiest_cpu[0]} CPU"
    if not cpu and saturated_host is None:
        return NOT_IDENTIFIED
    return NONE_SATURATED
