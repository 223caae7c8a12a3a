"""Seed 004 §7 recomputed from the parameters printed beside its tables (Tables 12, 13, 14).

The report prints two decimals, sometimes truncated rather than rounded, and its inputs
(λ, μ) are themselves rounded to two decimals, so every comparison allows for both.
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from analysis.models import mva, queueing
from tests.analysis.conftest import DATA
from tests.analysis.networks import SEED_NETWORKS


def _range(fn, lam: float, mu: float) -> tuple[float, float]:
    # The printed inputs are rounded to 0.01: evaluate at the corners of that box.
    values = [fn(lam + dl, mu + dm) for dl, dm in itertools.product((-0.005, 0.005), repeat=2)]
    return min(values), max(values)


def _assert_printed(printed: float, fn, lam: float, mu: float, what: str) -> None:
    lo, hi = _range(fn, lam, mu)
    assert lo - 0.0101 <= printed <= hi + 0.0051, f"{what}: printed {printed}, model [{lo}, {hi}]"


def test_table12_mm1() -> None:
    table = pd.read_csv(DATA / "seed004_table12_mm1.csv")
    assert len(table) == 28
    ms = 1e3
    for row in table.itertuples():
        what = f"clients={row.clients} WT={row.workers}"
        cols = {
            "rho": lambda lam, mu: queueing.mm1(lam, mu).utilization,
            "nq_est": lambda lam, mu: queueing.mm1(lam, mu).mean_jobs_in_queue,
            "w_est_ms": lambda lam, mu: queueing.mm1(lam, mu).mean_waiting_time * ms,
            "r_est_ms": lambda lam, mu: queueing.mm1(lam, mu).mean_response_time * ms,
            "n_est": lambda lam, mu: queueing.mm1(lam, mu).mean_jobs_in_system,
        }
        for col, fn in cols.items():
            _assert_printed(getattr(row, col), fn, row.lam, row.mu, f"{what} {col}")


def test_table13_mmm() -> None:
    table = pd.read_csv(DATA / "seed004_table13_mmm.csv")
    assert len(table) == 28
    ms = 1e3
    for row in table.itertuples():
        m = 2 * row.workers  # two middlewares
        what = f"clients={row.clients} WT={row.workers}"
        cols = {
            "rho": lambda lam, mu, m=m: queueing.mmm(lam, mu, m).utilization,
            "nq_est": lambda lam, mu, m=m: queueing.mmm(lam, mu, m).mean_jobs_in_queue,
            "w_est_ms": lambda lam, mu, m=m: queueing.mmm(lam, mu, m).mean_waiting_time * ms,
            "r_est_ms": lambda lam, mu, m=m: queueing.mmm(lam, mu, m).mean_response_time * ms,
            "n_est": lambda lam, mu, m=m: queueing.mmm(lam, mu, m).mean_jobs_in_system,
            "prob_queueing": lambda lam, mu, m=m: queueing.mmm(lam, mu, m).prob_queueing,
            "utilization": lambda lam, mu, m=m: queueing.mmm(lam, mu, m).utilization,
        }
        for col, fn in cols.items():
            _assert_printed(getattr(row, col), fn, row.lam, row.mu, f"{what} {col}")
        assert row.p0 == pytest.approx(queueing.mmm(row.lam, row.mu, m).p0, abs=0.05)


# Table 14, MVA columns: (middlewares, type) -> metric -> station -> values at N = 6, 24, 192.
# Times in ms. Station keys: delay, netthread, workers, memcached.
TABLE14 = {
    ("1", "GET"): {
        "X": [2311.40, 2940.00, 2940.00],
        "U": {
            "delay": [0.69, 0.88, 0.88],
            "netthread": [0.20, 0.25, 0.25],
            "workers": [0.04, 0.05, 0.05],
            "memcached": [0.79, 1.00, 1.00],
        },
        "R": {
            "delay": [0.30, 0.30, 0.30],
            "netthread": [0.10, 0.12, 0.12],
            "workers": [1.09, 1.09, 1.09],
            "memcached": [0.80, 6.35, 63.50],
        },
        "Q": {
            "delay": [0.69, 0.88, 0.88],
            "netthread": [0.24, 0.34, 0.34],
            "workers": [2.52, 3.21, 3.21],
            "memcached": [1.84, 18.68, 186.68],
        },
    },
    ("1", "SET"): {
        "X": [5985.93, 11511.69, 11545.00],
        "U": {
            "delay": [1.80, 3.45, 3.46],
            "netthread": [0.52, 0.99, 1.00],
            "workers": [0.02, 0.03, 0.03],
            "memcached": [0.37, 0.70, 0.71],
        },
        "R": {
            "delay": [0.30, 0.30, 0.30],
            "netthread": [0.14, 1.11, 15.64],
            "workers": [0.17, 0.17, 0.17],
            "memcached": [0.09, 0.20, 0.21],
        },
        "Q": {
            "delay": [1.80, 3.45, 3.46],
            "netthread": [0.86, 12.78, 180.67],
            "workers": [1.04, 1.99, 2.00],
            "memcached": [0.52, 2.32, 2.41],
        },
    },
    ("2", "GET"): {
        "X": [2784.95, 2940.00, 2940.00],
        # The printed worker utilisation (0.06) is not X·V·S/m of the stated parameters
        # (0.0056); it is left out.
        "U": {
            "delay": [0.84, 0.88, 0.88],
            "netthread": [0.18, 0.19, 0.19],
            "memcached": [0.95, 1.00, 1.00],
        },
        "R": {
            "delay": [0.30, 0.30, 0.30],
            "netthread": [0.16, 0.16, 0.16],
            "workers": [0.26, 0.26, 0.26],
            "memcached": [1.14, 7.14, 64.28],
        },
        "Q": {
            "delay": [0.84, 0.88, 0.88],
            "netthread": [0.22, 0.24, 0.24],
            "workers": [0.36, 0.38, 0.38],
            "memcached": [3.18, 21.01, 189.01],
        },
    },
    ("2", "SET"): {
        "X": [6081.54, 13609.05, 15218.43],
        "U": {
            "delay": [1.82, 4.08, 4.56],
            "netthread": [0.40, 0.89, 0.99],
            "workers": [0.00, 0.01, 0.01],
            "memcached": [0.37, 0.83, 0.93],
        },
        "R": {
            "delay": [0.30, 0.30, 0.30],
            "netthread": [0.19, 0.77, 11.01],
            "workers": [0.11, 0.11, 0.11],
            "memcached": [0.08, 0.29, 0.89],
        },
        "Q": {
            "delay": [1.82, 4.08, 4.57],
            "netthread": [0.58, 5.20, 83.84],
            "workers": [0.33, 0.75, 0.84],
            "memcached": [0.53, 3.93, 13.51],
        },
    },
}

STATION = {
    "delay": "net_in",
    "netthread": "netthread1",
    "workers": "workers1",
    "memcached": "memcached",
}


@pytest.mark.parametrize("key", list(TABLE14))
def test_table14_mva(key: tuple[str, str]) -> None:
    printed = TABLE14[key]
    for i, n in enumerate((6, 24, 192)):
        res = mva.solve(SEED_NETWORKS[key], n)
        assert res.throughput == pytest.approx(printed["X"][i], abs=0.011), f"X N={n}"
        for metric, per_station in printed.items():
            if metric == "X":
                continue
            for station, values in per_station.items():
                r = res.stations[STATION[station]]
                ours = {"U": r.utilization, "R": r.response_time * 1e3, "Q": r.queue_length}
                # Printed values are rounded or truncated to two decimals.
                assert -0.0051 <= ours[metric] - values[i] <= 0.0101, (
                    f"{key} N={n} {metric} {station}: ours {ours[metric]:.4f}, printed {values[i]}"
                )
        if key[1] == "GET":
            assert res.bottleneck() == "memcached"
        else:
            assert res.bottleneck().startswith("netthread")
