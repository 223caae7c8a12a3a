"""Closed queueing network of the 2016 design, solved by exact MVA (analysis.models.mva).

Stations: the client side (a delay centre: the clients and the network, everything outside
the middleware), the net-thread, per memcached server i a read pool (T servers), a write
thread (one server) and the memcached server itself, and the round trip between middleware
and memcached (a delay centre: the testbed delays every packet of that link, and a delay
serves every request at once, so it is no part of a queue's service time). A request is a
GET with probability 1 − w and a SET with probability w, and keys are spread evenly over the
S primaries, so the visit ratios per request are

    read i:      (1 − w) / S        (a GET waits in its primary's read queue)
    write i:     w / S              (a SET in its primary's write queue)
    memcached i: ((1 − w) + w·k) / S (a GET reads its primary; a SET goes to its k replicas,
                                     k the replication factor)
    round trip:  (1 − w) + w·k       (one per visit to a memcached server)

Product-form networks cannot express two things of the real system, and the model says so
rather than hide it: a read thread holds its part while memcached answers (the read station's
service time is the thread's own time, without that wait), and a SET goes to its k replicas
in parallel (the model visits them one after the other).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis.models import mva
from analysis.pools import part_times, write_thread_time_us
from analysis.validate import set_share


@dataclass(frozen=True)
class Design:
    servers: int  # S
    workers: int  # read threads per server (middleware.workers; the study's T)
    replication: int  # k, the replication factor: servers a SET is written to
    write_share: float  # w, 0..1

    def __post_init__(self) -> None:
        if self.servers < 1 or self.workers < 1:
            raise ValueError("servers and read threads must be positive")
        if not 1 <= self.replication <= self.servers:
            raise ValueError(f"replication {self.replication} is not 1..{self.servers}")
        if not 0 <= self.write_share <= 1:
            raise ValueError(f"write share {self.write_share} is not in 0..1")


@dataclass(frozen=True)
class ServiceTimes:
    """Seconds per visit."""

    client: float  # outside the middleware, per request
    net_thread: float
    read: float  # a read thread's own time per GET part (without the wait for memcached)
    write: float  # the write thread's busy time per SET
    memcached: float  # one request at one server, the server's own service
    round_trip: float = 0.0  # middleware to memcached and back, per visit (a delay centre)

    def __post_init__(self) -> None:
        for name in ("client", "net_thread", "read", "memcached", "round_trip"):
            v = getattr(self, name)
            if not (v >= 0 and math.isfinite(v)):
                raise ValueError(f"service time {name} must be a number >= 0, got {v}")


def design_of(point: pd.Series) -> Design:
    """The design of a point row (servers, `middleware.workers`, `middleware.replication`,
    `workload.ratio`); no replication setting means every server holds every key."""
    replication = point.get("middleware.replication")
    servers = int(point["servers"])
    r = servers if replication is None or pd.isna(replication) else int(replication)
    return Design(servers, int(point["middleware.workers"]), r, set_share(point["workload.ratio"]))


def round_trip_of(point: pd.Series) -> float:
    """The emulated round trip between middleware and memcached of a point row, in the
    study's time (s): twice the one-way delay (`delays_ms.middleware_server`, testbed ms) by
    the point's scale; 0 without a delay."""
    delay = point.get("delays_ms.middleware_server")
    if delay is None or pd.isna(delay):
        return 0.0
    scale = point.get("scale")
    s = 1.0 if scale is None or pd.isna(scale) else float(scale)
    return 2 * float(delay) * s / 1e3


def visits(d: Design) -> dict[str, float]:
    """Visit ratio per station kind and server (one request = one cycle)."""
    w, s = d.write_share, d.servers
    return {"read": (1 - w) / s, "write": w / s, "memcached": ((1 - w) + w * d.replication) / s}


# How the report's text names a station kind (the tables keep the kinds).
STATION_WORDS = {
    "net-thread": "the net-thread",
    "read": "the read pools",
    "write": "the write threads",
    "memcached": "memcached",
}


def station_words(kind: str) -> str:
    """A station kind in the report's words."""
    return STATION_WORDS.get(kind, kind)


def network(d: Design, t: ServiceTimes) -> mva.Network:
    """Stations with their visit ratios; a station nothing visits (the write threads of a
    read-only load) is left out."""
    v = visits(d)
    stations = [
        mva.Station("client", "delay", t.client),
        mva.Station("net-thread", "queue", t.net_thread),
    ]
    for i in range(d.servers):
        if v["read"] > 0:
            stations.append(mva.Station(f"read{i}", "queue", t.read, v["read"], d.workers))
        if v["write"] > 0:
            if not (t.write >= 0 and math.isfinite(t.write)):
                raise ValueError(f"a load with writes needs a write service time, got {t.write}")
            stations.append(mva.Station(f"write{i}", "queue", t.write, v["write"]))
        stations.append(mva.Station(f"memcached{i}", "queue", t.memcached, v["memcached"]))
    if t.round_trip > 0:
        total = v["memcached"] * d.servers
        stations.append(mva.Station("round-trip", "delay", t.round_trip, total))
    return mva.Network(tuple(stations))


@dataclass(frozen=True)
class Prediction:
    clients: int
    throughput: float  # requests/s
    response_time: float  # at the clients, s
    middleware_response_get: float  # s, net-thread + read pool + one server
    middleware_response_set: float  # s, net-thread + write thread + k servers
    utilization: dict[str, float]  # per station kind: net-thread, read, write, memcached
    read_busy: float  # predicted busy fraction of a read thread, holding included
    bottleneck: str  # station kind with the highest utilisation
    result: mva.MVAResult


def predict(d: Design, t: ServiceTimes, clients: int) -> Prediction:
    res = mva.solve(network(d, t), clients)
    st = res.stations

    def per_visit(kind: str) -> float:
        return st[f"{kind}0"].response_time if f"{kind}0" in st else 0.0

    def util(kind: str) -> float:
        names = [n for n in st if n.rstrip("0123456789") == kind and n != kind]
        return max((st[n].utilization for n in names), default=math.nan)

    net = st["net-thread"].response_time
    # One visit to a server: its round trip and its queue.
    mc = per_visit("memcached") + t.round_trip
    utilization = {
        "net-thread": st["net-thread"].utilization,
        "read": util("read"),
        "write": util("write"),
        "memcached": util("memcached"),
    }
    v = visits(d)
    # A read thread is busy from dequeue to done: its own time, the round trip and the wait
    # at memcached.
    read_busy = res.throughput * v["read"] * (t.read + mc) / d.workers
    known = {k: u for k, u in utilization.items() if math.isfinite(u)}
    return Prediction(
        clients=clients,
        throughput=res.throughput,
        response_time=res.response_time,
        middleware_response_get=net + per_visit("read") + mc,
        middleware_response_set=net + per_visit("write") + d.replication * mc,
        utilization=utilization,
        read_busy=read_busy,
        bottleneck=max(known, key=lambda k: known[k]),
        result=res,
    )


def _weighted(frame: pd.DataFrame, column: str) -> float:
    f = frame.dropna(subset=[column])
    n = f["count"].sum()
    return float((f[column] * f["count"]).sum() / n) if n > 0 else math.nan


def service_times(
    windows: pd.DataFrame,
    pools: pd.DataFrame,
    pool_requests: pd.DataFrame,
    round_trip: float = 0.0,
) -> ServiceTimes:
    """Service times of one configuration from its stable windows (both sides, tidy
    `windows` with request types) and its pool statistics: the client delay is the clients'
    mean response time minus the middleware's; the read time is the worker time of GETs;
    the write time the write threads' busy time per SET; memcached's the server time of GET
    parts (of SETs for a load without GETs) less the link's `round_trip` (s, round_trip_of),
    which the network has as its own delay centre."""
    typed = windows[windows["type"] != "all"]
    client = typed[typed["side"] == "client"]
    mw = typed[typed["side"] == "middleware"]
    gets = mw[mw["type"].isin(["get", "multiget"])]
    server = part_times(pool_requests, "server", by=(), pools=("read",))
    if server.empty:
        server = part_times(pool_requests, "server", by=(), pools=("write", "shared"))
    memcached = (
        float((server["mean"] * server["count"]).sum() / server["count"].sum())
        if len(server)
        else math.nan
    )
    us = 1e-6
    delay = _weighted(client, "response_us_mean") - _weighted(mw, "response_us_mean")
    return ServiceTimes(
        client=max(delay, 0.0) * us,
        net_thread=_weighted(mw, "net_us_mean") * us,
        read=(_weighted(gets, "worker_us_mean") if len(gets) else 0.0) * us,
        write=write_thread_time_us(pools) * us,
        memcached=max(memcached * us - round_trip, 0.0),
        round_trip=round_trip,
    )
