"""The validity of a queueing model (analysis.models.validity) and the 2016 models' inputs
it checks: the round trip as a delay centre, m of the M/M/m, the M/M/1's recipe identity."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.models import mva, validity
from analysis.studies.s2016 import mmm as mmm2016
from analysis.studies.s2016 import mva as mva2016
from analysis.studies.s2018 import mva_middleware as mw2018
from analysis.studies.s2018 import mva_tables


def test_a_model_missing_the_lightest_load_by_80_percent_is_invalid() -> None:
    v = validity.judge("MVA", -0.80, "clients=20")
    assert not v.valid
    assert v.lightest_error == -0.80 and v.lightest_point == "clients=20"
    assert v.reason.startswith("The MVA is not valid here")
    assert "-80%" in v.reason and "lightest load" in v.reason
    assert v.reason.count(".") == 1  # one sentence
    d = v.to_dict()
    assert d["valid"] is False and d["checks"][0]["name"] == "lightest_load"
    # Its error is its own, not its recipe's algebra, and it is applied within its domain: a
    # claim about its error may be judged.
    assert not v.restates_recipe and d["restates_recipe"] == ""
    assert v.in_domain and d["in_domain"] is True


def test_a_model_within_tolerance_with_inputs_in_range_is_valid() -> None:
    checks = (
        validity.servers(120, 120),
        validity.delay_centre(False, 0.005, "memcached"),
        validity.utilisation("read_thread", 0.4),
    )
    v = validity.judge("MVA", 0.10, "p", checks)
    assert v.valid and v.reason == ""
    assert len(v.checks) == 4
    assert validity.judge("MVA", validity.TOLERANCE, "p").valid


@pytest.mark.parametrize(
    ("check", "words"),
    [
        (validity.servers(125, 120), "125 servers where 120"),
        (validity.delay_centre(True, 0.005, "memcached"), "round trip"),
        (validity.utilisation("read_thread", 1.2), "read thread utilisation is 1.20"),
    ],
)
def test_each_input_out_of_range_makes_a_model_invalid(check: validity.Check, words: str) -> None:
    v = validity.judge("model", 0.0, "p", (check,))
    assert not v.valid and words in v.reason and v.reason.startswith("The model is not valid")
    assert not v.in_domain


def test_a_utilisation_the_prediction_implies_makes_a_model_invalid() -> None:
    # The 2016 MVA's throughput holds read threads busy 1.16 of the time at memcached: a
    # demand the network holds nowhere as a station.
    v = validity.judge(
        "MVA", 0.05, "p", (validity.predicted_utilisation("read_thread_holding", 1.16),)
    )
    assert not v.valid and "busy 1.16 of the time" in v.reason and not v.restates_recipe
    assert not v.in_domain


def test_no_lightest_error_is_not_valid() -> None:
    v = validity.judge("MVA", math.nan, "")
    assert not v.valid and v.to_dict()["lightest_error"] is None


def test_mm1_recipe_identity_detected_on_synthetic_numbers() -> None:
    # A closed loop of N = 400 clients, μ = 1000/s, X = 700/s: R_meas = N/X, R_model = 1/(μ−X).
    n, mu, x = 400, 1000.0, 700.0
    rho = x / mu
    r_meas, r_model = n / x, 1 / (mu - x)
    error = r_model / r_meas - 1
    assert validity.identity_ratio(n, rho) == pytest.approx(r_meas / r_model)
    assert validity.identity_error(n, rho) == pytest.approx(error)
    restated = validity.recipe(error, n, rho)
    assert not restated.ok and restated.value == pytest.approx(error)
    v = validity.judge("M/M/1", -0.1, "p", (restated,))
    assert not v.valid and "fitting recipe" in v.reason
    assert v.restates_recipe.startswith("the M/M/1's error is its fitting recipe's algebra")
    # A measured response time half of N/X is not the identity.
    assert validity.recipe(r_model / (r_meas / 2) - 1, n, rho).ok


def test_an_mmm_that_barely_queues_restates_its_recipe() -> None:
    # m = 120 read threads at ρ = 0.5: the Erlang-C wait is nil, so the model's response is
    # its hold time 1/μ, and its error is minus the measured wait share whatever happened.
    hold, measured_wait = 1.0e-3, 0.5e-3
    error = hold / (hold + measured_wait) - 1
    idle = validity.idle(1e-9, hold, measured_wait / (hold + measured_wait))
    assert not idle.ok and idle.value == pytest.approx(-error)
    v = validity.judge("M/M/120", 0.0, "p", (idle,))
    assert not v.valid and "barely queues" in v.restates_recipe
    assert "-33.3%" in v.restates_recipe
    # A model that waits a fifth of its response time tests something.
    assert validity.idle(0.2e-3, 1.2e-3, 0.33).ok


def test_mmm_counts_the_read_threads_for_gets() -> None:
    # S = 5 servers with T = 24 read threads each (and a write thread each, not counted).
    assert mmm2016.servers(5, 24) == 5 * 24
    assert mmm2016.servers(5, 24, middlewares=2) == 2 * 5 * 24


def _closed_by_hand(n: int, z: float, d_queue: float, d_delay: float) -> float:
    """Throughput of a closed network of one single-server queue (demand d_queue) and delay
    centres (d_delay, z in all), by the MVA recursion written out."""
    q, x = 0.0, 0.0
    for k in range(1, n + 1):
        r = d_queue * (1 + q) + d_delay
        x = k / (r + z)
        q = x * d_queue * (1 + q)
    return x


def test_round_trip_is_a_delay_centre_of_the_2016_network() -> None:
    # One server, one read thread whose own time is nil, no writes: client delay, a
    # memcached queue and the round trip delay.
    d = mva2016.Design(servers=1, workers=1, replication=1, write_share=0.0)
    t = mva2016.ServiceTimes(
        client=2e-3, net_thread=0.0, read=0.0, write=math.nan, memcached=1e-4, round_trip=5e-3
    )
    net = mva2016.network(d, t)
    rt = [s for s in net.stations if s.name == "round-trip"]
    assert rt and rt[0].kind == "delay" and rt[0].service_time == 5e-3
    assert {s.name: s.service_time for s in net.stations}["memcached0"] == 1e-4
    for n in (1, 5, 50):
        p = mva2016.predict(d, t, n)
        assert p.throughput == pytest.approx(_closed_by_hand(n, 2e-3, 1e-4, 5e-3), rel=1e-9)
    # Holding the round trip inside memcached's service would cap the throughput at 1/5.1 ms.
    inside = mva2016.ServiceTimes(
        client=2e-3, net_thread=0.0, read=0.0, write=math.nan, memcached=5.1e-3
    )
    assert mva2016.predict(d, inside, 50).throughput <= (1 / 5.1e-3) * (1 + 1e-9)
    assert mva2016.predict(d, t, 50).throughput > 3 / 5.1e-3


def test_service_times_take_the_round_trip_out_of_memcached() -> None:
    row = pd.Series({"delays_ms.middleware_server": 50.0, "scale": 0.05})
    assert mva2016.round_trip_of(row) == pytest.approx(5e-3)
    assert mva2016.round_trip_of(pd.Series({"scale": 0.05})) == 0.0


def test_2018_network_judged_at_its_fewest_clients() -> None:
    times = mw2018.ServiceTimes(0.0, 1e-3, 1e-5, 1e-4, 1e-4)
    f = mw2018.Fit(
        network=mw2018.network(times, 8, 1), times=times, workers=8, middlewares=1,
        client=pd.DataFrame(),
    )  # fmt: skip
    rows = [
        {"clients": 48, "x_model": 900.0, "x_measured": 1000.0, "point": "n48"},
        {"clients": 6, "x_model": 200.0, "x_measured": 1000.0, "point": "n6"},
    ]
    v = mva_tables.judge(f, rows)
    assert not v.valid and v.lightest_point == "n6" and v.lightest_error == pytest.approx(-0.8)
    rows[1]["x_model"] = 1050.0
    assert mva_tables.judge(f, rows).valid
    indirect = mw2018.Fit(f.network, times, 8, 1, pd.DataFrame(), server_from_direct=False)
    assert not mva_tables.judge(indirect, rows).valid
    assert {"lightest_error", "valid", "validity_reason"} <= set(mva_tables.DATA_COLUMNS)
    assert isinstance(mva.Station("x", "delay", 1.0), mva.Station)
