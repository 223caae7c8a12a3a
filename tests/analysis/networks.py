"""Closed networks used by several checks: textbook, seed report and synthetic multi-server."""

from __future__ import annotations

from analysis.models.mva import Network, Station


def jain_34_2() -> Network:
    # Jain, Example 34.2: timesharing system, think time 4 s.
    return Network(
        (
            Station("cpu", "queue", 0.125, 16),
            Station("disk_a", "queue", 0.3, 10),
            Station("disk_b", "queue", 0.2, 5),
        )
    )


def middleware(netthread: float, worker: float, memcached: float, middlewares: int) -> Network:
    # Seed 004 §7.3: delay centres before and after, a net-thread and a 64-worker pool per
    # middleware (each visited by 1/middlewares of the requests), and one memcached.
    stations = [Station("net_in", "delay", 0.3e-3)]
    for i in range(1, middlewares + 1):
        v = 1 / middlewares
        stations.append(Station(f"netthread{i}", "queue", netthread, v))
        stations.append(Station(f"workers{i}", "queue", worker, v, 64))
    stations.append(Station("memcached", "queue", memcached))
    stations.append(Station("net_out", "delay", 0.3e-3))
    return Network(tuple(stations))


# Seed 004 §7.3.1/§7.3.2 parameters. The one-middleware net-thread time that reproduces the
# printed throughputs (saturation at 11545.00/s) is 1/11545 s; the text prints 1/11546.
SEED_NETWORKS = {
    ("1", "GET"): middleware(1 / 11545, 1.094205e-3, 1 / 2940, 1),
    ("1", "SET"): middleware(1 / 11545, 0.172963e-3, 1 / 16335, 1),
    ("2", "GET"): middleware(2 / 15310, 0.256949e-3, 1 / 2940, 2),
    ("2", "SET"): middleware(2 / 15310, 0.109886e-3, 1 / 16335, 2),
}


def multi_server() -> Network:
    return Network(
        (
            Station("cpu", "queue", 0.01),
            Station("pool", "queue", 0.08, 1, 4),
            Station("disk", "queue", 0.015, 2),
            Station("lan", "delay", 0.05),
        )
    )


def two_pools() -> Network:
    return Network(
        (
            Station("front", "queue", 0.02, 1.5, 2),
            Station("back", "queue", 0.11, 0.75, 8),
            Station("log", "queue", 0.004, 3),
            Station("wire", "delay", 0.002, 2),
        )
    )


def repairman() -> Network:
    return Network((Station("crew", "queue", 0.7, 1, 3),))


# (name, network, populations, think time)
CASES = [
    ("jain_34_2", jain_34_2(), [1, 2, 5, 17, 20], 4.0),
    ("multi_server", multi_server(), [1, 3, 10, 30, 80], 0.5),
    ("two_pools", two_pools(), [1, 7, 25, 60], 0.0),
    ("repairman", repairman(), [1, 2, 3, 4, 10], 1.0),
    *[
        (f"seed_{mw}mw_{kind.lower()}", net, [6, 24, 192], 0.0)
        for (mw, kind), net in SEED_NETWORKS.items()
    ],
]
