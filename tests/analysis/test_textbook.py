"""Textbook examples with their printed values, and closed forms against the underlying chains."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.models import mva, queueing
from analysis.models.mva import Network, Station
from tests.analysis.networks import jain_34_2

# Jain, Table 34.1 (MVA results for Example 34.2): N, R_cpu, R_A, R_B, R, X, Q_cpu, Q_A, Q_B.
JAIN_TABLE_34_1 = [
    (1, 0.125, 0.300, 0.200, 6.000, 0.100, 0.200, 0.300, 0.100),
    (2, 0.150, 0.390, 0.220, 7.400, 0.175, 0.421, 0.684, 0.193),
    (3, 0.178, 0.505, 0.239, 9.088, 0.229, 0.651, 1.158, 0.273),
    (4, 0.206, 0.647, 0.255, 11.051, 0.266, 0.878, 1.721, 0.338),
    (5, 0.235, 0.816, 0.268, 13.256, 0.290, 1.088, 2.365, 0.388),
    (17, 0.370, 3.962, 0.300, 47.045, 0.333, 1.974, 13.195, 0.499),
    (18, 0.372, 4.259, 0.300, 50.032, 0.333, 1.981, 14.187, 0.499),
    (19, 0.373, 4.556, 0.300, 53.022, 0.333, 1.987, 15.181, 0.500),
    (20, 0.373, 4.854, 0.300, 56.016, 0.333, 1.991, 16.177, 0.500),
]


@pytest.mark.parametrize("row", JAIN_TABLE_34_1, ids=lambda r: f"N={r[0]}")
def test_jain_table_34_1(row: tuple[float, ...]) -> None:
    n, r_cpu, r_a, r_b, r, x, q_cpu, q_a, q_b = row
    res = mva.solve(jain_34_2(), int(n), think_time=4.0)
    st = res.stations
    got = [
        st["cpu"].response_time,
        st["disk_a"].response_time,
        st["disk_b"].response_time,
        res.response_time,
        res.throughput,
        st["cpu"].queue_length,
        st["disk_a"].queue_length,
        st["disk_b"].queue_length,
    ]
    for ours, printed in zip(got, [r_cpu, r_a, r_b, r, x, q_cpu, q_a, q_b], strict=True):
        assert ours == pytest.approx(printed, abs=0.0006)


def test_jain_example_35_5_convolution_network() -> None:
    # Jain, Example 35.5: D = 0.78, 2.34, 1.56 s, Z = 4.68 s, N = 3 -> X = 0.264/s,
    # U = 0.206, 0.618, 0.412, R = 6.694 s.
    net = Network(
        (
            Station("cpu", "queue", 0.78),
            Station("disk_a", "queue", 2.34),
            Station("disk_b", "queue", 1.56),
        )
    )
    res = mva.solve(net, 3, think_time=4.68)
    assert res.throughput == pytest.approx(0.264, abs=0.0006)
    assert res.response_time == pytest.approx(6.694, abs=0.0006)
    assert res.stations["cpu"].utilization == pytest.approx(0.206, abs=0.0006)
    # Jain multiplies the rounded X = 0.264 by D, hence the looser tolerance.
    assert res.stations["disk_a"].utilization == pytest.approx(0.618, abs=0.001)
    assert res.stations["disk_b"].utilization == pytest.approx(0.412, abs=0.0006)
    assert res.bottleneck() == "disk_a"


def test_jain_gateway_mm1() -> None:
    # Jain, Example 31.1: 125 packets/s, 2 ms per packet.
    res = queueing.mm1(125, 500)
    assert res.utilization == pytest.approx(0.25)
    assert res.mean_jobs_in_system == pytest.approx(0.33, abs=0.005)
    assert res.mean_response_time == pytest.approx(2.67e-3, abs=0.01e-3)


def _birth_death(lam: float, mu: float, m: int, size: int = 20000) -> np.ndarray:
    n = np.arange(size)
    rates = np.minimum(n, m) * mu
    log_p = np.concatenate([[0.0], np.cumsum(np.log(lam) - np.log(rates[1:]))])
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


@pytest.mark.parametrize("lam,mu,m", [(0.7, 1.0, 1), (10, 3, 4), (50, 1, 64), (9.5, 1, 10)])
def test_closed_forms_match_stationary_distribution(lam: float, mu: float, m: int) -> None:
    p = _birth_death(lam, mu, m)
    n = np.arange(len(p))
    nq = np.maximum(n - m, 0)
    res = queueing.mm1(lam, mu) if m == 1 else queueing.mmm(lam, mu, m)
    assert res.mean_jobs_in_system == pytest.approx((n * p).sum(), rel=1e-9)
    assert res.std_jobs_in_system == pytest.approx(
        math.sqrt((n**2 * p).sum() - (n * p).sum() ** 2), rel=1e-9
    )
    assert res.mean_jobs_in_queue == pytest.approx((nq * p).sum(), rel=1e-9)
    assert res.std_jobs_in_queue == pytest.approx(
        math.sqrt((nq**2 * p).sum() - (nq * p).sum() ** 2), rel=1e-9
    )
    assert res.prob_queueing == pytest.approx(p[m:].sum(), rel=1e-9)
    # Little's law on both the system and the queue.
    assert res.mean_response_time * lam == pytest.approx(res.mean_jobs_in_system, rel=1e-12)
    assert res.mean_waiting_time * lam == pytest.approx(res.mean_jobs_in_queue, rel=1e-12)


@pytest.mark.parametrize("lam,mu,m", [(0.7, 1.0, 1), (10, 3, 4), (9.5, 1, 10)])
def test_response_time_quantiles_by_sampling(lam: float, mu: float, m: int) -> None:
    # The FCFS response time is service plus a wait that is 0 with probability 1 − ϱ and
    # otherwise exponential with rate mμ(1 − ρ); sample it and compare quantiles and moments.
    res = queueing.mm1(lam, mu) if m == 1 else queueing.mmm(lam, mu, m)
    rng = np.random.default_rng(7)
    size = 400_000
    theta = m * mu * (1 - lam / (m * mu))
    waits = np.where(rng.random(size) < res.prob_queueing, rng.exponential(1 / theta, size), 0)
    resp = rng.exponential(1 / mu, size) + waits
    for q, value in res.response_time_quantiles.items():
        assert value == pytest.approx(np.quantile(resp, float(q)), rel=0.02)
    assert res.std_response_time == pytest.approx(resp.std(), rel=0.02)
    assert res.std_waiting_time == pytest.approx(waits.std(), rel=0.02)


def test_mm1_busy_period_by_simulation() -> None:
    # Busy periods of an M/M/1 queue, simulated event by event.
    lam, mu = 0.6, 1.0
    res = queueing.mm1(lam, mu)
    rng = np.random.default_rng(3)
    lengths, served = [], []
    for _ in range(40000):
        t, jobs, count = 0.0, 1, 1
        while jobs:
            dt = rng.exponential(1 / (lam + mu))
            t += dt
            if rng.random() < lam / (lam + mu):
                jobs += 1
                count += 1
            else:
                jobs -= 1
        lengths.append(t)
        served.append(count)
    assert res.mean_busy_period == pytest.approx(np.mean(lengths), rel=0.03)
    assert res.std_busy_period == pytest.approx(np.std(lengths), rel=0.06)
    assert res.mean_jobs_per_busy_period == pytest.approx(np.mean(served), rel=0.03)
    assert res.std_jobs_per_busy_period == pytest.approx(np.std(served), rel=0.06)


def test_unstable_queue_is_rejected() -> None:
    with pytest.raises(queueing.UnstableQueueError, match="utilisation"):
        queueing.mm1(5, 5)
    with pytest.raises(queueing.UnstableQueueError):
        queueing.mmm(10, 2, 5)
    # μ taken as the point's own X/m: ρ is 1 up to rounding (0.9999999999999999 here).
    with pytest.raises(queueing.UnstableQueueError):
        queueing.mmm(1950.3, 1950.3 / 3, 3)
    with pytest.raises(ValueError, match="arrival rate"):
        queueing.mm1(-1, 5)


@pytest.mark.parametrize("z", [0.0, 2.0])
def test_mva_lies_within_bounds(z: float) -> None:
    net = jain_34_2()
    for n in (1, 2, 5, 10, 30, 100):
        res = mva.solve(net, n, z)
        b = mva.bounds(net, n, z)
        eps = 1e-12
        assert b.throughput_lower - eps <= res.throughput <= b.throughput_upper + eps
        assert b.balanced_throughput_lower - eps <= res.throughput
        assert res.throughput <= b.balanced_throughput_upper + eps
        assert b.response_time_lower - eps <= res.response_time <= b.response_time_upper + eps
        assert b.balanced_response_time_lower - eps <= res.response_time
        assert res.response_time <= b.balanced_response_time_upper + eps
    b = mva.bounds(net, 1, 4.0)
    # D = 2 + 3 + 1 = 6 s, D_max = 3 s (disk A): N* = (6 + 4) / 3.
    assert b.knee == pytest.approx(10 / 3)


def test_multi_server_bounds_use_per_server_capacity() -> None:
    net = Network((Station("pool", "queue", 1.0, 1, 4), Station("cpu", "queue", 0.1)))
    b = mva.bounds(net, 100, 0.0)
    assert b.throughput_upper == pytest.approx(4.0)
    assert mva.solve(net, 100).throughput <= b.throughput_upper * (1 + 1e-12)
    assert math.isnan(b.balanced_throughput_upper)


@pytest.mark.parametrize("clients", [3, 20, 60, 200])
def test_saturated_multi_server_station_matches_finite_source_chain(clients: int) -> None:
    # Machine repairman: N sources thinking Z, one m-server station; its birth-death chain
    # gives the exact answer. Near saturation MVA's p0 loses precision and the solver switches.
    m, s, z = 8, 1.0, 2.0
    net = Network((Station("crew", "queue", s, 1, m),))
    n = np.arange(clients + 1)
    log_p = np.cumsum(
        np.concatenate([[0.0], np.log((clients - n[:-1]) / z) - np.log(np.minimum(n[1:], m) / s)])
    )
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    expected_x = float((np.minimum(n, m) / s * p).sum())
    expected_q = float((n * p).sum())
    res = mva.solve(net, clients, z)
    assert res.throughput == pytest.approx(expected_x, rel=1e-9)
    assert res.stations["crew"].queue_length == pytest.approx(expected_q, rel=1e-9)
    if clients == 200:
        assert mva.solve_all(net, clients, z)[-1].unstable
