"""Formats the 2016 section's families share beyond analysis.report.figures: a time in µs
printed in ms, the ends of a range of values, and the original's design of a family as
macros."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from analysis.report import figures as fg


def ms(us: object) -> str:
    """Microseconds as milliseconds; None (no such value) as a dash."""
    return fg.num(float(us) / 1e3 if us is not None else float("nan"), 3)  # type: ignore[arg-type]


def bounds(name: str, values: pd.Series, fmt: Callable[..., str], *args: object) -> dict[str, str]:
    """The lowest and highest of `values` formatted, as `<name>Low` and `<name>High` (the
    section prints a range as one value where its ends print alike)."""
    return {f"{name}Low": fmt(values.min(), *args), f"{name}High": fmt(values.max(), *args)}


def design_numbers(prefix: str, design: Mapping[str, Any]) -> dict[str, str]:
    """The original's design of a family (reference2016.yaml, `design`): its servers, shares
    of writes (a list or one value), clients and threads per pool."""
    return {
        f"{prefix}Servers": ", ".join(str(v) for v in design["servers"]),
        f"{prefix}Writes": (
            ", ".join(str(v) for v in design["writes_percent"])
            if isinstance(design["writes_percent"], list)
            else str(design["writes_percent"])
        ),
        f"{prefix}Clients": fg.num(design["clients"]),
        f"{prefix}Threads": fg.num(design["threads_per_pool"]),
    }
