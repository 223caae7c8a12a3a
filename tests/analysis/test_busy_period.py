"""Busy-period moments of M/G/1 and M/M/1 against a seeded discrete-event simulation, and
seed 001's printed busy period (Table 1) against both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from analysis.models import busy_period, queueing

ROOT = Path(__file__).resolve().parents[2]
MM1 = yaml.safe_load((ROOT / "workflows" / "reference2016.yaml").read_text())["models"]["mm1"]


def test_mm1_closed_forms_on_a_small_case() -> None:
    # λ = 1, μ = 2: ρ = 1/2, E[Y] = 1/(μ−λ) = 1, Var[Y] = (1+ρ)/(μ²(1−ρ)³) = 3,
    # E[N] = 2, Var[N] = ρ(1+ρ)/(1−ρ)³ = 6.
    b = busy_period.mm1(1.0, 2.0)
    assert b.mean_length == pytest.approx(1.0)
    assert b.std_length == pytest.approx(np.sqrt(3.0))
    assert b.mean_jobs == pytest.approx(2.0)
    assert b.std_jobs == pytest.approx(np.sqrt(6.0))


def test_mm1_queue_uses_the_same_busy_period() -> None:
    res = queueing.mm1(3.0, 5.0)
    b = busy_period.mm1(3.0, 5.0)
    assert (res.mean_busy_period, res.std_busy_period) == (b.mean_length, b.std_length)
    assert (res.mean_jobs_per_busy_period, res.std_jobs_per_busy_period) == (
        b.mean_jobs,
        b.std_jobs,
    )


def test_seed_mm1_busy_period_by_simulation() -> None:
    # Seed 001's λ and μ, per ms: the simulation agrees with the formula, not with 0.76 ms.
    lam, mu = MM1["arrival_rate"] / 1e3, MM1["service_rate"] / 1e3
    formula = busy_period.mm1(lam, mu)
    sim = busy_period.simulate(lam, mu, 200_000, seed=7).summary()
    assert sim.mean_length == pytest.approx(formula.mean_length, rel=0.02)
    assert sim.std_length == pytest.approx(formula.std_length, rel=0.04)
    assert sim.mean_jobs == pytest.approx(formula.mean_jobs, rel=0.02)
    assert sim.std_jobs == pytest.approx(formula.std_jobs, rel=0.04)
    assert formula.std_length == pytest.approx(1.145, abs=0.001)
    printed = MM1["predicted"]["std_busy_period"]
    assert abs(sim.std_length - printed) / printed > 0.3
    # The seed's other busy-period values are the formula's.
    assert formula.mean_length == pytest.approx(MM1["predicted"]["mean_busy_period"], abs=0.005)
    assert formula.std_jobs == pytest.approx(
        MM1["predicted"]["std_jobs_per_busy_period"], abs=0.005
    )


def test_mg1_deterministic_service_by_simulation() -> None:
    # M/D/1: σ_b = 0, so Var[Y] = ρ·x̄²/(1−ρ)³ and Var[N] = ρ/(1−ρ)³.
    lam, x = 0.5, 1.0
    formula = busy_period.mg1(lam, x, 0.0)
    assert formula.std_jobs == pytest.approx(np.sqrt(0.5 / 0.5**3))
    sim = busy_period.simulate(
        lam, 1 / x, 100_000, seed=11, service=lambda g, n: np.full(n, x)
    ).summary()
    assert sim.mean_length == pytest.approx(formula.mean_length, rel=0.02)
    assert sim.std_length == pytest.approx(formula.std_length, rel=0.04)
    assert sim.std_jobs == pytest.approx(formula.std_jobs, rel=0.04)


def test_simulation_is_reproducible_and_counts_jobs() -> None:
    a = busy_period.simulate(1.0, 2.0, 50, seed=1)
    b = busy_period.simulate(1.0, 2.0, 50, seed=1)
    assert np.array_equal(a.lengths, b.lengths) and np.array_equal(a.jobs, b.jobs)
    assert (a.jobs >= 1).all() and (a.lengths > 0).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: busy_period.mm1(2.0, 2.0), "utilisation"),
        (lambda: busy_period.mm1(-1.0, 2.0), "arrival rate"),
        (lambda: busy_period.mm1(1.0, 0.0), "service rate"),
        (lambda: busy_period.mg1(0.5, 1.0, -1.0), "standard deviation"),
        (lambda: busy_period.simulate(1.0, 2.0, 1, seed=0), "two busy periods"),
        (lambda: busy_period.simulate(3.0, 2.0, 10, seed=0), "utilisation"),
    ],
)
def test_bad_input_is_rejected(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
