"""Open single-station queueing models: M/M/1 and M/M/m (Jain, Box 31.1 and 31.2).

Rates are per second and times in seconds; any consistent unit works.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp

from analysis.models import busy_period

QUANTILES = (0.5, 0.9, 0.95, 0.99)


class UnstableQueueError(ValueError):
    """Raised when the offered load reaches or exceeds the service capacity."""


def _check_rates(arrival_rate: float, service_rate: float, servers: int = 1) -> float:
    if not (arrival_rate > 0 and math.isfinite(arrival_rate)):
        raise ValueError(f"arrival rate must be a positive number, got {arrival_rate}")
    if not (service_rate > 0 and math.isfinite(service_rate)):
        raise ValueError(f"service rate must be a positive number, got {service_rate}")
    if servers < 1 or int(servers) != servers:
        raise ValueError(f"servers must be a positive integer, got {servers}")
    rho = arrival_rate / (servers * service_rate)
    # A μ estimated as some point's X/m puts that point at ρ = 1, which rounding may leave
    # a hair below it: there the formulas answer ~1e15 instead of "no steady state".
    if rho >= 1 or math.isclose(rho, 1.0, rel_tol=1e-9):
        raise UnstableQueueError(
            f"utilisation {rho:.6g} >= 1 (arrival rate {arrival_rate:g}, "
            f"capacity {servers * service_rate:g}/s): the queue has no steady state"
        )
    return rho


@dataclass(frozen=True)
class MM1Result:
    """Every M/M/1 metric of Jain's Box 31.1."""

    arrival_rate: float
    service_rate: float
    utilization: float
    prob_queueing: float
    mean_jobs_in_system: float
    std_jobs_in_system: float
    mean_jobs_in_queue: float
    std_jobs_in_queue: float
    mean_response_time: float
    std_response_time: float
    mean_waiting_time: float
    std_waiting_time: float
    response_time_quantiles: dict[str, float]
    waiting_time_quantiles: dict[str, float]
    mean_busy_period: float
    std_busy_period: float
    mean_jobs_per_busy_period: float
    std_jobs_per_busy_period: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def mm1(
    arrival_rate: float, service_rate: float, quantiles: tuple[float, ...] = QUANTILES
) -> MM1Result:
    """Solves an M/M/1 queue with arrival rate λ and service rate μ."""
    rho = _check_rates(arrival_rate, service_rate)
    mu = service_rate
    mean_r = 1 / (mu * (1 - rho))
    mean_w = rho / (mu * (1 - rho))
    busy = busy_period.mm1(arrival_rate, service_rate)
    return MM1Result(
        arrival_rate=arrival_rate,
        service_rate=service_rate,
        utilization=rho,
        prob_queueing=rho,
        mean_jobs_in_system=rho / (1 - rho),
        std_jobs_in_system=math.sqrt(rho) / (1 - rho),
        mean_jobs_in_queue=rho**2 / (1 - rho),
        std_jobs_in_queue=math.sqrt(rho**2 * (1 + rho - rho**2)) / (1 - rho),
        mean_response_time=mean_r,
        std_response_time=mean_r,
        mean_waiting_time=mean_w,
        std_waiting_time=math.sqrt((2 - rho) * rho) / (mu * (1 - rho)),
        response_time_quantiles={str(q): mean_r * math.log(1 / (1 - q)) for q in quantiles},
        waiting_time_quantiles={
            str(q): max(0.0, mean_w / rho * math.log(rho / (1 - q))) for q in quantiles
        },
        mean_busy_period=busy.mean_length,
        std_busy_period=busy.std_length,
        mean_jobs_per_busy_period=busy.mean_jobs,
        std_jobs_per_busy_period=busy.std_jobs,
    )


@dataclass(frozen=True)
class MMmResult:
    """M/M/m metrics of Jain's Box 31.2 (busy-period metrics have no closed form here)."""

    arrival_rate: float
    service_rate: float
    servers: int
    utilization: float
    prob_queueing: float
    p0: float
    mean_jobs_in_system: float
    std_jobs_in_system: float
    mean_jobs_in_queue: float
    std_jobs_in_queue: float
    mean_response_time: float
    std_response_time: float
    mean_waiting_time: float
    std_waiting_time: float
    response_time_quantiles: dict[str, float] = field(default_factory=dict)
    waiting_time_quantiles: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def erlang_c(offered_load: float, servers: int) -> tuple[float, float]:
    """Probability of queueing and p0 for offered load a = λ/μ on m servers (log-space sums)."""
    m = servers
    rho = offered_load / m
    log_terms = [n * math.log(offered_load) - gammaln(n + 1) for n in range(m)]
    log_tail = m * math.log(offered_load) - gammaln(m + 1) - math.log(1 - rho)
    log_norm = logsumexp([*log_terms, log_tail])
    p0 = math.exp(-log_norm)
    return math.exp(log_tail - log_norm), p0


def _mmm_response_cdf(t: float, mu: float, theta: float, pq: float) -> float:
    # R = S + W with S ~ Exp(μ) and W = 0 w.p. 1 − ϱ, else Exp(θ), θ = mμ(1 − ρ).
    no_wait = 1 - math.exp(-mu * t)
    if math.isclose(theta, mu, rel_tol=1e-12):
        with_wait = 1 - math.exp(-mu * t) * (1 + mu * t)
    else:
        with_wait = 1 - (theta * math.exp(-mu * t) - mu * math.exp(-theta * t)) / (theta - mu)
    return (1 - pq) * no_wait + pq * with_wait


def mmm(
    arrival_rate: float,
    service_rate: float,
    servers: int,
    quantiles: tuple[float, ...] = QUANTILES,
) -> MMmResult:
    """Solves an M/M/m queue: λ, per-server service rate μ, m servers (Erlang C)."""
    rho = _check_rates(arrival_rate, service_rate, servers)
    m, mu = int(servers), service_rate
    pq, p0 = erlang_c(arrival_rate / mu, m)
    mean_nq = rho * pq / (1 - rho)
    var_nq = rho * pq * (1 + rho - rho * pq) / (1 - rho) ** 2
    var_n = m * rho + rho * pq * ((1 + rho - rho * pq) / (1 - rho) ** 2 + m)
    mean_w = pq / (m * mu * (1 - rho))
    var_w = pq * (2 - pq) / (m**2 * mu**2 * (1 - rho) ** 2)
    theta = m * mu * (1 - rho)
    mean_r = 1 / mu + mean_w
    r_quantiles = {}
    for q in quantiles:
        hi = mean_r
        while _mmm_response_cdf(hi, mu, theta, pq) < q:
            hi *= 2
        r_quantiles[str(q)] = float(
            brentq(lambda t, q=q: _mmm_response_cdf(t, mu, theta, pq) - q, 0, hi, xtol=1e-15)
        )
    w_quantiles = {
        str(q): (max(0.0, mean_w / pq * math.log(pq / (1 - q))) if pq > 0 else 0.0)
        for q in quantiles
    }
    return MMmResult(
        arrival_rate=arrival_rate,
        service_rate=service_rate,
        servers=m,
        utilization=rho,
        prob_queueing=pq,
        p0=p0,
        mean_jobs_in_system=m * rho + mean_nq,
        std_jobs_in_system=math.sqrt(var_n),
        mean_jobs_in_queue=mean_nq,
        std_jobs_in_queue=math.sqrt(var_nq),
        mean_response_time=mean_r,
        std_response_time=math.sqrt(1 + pq * (2 - pq) / (m**2 * (1 - rho) ** 2)) / mu,
        mean_waiting_time=mean_w,
        std_waiting_time=math.sqrt(var_w),
        response_time_quantiles=r_quantiles,
        waiting_time_quantiles=w_quantiles,
    )
