"""The closed network fitted to the baseline with middlewares (analysis.studies.s2018.
mva_middleware.fit) on the small baselines of conftest.py."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from analysis.models import mva
from analysis.scale_model import in_study_time, with_scale
from analysis.studies.s2018 import mva_middleware as mw

Baselines = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]


@pytest.fixture
def fitted(baselines: Baselines, base_windows: pd.DataFrame) -> dict:
    direct, points = baselines[:2]
    windows = in_study_time(with_scale(base_windows, points, "point"))
    windows = windows[windows["type"] != "all"]
    return mw.fit(in_study_time(points), windows, in_study_time(direct))


def test_fit_takes_the_largest_worker_count_and_its_lightest_load(fitted: dict) -> None:
    assert sorted(fitted) == [
        (s, w) for s in ("one_middleware", "two_middlewares") for w in ("read-only", "write-only")
    ]
    f = fitted[("one_middleware", "read-only")]
    assert (f.workers, f.middlewares) == (32, 1)
    assert f.client["clients_total"].tolist() == [6, 48]
    # Study time (s = 0.5): windows' times halved; the network is the client's R beyond the
    # middleware's at 6 clients (200 µs raw); memcached the inverse of one server's best X.
    t = f.times
    assert t.netthread == pytest.approx(10e-6) and t.worker == pytest.approx(150e-6)
    assert t.network == pytest.approx(100e-6)
    assert t.server == pytest.approx(1 / 4000)
    assert f.network.stations[-1].name == "memcached"


def test_fitted_network_predicts_below_the_least_capacity(fitted: dict) -> None:
    f = fitted[("two_middlewares", "write-only")]
    assert f.middlewares == 2
    res = mva.solve(f.network, 48)
    cap = f.times.capacities(f.workers, f.middlewares)
    assert res.throughput <= min(cap.values())
    assert mw.bottleneck(res) == "memcached"


def test_fit_skips_a_setup_without_windows(baselines: Baselines) -> None:
    direct, points = baselines[:2]
    empty = pd.DataFrame(columns=["point", "type"])
    assert mw.fit(in_study_time(points), empty, in_study_time(direct)) == {}


def test_the_round_trip_to_memcached_is_a_delay_centre(
    baselines: Baselines, base_windows: pd.DataFrame
) -> None:
    direct, points = baselines[:2]
    # The runs' one-way delay of 6 ms at s = 0.5 is 3 ms one way in the study's time.
    delayed = points.assign(**{"delays_ms.middleware_server": 6.0})
    windows = in_study_time(with_scale(base_windows, delayed, "point"))
    windows = windows[windows["type"] != "all"]
    f = mw.fit(in_study_time(delayed), windows, in_study_time(direct))[
        ("one_middleware", "read-only")
    ]
    assert f.times.server_trip == pytest.approx(6e-3)
    trip = next(s for s in f.network.stations if s.name == "server-trip")
    assert trip.kind == "delay"
    # At light load the round trip is time the clients wait: fewer requests per second.
    undelayed = mw.network(dataclasses.replace(f.times, server_trip=0.0), f.workers, f.middlewares)
    assert mva.solve(f.network, 6).throughput < mva.solve(undelayed, 6).throughput
