"""A planned point on the scale model (common.scalemodel): the fields the plan sets on it
(scale, link caps, delays) and the CPU budgets of its hosts, each checked to fit this machine
with the CPU-budget stage's own check (testbed.cpubudget)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from common.scalemodel import (
    ROLES,
    Machines,
    ScaleModelError,
    budgets_cores,
    caps_mbit,
    client_speed,
    delays_ms,
    load_machines,
    read_speed_factors,
)
from testbed.cpubudget import check_fits
from testbed.point import Point


def machine_cores() -> int:
    return os.cpu_count() or 1


def check_fit(
    spec: dict[str, Any], budgets: dict[str, float | None], cores: float | None = None
) -> None:
    """Fails unless a point with these per-role budgets fits this machine (the CPU-budget
    stage's own check: its harness reserve, its smallest budget)."""
    try:
        point = Point.model_validate({**spec, "budgets_cores": budgets})
    except ValueError as err:
        raise ScaleModelError(f"{spec.get('name', 'point')}: {err}") from err
    why = check_fits(point, float(machine_cores() if cores is None else cores))
    if why is not None:
        raise ScaleModelError(f"{spec.get('name', 'point')}: {why}; lower the profile's scale")


def plan_fields(
    machines: Machines, study: str | int, scale: float, spec: dict[str, Any], what: str
) -> dict[str, Any]:
    """The fields the plan sets on an emulated point: scale, caps and delays. Checks that its
    budgets fit this machine at the upper speed bound and are valid budgets at the lower one,
    so any calibration result fits."""
    for bound in (machines.speed_upper, machines.speed_lower):
        speeds: dict[str, float | None] = dict.fromkeys(ROLES, bound)
        speeds["client"] = client_speed(machines, dict.fromkeys(ROLES, bound))
        budgets = budgets_cores(machines, study, scale, speeds)
        try:
            check_fit({**spec, "name": what, "hosts": "emulated"}, budgets)
        except ScaleModelError as err:
            raise ScaleModelError(f"{err} (speed factors at their bound {bound:g})") from err
    return {
        "scale": scale,
        "caps_mbit": caps_mbit(machines, study, scale),
        "delays_ms": delays_ms(machines, study, scale),
    }


def with_budgets(
    spec: dict[str, Any],
    machines: Machines,
    study: str | int,
    speed: dict[str, float | None],
    cores: float | None = None,
) -> dict[str, Any]:
    """A copy of a planned point with the CPU budgets of its hosts (checked to fit)."""
    out = copy.deepcopy(spec)
    budgets = budgets_cores(machines, study, float(spec["scale"]), speed)
    check_fit(spec, budgets, cores)
    out["budgets_cores"] = budgets
    return out


def calibrated(spec: dict[str, Any], study: str | int, calibration: Path) -> dict[str, Any]:
    """A planned point with the CPU budgets its calibration gives its study's hosts."""
    return with_budgets(spec, load_machines(), study, read_speed_factors(calibration, study))
