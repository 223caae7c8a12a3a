"""Busy periods of a single-server queue with Poisson arrivals (M/G/1, M/M/1).

A busy period starts when a job arrives at an empty server and ends when the server next
empties. Its length Y and the number of jobs N served in it follow from one service time
and the busy periods started by the jobs that arrive during it (Kleinrock, Queueing
Systems vol. 1, §5.9 for Y and §5.10 for N; Gross & Harris, Fundamentals of Queueing
Theory, busy-period analysis of M/M/1 and M/G/1):

    E[Y] = x̄ / (1 − ρ)            Var[Y] = (σ_b² + ρ·x̄²) / (1 − ρ)³
    E[N] = 1 / (1 − ρ)            Var[N] = (ρ + λ²·σ_b²) / (1 − ρ)³

with x̄ and σ_b² the mean and variance of a service time and ρ = λ·x̄. For exponential
service (M/M/1: x̄ = 1/μ, σ_b² = 1/μ²) these are E[Y] = 1/(μ − λ),
Var[Y] = (1 + ρ)/(μ²(1 − ρ)³) and Var[N] = ρ(1 + ρ)/(1 − ρ)³.

`simulate` checks them by a discrete-event simulation of the queue, one busy period at a
time. Any consistent time unit works.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BusyPeriod:
    """Mean and standard deviation of a busy period's length and of the jobs it serves."""

    mean_length: float
    std_length: float
    mean_jobs: float
    std_jobs: float


def _check(arrival_rate: float, mean_service: float, std_service: float) -> float:
    for name, v in (("arrival rate", arrival_rate), ("mean service time", mean_service)):
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{name} must be a positive number, got {v}")
    if not (std_service >= 0 and math.isfinite(std_service)):
        raise ValueError(f"service time standard deviation must be >= 0, got {std_service}")
    rho = arrival_rate * mean_service
    if rho >= 1:
        raise ValueError(f"utilisation {rho:.6g} >= 1: a busy period never ends on average")
    return rho


def mg1(arrival_rate: float, mean_service: float, std_service: float) -> BusyPeriod:
    """Busy-period moments of an M/G/1 queue (Kleinrock vol. 1, §5.9 and §5.10)."""
    rho = _check(arrival_rate, mean_service, std_service)
    var_b = std_service**2
    return BusyPeriod(
        mean_length=mean_service / (1 - rho),
        std_length=math.sqrt((var_b + rho * mean_service**2) / (1 - rho) ** 3),
        mean_jobs=1 / (1 - rho),
        std_jobs=math.sqrt((rho + arrival_rate**2 * var_b) / (1 - rho) ** 3),
    )


def mm1(arrival_rate: float, service_rate: float) -> BusyPeriod:
    """Busy-period moments of an M/M/1 queue: M/G/1 with exponential service."""
    if not (service_rate > 0 and math.isfinite(service_rate)):
        raise ValueError(f"service rate must be a positive number, got {service_rate}")
    return mg1(arrival_rate, 1 / service_rate, 1 / service_rate)


@dataclass(frozen=True)
class Simulated:
    lengths: np.ndarray  # one per busy period
    jobs: np.ndarray  # jobs served per busy period

    def summary(self) -> BusyPeriod:
        return BusyPeriod(
            mean_length=float(self.lengths.mean()),
            std_length=float(self.lengths.std(ddof=1)),
            mean_jobs=float(self.jobs.mean()),
            std_jobs=float(self.jobs.std(ddof=1)),
        )


class _Stream:
    """Draws in blocks, so the event loop does not call the generator per event."""

    def __init__(self, draw: Callable[[int], np.ndarray], block: int = 1 << 15) -> None:
        self._draw, self._block = draw, block
        self._values: list[float] = []
        self._next = 0

    def __call__(self) -> float:
        if self._next == len(self._values):
            self._values = self._draw(self._block).tolist()
            self._next = 0
        self._next += 1
        return self._values[self._next - 1]


def simulate(
    arrival_rate: float,
    service_rate: float,
    periods: int,
    seed: int,
    service: Callable[[np.random.Generator, int], np.ndarray] | None = None,
) -> Simulated:
    """Simulates `periods` busy periods of a FCFS single-server queue with Poisson arrivals
    at `arrival_rate`. Service times are exponential with `service_rate` unless `service`
    draws them (generator, count -> array). Events are arrivals and departures in time
    order; a period starts with one job arriving at an empty server and ends at the first
    departure that leaves the server empty."""
    if periods < 2:
        raise ValueError(f"at least two busy periods are needed, got {periods}")
    if service is None:
        _check(arrival_rate, 1 / service_rate, 1 / service_rate)
    rng = np.random.default_rng(seed)
    gap = _Stream(lambda n: rng.exponential(1 / arrival_rate, n))
    draw = service or (lambda g, n: g.exponential(1 / service_rate, n))
    work = _Stream(lambda n: np.asarray(draw(rng, n), dtype=float))
    lengths = np.empty(periods)
    jobs = np.empty(periods, dtype=np.int64)
    for i in range(periods):
        departure = work()  # the job that opens the period arrives at time 0
        arrival = gap()
        waiting, served = 0, 1
        while True:
            if arrival < departure:
                waiting += 1
                arrival += gap()
            elif waiting:
                waiting -= 1
                served += 1
                departure += work()
            else:
                break
        lengths[i], jobs[i] = departure, served
    return Simulated(lengths=lengths, jobs=jobs)
