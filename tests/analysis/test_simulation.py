"""A discrete-event simulation (SimPy) of a closed network with a multi-server station."""

from __future__ import annotations

import numpy as np
import simpy
from scipy import stats

from analysis.models import mva
from analysis.models.mva import Network, Station

NETWORK = Network(
    (
        Station("netthread", "queue", 0.2),
        Station("workers", "queue", 1.5, 1, 4),
        Station("server", "queue", 0.25),
        Station("wire", "delay", 0.3),
    )
)
CLIENTS, THINK = 10, 1.0


def simulate(horizon: float, warmup: float, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    env = simpy.Environment()
    resources = {
        s.name: simpy.Resource(env, capacity=s.servers)
        for s in NETWORK.stations
        if s.kind == "queue"
    }
    busy_area = dict.fromkeys(resources, 0.0)
    completions: list[tuple[float, float]] = []

    def visit(station: Station):
        service = rng.exponential(station.service_time)
        if station.kind == "delay":
            yield env.timeout(service)
            return
        with resources[station.name].request() as req:
            yield req
            start = env.now
            yield env.timeout(service)
            lo, hi = max(start, warmup), env.now
            if hi > lo:
                busy_area[station.name] += hi - lo

    def client():
        while True:
            yield env.timeout(rng.exponential(THINK))
            started = env.now
            for station in NETWORK.stations:
                yield from visit(station)
            if started >= warmup:
                completions.append((env.now, env.now - started))

    for _ in range(CLIENTS):
        env.process(client())
    env.run(until=horizon)
    span = horizon - warmup
    return {
        "throughput": len(completions) / span,
        "response_time": float(np.mean([r for _, r in completions])),
        **{
            f"U_{k}": v / span / NETWORK.stations[i].servers
            for i, (k, v) in enumerate(busy_area.items())
        },
    }


def test_mva_within_simulation_confidence_intervals() -> None:
    runs = [simulate(horizon=3000.0, warmup=100.0, seed=s) for s in range(8)]
    exact = mva.solve(NETWORK, CLIENTS, THINK)
    expected = {
        "throughput": exact.throughput,
        "response_time": exact.response_time,
        "U_netthread": exact.stations["netthread"].utilization,
        "U_workers": exact.stations["workers"].utilization,
        "U_server": exact.stations["server"].utilization,
    }
    t = stats.t.ppf(0.995, len(runs) - 1)
    for key, value in expected.items():
        sample = np.array([r[key] for r in runs])
        half = t * sample.std(ddof=1) / np.sqrt(len(sample))
        assert abs(sample.mean() - value) <= half, (
            f"{key}: MVA {value:.5g} outside 99% CI {sample.mean():.5g} ± {half:.3g}"
        )
    # The multi-server station is the bottleneck and it is far from idle.
    assert exact.bottleneck() == "workers"
    assert expected["U_workers"] > 0.5
