"""SimpleMQ's models on small hand-made tables whose answers are known in closed form."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest

from analysis.studies.s2015 import models


def point(clients: int, middlewares: int, workers: int, x: float, r_us: float) -> dict:
    return {
        "point": f"c{clients}-mw{middlewares}-w{workers}",
        "clients_total": clients,
        "middlewares": middlewares,
        "queue.workers": workers,
        "throughput_ops_mean": x,
        "response_us_mean_mean": r_us,
    }


def test_m_is_every_middlewares_workers_or_the_baselines_clients() -> None:
    points = pd.DataFrame([point(60, 2, 30, 1000, 60_000), point(40, 0, 16, 800, 50_000)])
    assert models.workers_total(points).tolist() == [60, 40]


def test_the_interactive_law_holds_where_x_is_n_over_r() -> None:
    # 60 clients, R = 50 ms: the law says 1,200 ops/s; 1,000 measured is 20 % below it.
    points = pd.DataFrame([point(60, 1, 30, 1200, 50_000), point(60, 1, 30, 1000, 50_000)])
    law = models.interactive_law(points)
    assert law["predicted_throughput_ops"].tolist() == pytest.approx([1200, 1200])
    assert law["relative_error"].abs().tolist()[0] == pytest.approx(0, abs=1e-12)
    assert abs(law["relative_error"].tolist()[1]) == pytest.approx(0.2)


def test_mu_is_the_fastest_pools_throughput_per_worker() -> None:
    points = pd.DataFrame([point(30, 1, 20, 1000, 1), point(120, 2, 60, 2400, 1)])
    assert models.service_rate(points) == pytest.approx(50.0)  # 1,000 / 20 beats 2,400 / 120
    with pytest.raises(ValueError, match="positive throughput"):
        models.service_rate(pd.DataFrame([point(30, 1, 20, 0, 1)]))


def test_mmm_at_light_load_predicts_one_service_time_and_refuses_saturation() -> None:
    # μ = 100 ops/s per worker, 10 workers: at λ = 1 nobody waits, R = 1/μ = 10 ms.
    points = pd.DataFrame([point(1, 1, 10, 1.0, 10_000), point(50, 1, 10, 1000.0, 50_000)])
    table = models.mmm_table(points, mu=100.0)
    light, saturated = table.iloc[0], table.iloc[1]
    assert light["stable"] and light["predicted_us"] == pytest.approx(10_000, rel=1e-6)
    assert light["relative_error"] == pytest.approx(0, abs=1e-6)
    assert not saturated["stable"] and math.isnan(saturated["predicted_us"])
    assert saturated["rho"] == pytest.approx(1.0)


def test_the_database_demand_is_its_cores_over_the_baselines_maximum() -> None:
    baseline = pd.DataFrame([point(10, 0, 1, 1500, 1), point(80, 0, 1, 2000, 1)])
    assert models.database_demand(baseline, cores=2) == pytest.approx(0.001)
    with pytest.raises(ValueError, match="no positive throughput"):
        models.database_demand(baseline.iloc[0:0], cores=2)


DEMANDS = models.Demands(network=0.002, distributor=0.0001, database=0.001, database_cores=2)


def test_the_network_alone_takes_one_cycle_and_saturates_at_the_database() -> None:
    one = models.predict(DEMANDS, clients=1, workers=60)
    assert one.throughput == pytest.approx(1 / 0.0031)  # X(1) = 1 / ΣD
    many = models.predict(DEMANDS, clients=60, workers=60)
    assert many.throughput == pytest.approx(2000, rel=0.01)  # cores / D_db
    assert many.bottleneck() == "database"


def test_clients_beyond_the_workers_only_wait_in_the_queue() -> None:
    at_workers = models.predict(DEMANDS, clients=10, workers=10)
    beyond = models.predict(DEMANDS, clients=40, workers=10)
    assert beyond.throughput == pytest.approx(at_workers.throughput)
    assert beyond.response_time == pytest.approx(40 / at_workers.throughput)


def test_the_knee_is_total_demand_over_the_bottlenecks() -> None:
    # ΣD = 3.1 ms, the database's 0.5 ms per core is the largest: N* = 6.2.
    assert models.knee(DEMANDS) == pytest.approx(6.2)


def test_mva_table_sets_prediction_beside_measurement() -> None:
    points = pd.DataFrame([point(1, 1, 30, 300, 3300), point(60, 1, 30, 1900, 31_000)])
    table = models.mva_table(points, DEMANDS)
    assert table["predicted_ops"].iloc[0] == pytest.approx(1 / 0.0031)
    assert table["relative_error"].iloc[0] == pytest.approx((1 / 0.0031 - 300) / 300)
    assert table["bottleneck"].tolist()[1] == "database"


def test_the_factorial_recovers_each_factors_effect() -> None:
    # y = 1000 + 200·workers - 100·clients (coded ±1), nothing else, two repetitions with
    # ±10 of noise: the design finds those effects and no other.
    levels = {
        "queue.workers": (20, 60),
        "middlewares": (1, 2),
        "clients_total": (30, 120),
        "queue.message_size": (200, 2000),
    }
    rows = []
    for rep, noise in ((1, 10.0), (2, -10.0)):
        for combo in itertools.product((0, 1), repeat=4):
            row = {f: levels[f][c] for f, c in zip(levels, combo, strict=True)}
            coded = {f: 2 * c - 1 for f, c in zip(levels, combo, strict=True)}
            y = 1000 + 200 * coded["queue.workers"] - 100 * coded["clients_total"] + noise
            rows.append({**row, "repetition": rep, "throughput_ops_mean": y})
    result = models.factorial(pd.DataFrame(rows))
    effects = result.effects
    assert effects["mean"] == pytest.approx(1000)
    workers, clients = "queue.workers", "clients_total"
    assert (effects[workers], effects[clients]) == pytest.approx((200, -100))
    assert result.significant()[workers] and result.significant()[clients]
    others = [t for t in result.terms if t not in (workers, clients)]
    assert all(abs(effects[t]) < 1e-9 for t in others)
