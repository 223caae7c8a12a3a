"""Throughput against an ideal implementation that scales linearly with the servers, as the
2016 study defines it (§2.3): nothing in the middleware is a bottleneck, so throughput grows
in proportion to the number of servers S for sets and gets alike, and replication costs
nothing (every replica answers at once)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd


def ideal_linear(
    points: pd.DataFrame,
    value: str,
    servers: str,
    groups: Sequence[str],
    base: Mapping[str, object],
) -> pd.DataFrame:
    """A copy of `points` with `ideal` and `efficiency` (measured / ideal). Within each group
    of `groups` (e.g. the share of writes), the ideal is the base row's `value` times S / S₀,
    the base row being the one matching `base` (e.g. no replication) with the fewest servers
    S₀. NaN where a group has no base row."""
    for column in (value, servers, *groups, *base):
        if column not in points.columns:
            raise KeyError(f"points have no column {column!r}")
    match = pd.Series(True, index=points.index)
    for k, v in base.items():
        match &= points[k].astype(str) == str(v)
    out = points.copy()
    ideal = []
    for _, row in out.iterrows():
        same = match.copy()
        for g in groups:
            same &= points[g].astype(str) == str(row[g])
        candidates = points[same]
        if candidates.empty:
            ideal.append(math.nan)
            continue
        b = candidates.sort_values(servers).iloc[0]
        ideal.append(float(b[value]) * float(row[servers]) / float(b[servers]))
    out["ideal"] = ideal
    out["efficiency"] = out[value].astype(float) / out["ideal"]
    return out
