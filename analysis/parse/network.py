"""The network columns of a run: run.json's `network` (testbed.netcounters) summed over hosts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

NETWORK_COLUMNS = ("retrans_segs", "rto_timeouts", "spurious_rtos", "loss_probes",
                   "aborts_on_timeout", "qdisc_drops")  # fmt: skip


def network_columns(network: Mapping[str, Any] | None) -> dict[str, float]:
    """Each counter's total over the run's measurement (every column present, NaN where the
    run has none: local or ssh hosts, or runs recorded before the counters were)."""
    total = network.get("total") if isinstance(network, Mapping) else None
    if not isinstance(total, Mapping):
        return dict.fromkeys(NETWORK_COLUMNS, math.nan)
    out = {}
    for c in NETWORK_COLUMNS:
        v = total.get(c)
        out[c] = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan
    return out
