"""Configurations that several families measured: the same point specification (the run's
length and name aside) planned in more than one family. Such a configuration is one
configuration of the system, whatever family measured it: its runs are pooled, so that its
value and interval include the variation between the families' measurement sessions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# Keys of a point specification that say how long or as what a run is measured, not what
# system it measures.
RUN_KEYS = frozenset({"name", "repetition", "duration_s", "warmup_s", "cooldown_s"})

Key = tuple[str, str]  # (family, point)


def _configuration(spec: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in spec.items() if k not in RUN_KEYS}, sort_keys=True,
                      default=str)  # fmt: skip


def shared(specs: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[Key, list[Key]]:
    """For each planned point (`specs`: family -> point -> its specification) whose
    configuration another family also planned, the other families' points of it."""
    groups: dict[str, list[Key]] = {}
    for family, points in specs.items():
        for point, spec in points.items():
            groups.setdefault(_configuration(spec), []).append((family, point))
    out: dict[Key, list[Key]] = {}
    for members in groups.values():
        if len({f for f, _ in members}) < 2:
            continue
        for key in members:
            out[key] = [m for m in members if m[0] != key[0]]
    return out
