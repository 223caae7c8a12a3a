"""Formats the 2016 section's families share beyond analysis.report.figures: a time in µs
printed in ms, a range of values, and the original's design of a family as macros."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from analysis.report import figures as fg


def ms(us: object) -> str:
    """Microseconds as milliseconds; None (no such value) as a dash."""
    return fg.num(float(us) / 1e3 if us is not None else float("nan"), 3)  # type: ignore[arg-type]


def value_range(lo: object, hi: object, fmt: Callable[..., str], *args: object) -> str:
    """`lo` to `hi` formatted, or one value where they print alike."""
    a, b = fmt(lo, *args), fmt(hi, *args)
    return a if a == b else f"{a} to {b}"


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
