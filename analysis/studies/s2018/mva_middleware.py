"""The closed network of the baseline with middlewares (seed 004 §7.3), fitted to our
measurements, and its per-component results beside seed 004's Table 14.

Centres: the clients (a delay centre, their think time), the network between clients and
middleware (a delay centre, both directions), per middleware a net-thread (one server) and
its worker pool (one server per worker), each visited by the share of requests its
middleware receives, the round trip between middleware and memcached (a delay centre: the
testbed's emulated link delay, as seed 004's network has delay centres of 0.3 ms; it serves
every request at once, so it is no part of memcached's service time, and a worker's hold over
it is left to the delay, as a product-form network must) and memcached (one server). Times in
seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from analysis import estimate
from analysis.models import mva

# Component -> the station that stands for it (the first middleware's where there are
# several: they are symmetric, so its values are the average over middlewares).
COMPONENTS = {
    "clients": "clients",
    "network": "network",
    "net-thread": "netthread1",
    "workers": "workers1",
    "memcached": "memcached",
}
METRICS = ("U", "R", "Q")


@dataclass(frozen=True)
class ServiceTimes:
    """Service time per visit of each centre, in seconds."""

    think: float
    network: float
    netthread: float
    worker: float
    server: float
    server_trip: float = 0.0  # the middleware-memcached round trip of the testbed

    def capacities(self, workers: int, middlewares: int) -> dict[str, float]:
        """Requests per second each queueing component can serve at most (servers over
        service demand): the highest throughput the network can reach is the least of them."""
        return {
            "net-thread": middlewares / self.netthread if self.netthread > 0 else math.inf,
            "workers": middlewares * workers / self.worker if self.worker > 0 else math.inf,
            "memcached": 1 / self.server if self.server > 0 else math.inf,
        }


def service_times(
    components_us: Mapping[str, float],
    client_response_us: float,
    middleware_response_us: float,
    direct_max_throughput: float | None,
    think: float = 0.0,
    server_trip_us: float = 0.0,
) -> ServiceTimes:
    """Service times from measurements (µs in, s out).

    The network is what the clients see beyond the middleware at the lightest load (client
    minus middleware response time, at least 0); net-thread and worker are the middleware's
    mean component times (estimate.component_service_times_us); memcached is the inverse of
    the highest throughput of one server without middleware, as seed 004 took it, or the
    middleware's measured server time where there is no such measurement; `server_trip_us`
    the round trip between middleware and memcached the testbed emulates."""
    network = max(client_response_us - middleware_response_us, 0.0)
    if direct_max_throughput is not None and direct_max_throughput > 0:
        server = 1 / direct_max_throughput
    else:
        server = components_us["server"] / 1e6
    return ServiceTimes(
        think=think,
        network=network / 1e6,
        netthread=components_us["netthread"] / 1e6,
        worker=components_us["worker"] / 1e6,
        server=server,
        server_trip=server_trip_us / 1e6,
    )


def network(times: ServiceTimes, workers: int, middlewares: int) -> mva.Network:
    """The closed network of `middlewares` middlewares with `workers` workers each."""
    if middlewares < 1 or workers < 1:
        raise ValueError(f"need at least one middleware and worker, got {middlewares}, {workers}")
    v = 1 / middlewares
    stations = [
        mva.Station("clients", "delay", times.think),
        mva.Station("network", "delay", times.network),
    ]
    for i in range(1, middlewares + 1):
        stations.append(mva.Station(f"netthread{i}", "queue", times.netthread, v))
        stations.append(mva.Station(f"workers{i}", "queue", times.worker, v, workers))
    if times.server_trip > 0:
        stations.append(mva.Station("server-trip", "delay", times.server_trip))
    stations.append(mva.Station("memcached", "queue", times.server))
    return mva.Network(tuple(stations))


@dataclass(frozen=True)
class Fit:
    """The network of one setup and workload, fitted at its largest worker count, with the
    client points (one row per point) it is compared with."""

    network: mva.Network
    times: ServiceTimes
    workers: int
    middlewares: int
    client: pd.DataFrame
    # memcached's service time is the inverse of one server's throughput without middleware;
    # False: the middleware's server time, which holds the round trip to memcached.
    server_from_direct: bool = True


def fit(
    points: pd.DataFrame, windows: pd.DataFrame, direct: pd.DataFrame
) -> dict[tuple[str, str], Fit]:
    """Per setup and workload of the baseline: the network at the largest worker count, its
    service times (measured at that count's lightest load), and the client points it is
    compared with.

    All in the study's time: `points` of the baseline with middlewares (one row per point,
    side and request type), `windows` its middlewares' windows per request type, `direct`
    the points of the baseline without middleware (memcached's service time is the inverse
    of one server's highest throughput)."""
    points = points[points["type"] == "all"]
    direct = direct[(direct["type"] == "all") & (direct["level_setup"] == "one_server")]
    fitted = {}
    for (setup, workload), g in points.groupby(["level_setup", "level_workload"]):
        client = g[g["side"] == "client"].sort_values("clients_total")
        mwside = g[g["side"] == "middleware"].set_index("point")
        workers = int(client["middleware.workers"].max())
        client = client[client["middleware.workers"] == workers]
        win = windows[windows["point"].isin(client["point"])]
        if client.empty or win.empty:
            continue
        low = client.iloc[0]
        one_server = direct[direct["level_workload"] == workload]["throughput_ops_mean"]
        # Service times at the lightest load, as the network's: under load a budgeted
        # middleware's per-request times include the waits of its throttled CPU (a queue,
        # not a service), and the heavy points' counts would dominate a mean over all.
        lightest = win[win["point"] == low["point"]]
        times = service_times(
            estimate.component_service_times_us(lightest if not lightest.empty else win),
            float(low["response_us_mean_mean"]),
            float(mwside.loc[low["point"], "response_us_mean_mean"]),
            float(one_server.max()) if not one_server.empty else None,
            server_trip_us=_server_trip_us(low),
        )
        middlewares = int(low["middlewares"])
        fitted[(setup, workload)] = Fit(
            network=network(times, workers, middlewares),
            times=times,
            workers=workers,
            middlewares=middlewares,
            client=client,
            server_from_direct=not one_server.empty and float(one_server.max()) > 0,
        )
    return fitted


def _server_trip_us(point: pd.Series) -> float:
    """The middleware-memcached round trip of a point in the study's time (µs): twice the
    run's one-way delay times its scale; 0 where the run had none."""
    one_way = pd.to_numeric(point.get("delays_ms.middleware_server"), errors="coerce")
    scale = pd.to_numeric(point.get("scale"), errors="coerce")
    if not (pd.notna(one_way) and pd.notna(scale) and one_way > 0):
        return 0.0
    return 2 * float(one_way) * 1e3 * float(scale)


def component(station: str) -> str:
    """The component a station stands for (`netthread2` -> `net-thread`)."""
    base = station.rstrip("0123456789")
    names = {"netthread": "net-thread", "workers": "workers"}
    return names.get(base, base)


def bottleneck(result: mva.MVAResult) -> str:
    """The component of the most utilised queueing station."""
    return component(result.bottleneck())


def bottleneck_phrase(read: str, write: str) -> str:
    """The bottlenecks of the read and the write network as LaTeX prose: one name when both
    are the same component."""
    if read == write:
        return rf"\texttt{{{read}}} for both reads and writes"
    return rf"\texttt{{{read}}} for reads and \texttt{{{write}}} for writes"


def components(result: mva.MVAResult) -> pd.DataFrame:
    """Per component: utilisation U (per server; a delay centre's mean number of busy
    servers), response time R per visit (ms) and mean number of jobs Q at the station."""
    rows = []
    for name, station in COMPONENTS.items():
        s = result.stations[station]
        rows.append(
            {
                "component": name,
                "U": s.utilization,
                "R": s.response_time * 1e3,
                "Q": s.queue_length,
            }
        )
    return pd.DataFrame(rows, columns=["component", *METRICS])


def nearest_clients(available: Iterable[int], targets: Sequence[int]) -> list[int]:
    """For each target client count, the nearest available one on a logarithmic scale (the
    grids double), each used once; fewer than the targets if fewer are available."""
    left = sorted({int(a) for a in available if a > 0})
    chosen = []
    for t in targets:
        if not left:
            break
        best = min(left, key=lambda a: (abs(math.log(a / t)), a))
        chosen.append(best)
        left.remove(best)
    return chosen


def beside_seed(
    ours: pd.DataFrame, seed: Mapping, seed_clients: Sequence[int], our_clients: Sequence[int]
) -> pd.DataFrame:
    """Per target client count and component: our U, R, Q (from `ours`: clients, component,
    U, R, Q) at the matched client count beside the seed's (Table 14 layout: metric ->
    component -> values per seed client count). NaN where either has none."""
    rows = []
    for i, target in enumerate(seed_clients):
        n = our_clients[i] if i < len(our_clients) else None
        for name in COMPONENTS:
            mine = ours[(ours["clients"] == n) & (ours["component"] == name)] if n else ours[:0]
            row: dict[str, object] = {"seed_clients": target, "clients": n, "component": name}
            for metric in METRICS:
                row[metric] = float(mine[metric].iloc[0]) if not mine.empty else math.nan
                values = seed.get(metric, {}).get(name) if isinstance(seed, Mapping) else None
                row[f"{metric}_seed"] = float(values[i]) if values else math.nan
            rows.append(row)
    return pd.DataFrame(rows)
