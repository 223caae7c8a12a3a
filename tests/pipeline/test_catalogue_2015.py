"""The 2015 study's families (the `mq_` families of workflows/catalogue.yaml) plan into valid
SimpleMQ points at the seed's levels, each run on its own, and the plan refuses points whose
connections do not fit."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from mwlab.catalogue import (
    CatalogueError,
    Family,
    PlannedRun,
    calibration_plan,
    expand,
    load_catalogue,
    measured_again_when_unstable,
)
from mwlab.plan_tables import catalogue_macros, render
from testbed.point import HARNESS_CONNECTIONS, Point

LOCAL = {"profile": "test", "hosts": "local", "run": {"repetitions": 1}}


def families_2015() -> dict[str, Family]:
    return {n: f for n, f in load_catalogue().items() if f.study == 2015}


def planned(profile: dict[str, Any] = LOCAL) -> list[PlannedRun]:
    return expand(families_2015(), profile)


def by_point(runs: list[PlannedRun], family: str) -> dict[str, Point]:
    return {r.point: Point.model_validate(r.spec) for r in runs if r.family == family}


def test_every_2015_point_is_a_simplemq_point_with_one_database() -> None:
    runs = planned()
    assert Counter(r.family for r in runs) == {
        "mq_db_baseline": 2 * 10,
        "mq_throughput": 3 * 5,
        "mq_scale_clients": 2 * 10,
        "mq_scale_workers": 2 * 10,
        "mq_factorial": 2**4,
        "mq_pop_strategy": 2 * 3,
        "mq_stability": 2,
    }
    for run in runs:
        point = Point.model_validate(run.spec)
        assert point.system == "simplemq" and point.servers == 1
        assert point.db_max_connections == point.db_connections + HARNESS_CONNECTIONS
        # The plan writes the worker count every middleware runs (testbed.point's default
        # where a family states none), in `queue`, not in the memcached middleware's settings.
        if point.middlewares:
            assert run.spec["queue"]["workers"] == point.queue_settings.workers
            assert "workers" not in run.spec["middleware"]


def test_the_levels_are_the_seeds() -> None:
    runs = planned()
    baseline = by_point(runs, "mq_db_baseline")
    assert baseline["size=small,clients=80"].clients_total == 80
    assert baseline["size=large,clients=60"].queue_settings.message_size == 2000
    assert all(p.middlewares == 0 and p.client_machines == 2 for p in baseline.values())
    # Table 2: workers are totals over the two middlewares.
    table2 = by_point(runs, "mq_throughput")
    cell = table2["workers=80,clients=60"]
    assert (cell.middlewares, cell.queue_settings.workers, cell.clients_total) == (2, 40, 60)
    assert cell.client_machines == 3
    factorial = by_point(runs, "mq_factorial")
    big = factorial["workers=60,middlewares=2,clients=120,size=2000"]
    assert big.db_connections == 120 and big.clients_total == 120
    stability = by_point(runs, "mq_stability")["size=small"]
    assert stability.queue_settings.preload == 5000 and stability.clients_total == 30
    pops = by_point(runs, "mq_pop_strategy")
    assert {p.queue_settings.pop for p in pops.values()} == {"skip_locked", "naive"}
    assert {p.queue_settings.mix for p in pops.values()} == {"shared_receiver"}


def test_the_plan_refuses_workers_beyond_max_connections() -> None:
    profile = {
        **LOCAL,
        "families": {"mq_throughput": {"fixed": {"queue": {"max_connections": 100}}}},
    }
    with pytest.raises(CatalogueError) as err:
        planned(profile)
    # 2 x 50 workers and the harness's connections do not fit 100.
    assert "mq_throughput" in str(err.value)
    assert "2 middlewares x 50 workers need 100" in str(err.value)


def test_the_2015_families_run_isolated_under_a_series_profile() -> None:
    runs = planned({**LOCAL, "run": {"repetitions": 1, "protocol": "series"}})
    assert runs and all(r.series is None for r in runs)
    assert {r.family for r in runs} == set(families_2015())


def test_a_profile_that_asks_a_2015_family_for_a_series_is_refused() -> None:
    profile = {**LOCAL, "families": {"mq_throughput": {"protocol": "series"}}}
    with pytest.raises(CatalogueError, match="mq_throughput runs isolated"):
        planned(profile)


def test_the_setup_tables_describe_the_2015_families() -> None:
    families = families_2015()
    runs = planned()
    rows = render(families, runs, LOCAL)
    assert "200-byte messages, mix static, pop skip locked" in rows
    assert "none: each client calls the database" in rows
    assert "SimpleMQ, 30 workers per middleware" in rows
    # A setting a factor varies is said to be varied, not printed at its first run's value.
    assert "mix shared receiver, pop as the factors set" in rows
    assert "messages of the sizes the factors set" in rows
    assert "SimpleMQ, workers as the factors set per middleware" in rows
    macros = catalogue_macros(families, runs, LOCAL)
    assert r"\newcommand{\CatMqThroughputWorkers}{30}" in macros
    assert r"\newcommand{\CatMqStabilityDataSize}{200}" in macros
    assert r"\newcommand{\CatMqDbBaselineWorkers}{--}" in macros


QUICK = {
    "profile": "quick-2015",
    "hosts": "emulated",
    "run": {"repetitions": 1},
    "scale": {"factor": 0.05, "model": True, "studies": {"2015": 0.2}},
}


def test_the_2015_families_run_at_their_studys_own_scale() -> None:
    """Under the scale model the 2015 points take the study's own s, its M4 machines and the
    dilated disk write (machines.yaml: 1 ms becomes PostgreSQL's commit_delay of 1 ms / s),
    the memcached families keep the profile's s."""
    runs = expand(load_catalogue(), QUICK, cores=2)
    mq = [r for r in runs if r.family.startswith("mq_")]
    assert mq and {r.spec["scale"] for r in mq} == {0.2}
    assert {r.spec["queue"]["commit_delay_ms"] for r in mq} == {5.0}
    assert all(r.scale_model == {"study": "2015"} for r in mq)
    # 0.3 ms one way at s = 1.
    assert {r.spec["delays_ms"]["client_server"] for r in mq} == {1.5}
    # (The scale check runs its points at s and 2s on purpose.)
    others = [r for r in runs if not r.family.startswith("mq_") and r.family != "scale_check"]
    assert {r.spec["scale"] for r in others} == {0.05}
    assert all("queue" not in r.spec for r in others)


def test_the_2015_calibration_target_runs_at_the_studys_scale() -> None:
    plan = calibration_plan(QUICK, cores=2)
    database = [r for r in plan if r.levels["target"] == "database_baseline_2015"]
    assert [float(r.levels["speed"]) for r in database] == [0.5, 1.0]
    for run in database:
        point = Point.model_validate(run.spec)
        assert point.scale == 0.2 and point.system == "simplemq" and point.clients_total == 80
        # The fitted server (PostgreSQL) at its level, the unfitted middleware at the bound.
        assert point.budgets_cores.server == pytest.approx(2 * 0.2 * float(run.levels["speed"]))
        assert point.queue_settings.commit_delay_ms == 5.0
    memcached = [r for r in plan if r.levels["target"] == "server_write_max"]
    assert memcached and {r.spec["scale"] for r in memcached} == {0.05}


def test_only_the_stability_run_keeps_its_trend() -> None:
    # A stability run measured again until no trend showed would select its result.
    families = load_catalogue()
    kept = {n for n in families if not measured_again_when_unstable(n, families)}
    assert kept == {"mq_stability"}
    assert not measured_again_when_unstable("calibration", families)
