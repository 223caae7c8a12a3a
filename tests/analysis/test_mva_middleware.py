"""The middleware network of the 2018 baselines (analysis.studies.s2018.mva_middleware) on hand-made
parameters, and seed 004's Table 14 as transcribed in the reference file."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.models import mva
from analysis.studies.s2018 import mva_middleware as mw

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = yaml.safe_load((ROOT / "workflows" / "reference2018.yaml").read_text())["models"]
COMPONENT_TIMES_US = {"netthread": 20.0, "queue": 500.0, "worker": 300.0, "server": 900.0}


def test_service_times_from_measurements() -> None:
    t = mw.service_times(COMPONENT_TIMES_US, 1500.0, 1100.0, 2000.0)
    assert t.network == pytest.approx(400e-6)  # client minus middleware response time
    assert t.netthread == pytest.approx(20e-6)
    assert t.worker == pytest.approx(300e-6)
    assert t.server == pytest.approx(1 / 2000)  # the direct maximum, not the server time
    assert t.think == 0
    # Without a direct measurement the middleware's server time stands in; a client time
    # below the middleware's gives no negative delay.
    t = mw.service_times(COMPONENT_TIMES_US, 1000.0, 1100.0, None)
    assert t.server == pytest.approx(900e-6) and t.network == 0


def test_capacities_name_the_bottleneck() -> None:
    t = mw.ServiceTimes(think=0, network=1e-4, netthread=1e-4, worker=8e-3, server=2e-4)
    cap = t.capacities(workers=8, middlewares=2)
    assert cap == pytest.approx({"net-thread": 20_000, "workers": 2000, "memcached": 5000})
    res = mva.solve(mw.network(t, 8, 2), 400)
    # The throughput saturates at the least capacity, and that component is the bottleneck.
    assert res.throughput == pytest.approx(2000, rel=2e-2)
    assert res.throughput <= 2000
    assert mw.bottleneck(res) == "workers"


def test_network_has_the_named_centres_and_visits() -> None:
    t = mw.ServiceTimes(think=0.001, network=3e-4, netthread=1e-4, worker=1e-3, server=3e-4)
    net = mw.network(t, 16, 2)
    by_name = {s.name: s for s in net.stations}
    assert list(by_name) == [
        "clients",
        "network",
        "netthread1",
        "workers1",
        "netthread2",
        "workers2",
        "memcached",
    ]
    assert by_name["clients"].kind == by_name["network"].kind == "delay"
    assert by_name["workers2"].servers == 16 and by_name["workers2"].visits == 0.5
    assert by_name["netthread1"].servers == 1 and by_name["memcached"].visits == 1
    with pytest.raises(ValueError, match="middleware"):
        mw.network(t, 16, 0)


def test_components_of_one_client() -> None:
    # One client, no queueing anywhere: X = 1 / total demand; each R is its service time.
    t = mw.ServiceTimes(think=0, network=4e-4, netthread=1e-4, worker=2e-4, server=3e-4)
    res = mva.solve(mw.network(t, 4, 1), 1)
    comp = mw.components(res).set_index("component")
    x = 1 / 1e-3
    assert res.throughput == pytest.approx(x)
    assert comp.loc["network", "R"] == pytest.approx(0.4)
    assert comp.loc["net-thread", "U"] == pytest.approx(x * 1e-4)
    assert comp.loc["workers", "U"] == pytest.approx(x * 2e-4 / 4)  # per server
    assert comp.loc["memcached", "Q"] == pytest.approx(x * 3e-4)
    assert comp.loc["clients", "Q"] == 0
    assert list(comp.columns) == list(mw.METRICS)


def test_nearest_clients_on_a_doubling_grid() -> None:
    # 24 is as near to 48 as to 12 in ratio; on a log scale 48 beats 6 (a linear distance
    # would pick 6 again).
    assert mw.nearest_clients([6, 48, 192, 288], [6, 24, 192]) == [6, 48, 192]
    assert mw.nearest_clients([6, 12, 24, 48, 96, 192, 288], [6, 24, 192]) == [6, 24, 192]
    assert mw.nearest_clients([8, 32], [6, 24, 192]) == [8, 32]  # each count used once
    assert mw.nearest_clients([], [6]) == []


def test_component_names() -> None:
    assert mw.component("netthread2") == "net-thread"
    assert mw.component("workers1") == "workers"
    assert mw.component("memcached") == "memcached"


def test_beside_seed_matches_counts_and_leaves_gaps() -> None:
    ours = pd.DataFrame(
        [
            {"clients": 8, "component": c, "U": 0.1 * i, "R": 1.0 * i, "Q": 2.0 * i}
            for i, c in enumerate(mw.COMPONENTS)
        ]
    )
    seed = {"U": {"memcached": [0.5, 0.9]}, "R": {}, "Q": {"network": [1.0, 2.0]}}
    side = mw.beside_seed(ours, seed, [6, 24], [8])
    first = side[side["seed_clients"] == 6].set_index("component")
    assert first.loc["memcached", "U"] == pytest.approx(0.4)
    assert first.loc["memcached", "U_seed"] == 0.5
    assert first.loc["network", "Q_seed"] == 1.0
    assert math.isnan(first.loc["memcached", "R_seed"])
    second = side[side["seed_clients"] == 24].set_index("component")
    assert second["U"].isna().all()  # no client count of ours left for 24
    assert second.loc["memcached", "U_seed"] == 0.9


@pytest.mark.parametrize("setup", ["one_middleware", "two_middlewares"])
@pytest.mark.parametrize("workload", ["read-only", "write-only"])
def test_reference_table14_fits_the_comparison(setup: str, workload: str) -> None:
    """Transcribed Table 14: every component the seed prints is found by beside_seed, at
    the three client counts, and its 192-client X is the one the error is computed from."""
    t14 = REFERENCE["mva_components"]
    printed = t14[setup][workload]
    assert printed["X"][-1] == pytest.approx(REFERENCE["mva"][setup][workload]["mva_x"])
    ours = pd.DataFrame(
        [{"clients": 6, "component": c, "U": 0.0, "R": 0.0, "Q": 0.0} for c in mw.COMPONENTS]
    )
    side = mw.beside_seed(ours, printed, t14["clients"], [6])
    side = side[side["component"] != "clients"]  # not in Table 14
    assert len(side) == 3 * 4
    assert not side[["U_seed", "R_seed", "Q_seed"]].isna().any().any()


def test_the_bottleneck_sentence_names_a_shared_component_once() -> None:
    assert mw.bottleneck_phrase("memcached", "memcached") == (
        r"\texttt{memcached} for both reads and writes"
    )
    assert mw.bottleneck_phrase("memcached", "net-thread") == (
        r"\texttt{memcached} for reads and \texttt{net-thread} for writes"
    )
