"""The CFS bandwidth control a CPU budget becomes: its period and quota. One definition, which
the testbed sets (testbed.cpubudget) and the report states (analysis.testbed_summary)."""

from __future__ import annotations

import math

# The CFS period. A throttled group waits for the next period, so throttling adds up to one
# period of delay to a request. Measured (scripts/bench_cpu_period.py, testbed/README.md):
# memcached at a 0.5-core quota, 64 connections, on this 2-core machine, held at its quota
# with the same throughput (0.66-0.71 of unthrottled) at 2, 5, 10 and 20 ms, while p99 grew
# 4.5, 5.1, 7.0, 10.3 ms (unthrottled 3.3 ms). 1 ms needs a budget of at least one core.
PERIOD_US = 2000
# The kernel refuses quotas below 1 ms and periods above 1 s: a small budget gets a longer
# period so its quota stays at 1 ms (0.1 core: 10 ms).
MIN_QUOTA_US = 1000
MAX_PERIOD_US = 1_000_000


def period_us(budget: float) -> int:
    """The CFS period of a budget: PERIOD_US, longer where the quota would fall below 1 ms."""
    if budget <= 0:
        raise ValueError(f"a CPU budget must be positive, got {budget}")
    period = max(PERIOD_US, math.ceil(MIN_QUOTA_US / budget))
    if period > MAX_PERIOD_US:
        smallest = MIN_QUOTA_US / MAX_PERIOD_US
        raise ValueError(f"a CPU budget of {budget} cores is below the smallest, {smallest}")
    return period


def quota_us(budget: float) -> int:
    """CPU time per period of a budget, microseconds."""
    return max(MIN_QUOTA_US, round(budget * period_us(budget)))
