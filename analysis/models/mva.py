"""Exact mean value analysis of single-class closed queueing networks.

Stations are delay centres (infinite servers), single-server queues, or multi-server queues
solved exactly as load-dependent stations through their marginal probabilities (Bolch et al.,
Queueing Networks and Markov Chains, §8.2). Clients cycle through the network and think for Z
between requests. Times are in seconds; any consistent unit works.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import yaml
from scipy.special import logsumexp

Kind = Literal["queue", "delay"]


class NetworkError(ValueError):
    """A network description that cannot be solved."""


@dataclass(frozen=True)
class Station:
    name: str
    kind: Kind
    service_time: float
    visits: float = 1.0
    servers: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("queue", "delay"):
            raise NetworkError(f"station {self.name!r}: kind must be 'queue' or 'delay'")
        if not (self.service_time >= 0 and math.isfinite(self.service_time)):
            raise NetworkError(f"station {self.name!r}: service_time must be >= 0")
        if not (self.visits >= 0 and math.isfinite(self.visits)):
            raise NetworkError(f"station {self.name!r}: visits must be >= 0")
        if self.servers < 1 or int(self.servers) != self.servers:
            raise NetworkError(f"station {self.name!r}: servers must be a positive integer")

    @property
    def demand(self) -> float:
        """Service demand per job cycle, D = V·S."""
        return self.visits * self.service_time


@dataclass(frozen=True)
class Network:
    stations: tuple[Station, ...]

    def __post_init__(self) -> None:
        if not self.stations:
            raise NetworkError("a network needs at least one station")
        names = [s.name for s in self.stations]
        if len(set(names)) != len(names):
            raise NetworkError(f"station names must be unique: {names}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], source: str = "network") -> Network:
        raw = data.get("stations") if isinstance(data, Mapping) else None
        if not isinstance(raw, list):
            raise NetworkError(f"{source}: expected a mapping with a list 'stations'")
        stations = []
        for i, entry in enumerate(raw):
            if not isinstance(entry, Mapping):
                raise NetworkError(f"{source}: station {i} is not a mapping")
            unknown = set(entry) - {"name", "kind", "service_time", "visits", "servers"}
            if unknown:
                raise NetworkError(f"{source}: station {i} has unknown keys {sorted(unknown)}")
            try:
                stations.append(
                    Station(
                        name=str(entry["name"]),
                        kind=entry.get("kind", "queue"),  # type: ignore[arg-type]
                        service_time=float(entry["service_time"]),  # type: ignore[arg-type]
                        visits=float(entry.get("visits", 1)),  # type: ignore[arg-type]
                        servers=int(entry.get("servers", 1)),  # type: ignore[call-overload]
                    )
                )
            except KeyError as err:
                raise NetworkError(f"{source}: station {i} lacks {err.args[0]!r}") from None
            except (TypeError, ValueError) as err:
                raise NetworkError(f"{source}: station {i}: {err}") from None
        return cls(tuple(stations))

    @classmethod
    def load(cls, path: str | Path) -> Network:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as err:
            raise NetworkError(f"{path}: cannot read network: {err}") from None
        return cls.from_mapping(data, str(path))


@dataclass(frozen=True)
class StationResult:
    kind: Kind
    servers: int
    response_time: float  # per visit
    residence_time: float  # per job cycle, V·R
    queue_length: float
    utilization: float  # per server; a delay centre reports its mean number of busy servers
    throughput: float
    demand: float


@dataclass(frozen=True)
class MVAResult:
    clients: int
    think_time: float
    throughput: float
    response_time: float  # per cycle, think time excluded
    stations: dict[str, StationResult] = field(default_factory=dict)
    unstable: bool = False  # marginal probabilities went negative (near-saturated multi-server)

    def bottleneck(self) -> str:
        """The queueing station with the highest per-server utilisation."""
        queues = [name for name, r in self.stations.items() if r.kind == "queue"]
        return max(queues or self.stations, key=lambda name: self.stations[name].utilization)

    def to_dict(self) -> dict[str, object]:
        return {
            "clients": self.clients,
            "think_time": self.think_time,
            "throughput": self.throughput,
            "response_time": self.response_time,
            "bottleneck": self.bottleneck(),
            "unstable": self.unstable,
            "stations": {
                name: {
                    "kind": r.kind,
                    "servers": r.servers,
                    "response_time": r.response_time,
                    "residence_time": r.residence_time,
                    "queue_length": r.queue_length,
                    "utilization": r.utilization,
                    "throughput": r.throughput,
                    "demand": r.demand,
                }
                for name, r in self.stations.items()
            },
        }


def solve_all(network: Network, clients: int, think_time: float = 0.0) -> list[MVAResult]:
    """Solutions for every population 1..clients (exact MVA is a recursion over them)."""
    if clients < 1 or int(clients) != clients:
        raise NetworkError(f"clients must be a positive integer, got {clients}")
    if think_time < 0 or not math.isfinite(think_time):
        raise NetworkError(f"think time must be >= 0, got {think_time}")
    st = network.stations
    k = len(st)
    queue = [0.0] * k
    # p[i][j]: probability of j jobs at multi-server station i, for j < m_i.
    p = [[1.0] + [0.0] * (s.servers - 1) if _multi(s) else [] for s in st]
    results = []
    unstable = False
    for n in range(1, int(clients) + 1):
        resp = [0.0] * k
        for i, s in enumerate(st):
            if s.kind == "delay":
                resp[i] = s.service_time
            elif s.servers == 1:
                resp[i] = s.service_time * (1 + queue[i])
            else:
                m = s.servers
                extra = sum((m - j - 1) * p[i][j] for j in range(m - 1))
                resp[i] = s.service_time / m * (1 + queue[i] + extra)
        cycle = sum(s.visits * r for s, r in zip(st, resp, strict=True))
        x = n / (think_time + cycle) if think_time + cycle > 0 else math.inf
        queue = [x * s.visits * r for s, r in zip(st, resp, strict=True)]
        for i, s in enumerate(st):
            if not _multi(s):
                continue
            m, load = s.servers, x * s.demand
            new = [0.0] * m
            for j in range(1, m):
                new[j] = load / j * p[i][j - 1]
            new[0] = 1 - (load + sum((m - j) * new[j] for j in range(1, m))) / m
            # A tiny or negative p0 is a difference of nearly equal numbers: precision is gone.
            unstable |= new[0] < 1e-6
            p[i] = new
        stations = {}
        for i, s in enumerate(st):
            xi = x * s.visits
            util = xi * s.service_time / (s.servers if s.kind == "queue" else 1)
            stations[s.name] = StationResult(
                kind=s.kind,
                servers=s.servers,
                response_time=resp[i],
                residence_time=s.visits * resp[i],
                queue_length=queue[i],
                utilization=util,
                throughput=xi,
                demand=s.demand,
            )
        results.append(MVAResult(n, think_time, x, cycle, stations, unstable))
    return results


def solve(network: Network, clients: int, think_time: float = 0.0) -> MVAResult:
    """Exact solution for `clients` jobs with think time Z.

    MVA with marginal probabilities loses precision when a multi-server station nears
    saturation (p0 is a difference of nearly equal numbers); the result is then recomputed
    with the convolution algorithm in log space, which is exact and stable.
    """
    result = solve_all(network, clients, think_time)[-1]
    return convolution(network, clients, think_time) if result.unstable else result


def _log_factors(demand: float, servers: float, n: int) -> np.ndarray:
    """log F(j), j = 0..n: F(j) = D^j / prod_{i<=j} min(i, m) (m = inf for a delay centre)."""
    out = np.full(n + 1, -np.inf)
    out[0] = 0.0
    if demand > 0:
        j = np.arange(1, n + 1)
        out[1:] = j * math.log(demand) - np.cumsum(np.log(np.minimum(j, servers)))
    return out


def _log_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """c[k] = log sum_{j<=k} exp(a[j] + b[k-j]), all k at once (one logsumexp per row of the
    n × n matrix of terms, -inf above the anti-diagonal)."""
    n = len(a)
    k = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    terms = np.where(j <= k, a[None, :] + b[np.clip(k - j, 0, n - 1)], -np.inf)
    return logsumexp(terms, axis=1)


def convolution(network: Network, clients: int, think_time: float = 0.0) -> MVAResult:
    """Exact solution by Buzen's convolution algorithm with load-dependent factors, in log
    space so that no scaling is needed."""
    n = int(clients)
    if n < 1:
        raise NetworkError(f"clients must be a positive integer, got {clients}")
    st = network.stations
    factors = [_log_factors(s.demand, math.inf if s.kind == "delay" else s.servers, n) for s in st]
    think = _log_factors(think_time, math.inf, n)
    total = think
    for f in factors:
        total = _log_convolve(total, f)
    x = math.exp(total[n - 1] - total[n])
    stations = {}
    cycle = 0.0
    # Convolution of every station but i, from prefix and suffix products: O(K) instead of
    # O(K²) convolutions.
    prefix = [think]
    for f in factors[:-1]:
        prefix.append(_log_convolve(prefix[-1], f))
    suffix = [_log_factors(0.0, math.inf, n)]
    for f in reversed(factors[1:]):
        suffix.append(_log_convolve(suffix[-1], f))
    suffix.reverse()
    for i, s in enumerate(st):
        rest = _log_convolve(prefix[i], suffix[i])
        j = np.arange(n + 1)
        p = np.exp(factors[i] + rest[n - j] - total[n])
        q = float((j * p).sum())
        xi = x * s.visits
        resp = q / xi if xi > 0 else s.service_time
        cycle += s.visits * resp
        stations[s.name] = StationResult(
            kind=s.kind,
            servers=s.servers,
            response_time=resp,
            residence_time=s.visits * resp,
            queue_length=q,
            utilization=xi * s.service_time / (s.servers if s.kind == "queue" else 1),
            throughput=xi,
            demand=s.demand,
        )
    return MVAResult(n, think_time, x, cycle, stations, False)


def _multi(s: Station) -> bool:
    return s.kind == "queue" and s.servers > 1


@dataclass(frozen=True)
class Bounds:
    """Asymptotic and balanced-system bounds (Jain §33; Lazowska et al. ch. 5)."""

    clients: int
    think_time: float
    total_demand: float
    max_demand: float
    knee: float  # N* = (D + Z) / D_max
    throughput_upper: float
    throughput_lower: float
    response_time_lower: float
    response_time_upper: float
    balanced_throughput_upper: float
    balanced_throughput_lower: float
    balanced_response_time_lower: float
    balanced_response_time_upper: float


def bounds(network: Network, clients: int, think_time: float = 0.0) -> Bounds:
    """Bounds on X(N) and R(N). Delay centres add to the think time; a station with m servers
    saturates at m/D, so D_max uses D/m while the total demand D uses D itself. Balanced bounds
    are NaN when a queue has several servers."""
    n, z = int(clients), think_time + sum(s.demand for s in network.stations if s.kind == "delay")
    queues = [s for s in network.stations if s.kind == "queue"]
    if not queues:
        raise NetworkError("bounds need at least one queueing station")
    d = sum(s.demand for s in queues)
    d_max = max(s.demand / s.servers for s in queues)
    d_avg = d / len(queues)
    if d_max <= 0:
        raise NetworkError("bounds need a queueing station with positive demand")
    x_up = min(n / (d + z), 1 / d_max)
    x_low = n / (n * d + z)
    r_low = max(d, n * d_max - z)
    r_up = n * d
    if all(s.servers == 1 for s in queues):
        bal_x_up = min(1 / d_max, n / (d + z + (n - 1) * d_avg / (1 + z / d)))
        bal_x_low = n / (d + z + (n - 1) * d_max / (1 + z / (n * d)))
        bal_r_low = max(n * d_max - z, d + (n - 1) * d_avg / (1 + z / d))
        bal_r_up = d + (n - 1) * d_max / (1 + z / (n * d))
    else:
        # The balanced-job argument assumes single-server queues.
        bal_x_up = bal_x_low = bal_r_low = bal_r_up = math.nan
    return Bounds(
        clients=n,
        think_time=z,
        total_demand=d,
        max_demand=d_max,
        knee=(d + z) / d_max,
        throughput_upper=x_up,
        throughput_lower=x_low,
        response_time_lower=r_low,
        response_time_upper=r_up,
        balanced_throughput_upper=bal_x_up,
        balanced_throughput_lower=bal_x_low,
        balanced_response_time_lower=bal_r_low,
        balanced_response_time_upper=bal_r_up,
    )


def network_from_stations(stations: Iterable[Station]) -> Network:
    return Network(tuple(stations))
