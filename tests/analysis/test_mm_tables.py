"""M/M/1 and M/M/m tables of the write experiment (analysis.studies.s2018.mm_tables) on small
hand-made tables, and seed 004's Tables 12 and 13 as transcribed in the reference file."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.studies.s2018 import mm_tables

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = yaml.safe_load((ROOT / "workflows" / "reference2018.yaml").read_text())["models"]


def _windows(point: str, throughputs: list[list[float]]) -> list[dict]:
    # One list of window throughputs per run (run ids are unique across points, as in the
    # measured data); two request types per window, split 1:3.
    rows = []
    for run, per_window in enumerate(throughputs):
        for window, x in enumerate(per_window):
            for kind, share in (("set", 0.25), ("get", 0.75)):
                rows.append(
                    {"point": point, "run": f"{point}{run}", "window": window, "type": kind,
                     "throughput_ops": x * share}
                )  # fmt: skip
    return rows


def _inputs() -> pd.DataFrame:
    points = pd.DataFrame(
        [
            # point, side, workers, middlewares, clients, response µs, queue µs
            ("a", "client", 8, 2, 6, 900.0, math.nan),
            ("a", "middleware", 8, 2, 6, 500.0, 100.0),
            ("b", "client", 8, 2, 48, 4000.0, math.nan),
            ("b", "middleware", 8, 2, 48, 3000.0, 2000.0),
            ("c", "client", 32, 2, 6, 800.0, math.nan),
        ],
        columns=[
            "point",
            "side",
            "middleware.workers",
            "middlewares",
            "clients_total",
            "response_us_mean_mean",
            "queue_us_mean_mean",
        ],
    )
    windows = pd.DataFrame(
        _windows("a", [[100, 300], [200, 200]])
        + _windows("b", [[900, 700], [800, 600]])
        + _windows("c", [[50, 70]])
    )
    qlen = pd.Series({"a": 0.5, "b": 12.0})
    return mm_tables.model_inputs(points, windows, qlen)


def test_inputs_take_lambda_per_point_and_mu_per_worker_count() -> None:
    t = _inputs().set_index(["workers", "clients"])
    # λ: mean over runs of the mean window throughput; μ: highest window of the worker count.
    assert t.loc[(8, 6), "lam"] == pytest.approx(200)
    assert t.loc[(8, 48), "lam"] == pytest.approx(750)
    assert t.loc[(8, 6), "mu"] == t.loc[(8, 48), "mu"] == pytest.approx(900)
    assert t.loc[(32, 6), "mu"] == pytest.approx(70)
    assert t.loc[(8, 6), "servers"] == 16  # workers of both middlewares
    assert t.loc[(8, 48), "w_act_ms"] == pytest.approx(2.0)
    assert t.loc[(8, 48), "r_act_ms"] == pytest.approx(3.0)
    assert t.loc[(8, 48), "nq_act"] == pytest.approx(12.0)
    # A point without a middleware side or queue measurement keeps its model inputs.
    assert math.isnan(t.loc[(32, 6), "r_act_ms"]) and math.isnan(t.loc[(32, 6), "nq_act"])


def test_lambda_is_the_throughput_the_tables_print_where_the_point_has_it() -> None:
    # The write table prints the middlewares' throughput of the point: λ is that value, not
    # another average of the same windows.
    points = pd.DataFrame(
        [{"point": "a", "side": "middleware", "middleware.workers": 8, "middlewares": 2,
          "clients_total": 6, "response_us_mean_mean": 1000.0, "queue_us_mean_mean": 10.0,
          "throughput_ops_mean": 230.0}]
    )  # fmt: skip
    windows = pd.DataFrame(_windows("a", [[100, 300], [200, 200]]))
    (row,) = mm_tables.model_inputs(points, windows, pd.Series({"a": 0.5})).itertuples()
    assert row.lam == pytest.approx(230.0) and row.mu == pytest.approx(300.0)


def test_system_queue_length_sums_middlewares_per_window() -> None:
    queue = pd.DataFrame(
        {
            "point": ["a"] * 4 + ["a"] * 2,
            "run": [0, 0, 0, 0, 0, 0],
            "window": [0, 0, 1, 1, 2, 2],
            "middleware": [1, 2, 1, 2, 1, 2],
            "queue_length_mean": [1.0, 2.0, 3.0, 4.0, 100.0, 100.0],
        }
    )
    kept = pd.DataFrame({"run": [0, 0], "window": [0, 1]})  # window 2 is not measured
    assert mm_tables.system_queue_length(queue, kept)["a"] == pytest.approx((3 + 7) / 2)


def test_mm1_row_by_hand() -> None:
    # λ = 600, μ = 1000: ρ = 0.6, E[n] = 1.5, E[n_q] = 0.9, E[r] = 2.5 ms, E[w] = 1.5 ms.
    r = mm_tables.predict_point(600, 1000, 16, "mm1")
    assert r["rho"] == pytest.approx(0.6) and r["utilization"] == pytest.approx(0.6)
    assert r["p0"] == pytest.approx(0.4)
    assert r["n"] == pytest.approx(1.5) and r["nq"] == pytest.approx(0.9)
    assert r["r_ms"] == pytest.approx(2.5) and r["w_ms"] == pytest.approx(1.5)


def test_mmm_row_by_hand() -> None:
    # λ = 0.5, μ = 1 shared by m = 2 servers (0.5 each): ρ = 0.5, offered load a = 1. Erlang C:
    # p0 = 1/(1 + a + a²/(2(1 − ρ))) = 1/3, ϱ = 1/3, E[n_q] = ρϱ/(1 − ρ) = 1/3,
    # E[n] = mρ + E[n_q] = 4/3, E[w] = E[n_q]/λ = 2/3 s, E[r] = 1/0.5 + 2/3 s.
    r = mm_tables.predict_point(0.5, 1.0, 2, "mmm")
    assert r["mu"] == pytest.approx(0.5)
    assert r["rho"] == pytest.approx(0.5) and r["utilization"] == pytest.approx(0.5)
    assert r["p0"] == pytest.approx(1 / 3)
    assert r["prob_queueing"] == pytest.approx(1 / 3)
    assert r["nq"] == pytest.approx(1 / 3) and r["n"] == pytest.approx(4 / 3)
    assert r["w_ms"] == pytest.approx(1e3 * 2 / 3)
    assert r["r_ms"] == pytest.approx(1e3 * (2 + 2 / 3))


def test_unstable_point_keeps_rho_and_no_prediction() -> None:
    r = mm_tables.predict_point(1200, 1000, 4, "mmm")
    assert r["rho"] == pytest.approx(1.2)
    assert all(math.isnan(r[k]) for k in ("p0", "utilization", "n", "nq", "w_ms", "r_ms"))
    with pytest.raises(ValueError, match="model"):
        mm_tables.predict_point(1, 2, 1, "mg1")


def test_predict_carries_measurements_beside_the_model() -> None:
    t = mm_tables.predict(_inputs(), "mmm")
    assert list(t.columns) == [*mm_tables.KEYS, *mm_tables.COLUMNS]
    row = t.set_index(["workers", "clients"]).loc[(8, 48)]
    assert row["mu"] == pytest.approx(900 / 16)
    assert row["r_act_ms"] == pytest.approx(3.0)


def test_beside_puts_the_seed_first_and_keeps_every_point() -> None:
    ours = mm_tables.predict(_inputs(), "mm1")
    seed = mm_tables.seed_table(
        {"columns": ["mu", "lam", "rho"], "rows": {6: {8: [1, 0.5, 0.5], 16: [2, 1, 0.5]}}}
    )
    both = mm_tables.beside(ours, seed)
    keys = list(zip(both["workers"], both["clients"], both["source"], strict=True))
    assert keys == [
        (8, 6, "seed 004"),
        (8, 6, "ours"),
        (8, 48, "ours"),
        (16, 6, "seed 004"),
        (32, 6, "ours"),
    ]
    assert math.isnan(both.iloc[0]["n"])  # a column the seed does not print


def test_seed_table_rejects_bad_rows() -> None:
    with pytest.raises(ValueError, match="columns"):
        mm_tables.seed_table({"rows": {}})
    with pytest.raises(ValueError, match="2 values"):
        mm_tables.seed_table({"columns": ["mu", "lam", "rho"], "rows": {6: {8: [1, 2]}}})
    with pytest.raises(ValueError, match="unknown"):
        mm_tables.seed_table({"columns": ["speed"], "rows": {}})


@pytest.mark.parametrize(("name", "model"), [("mm1_table", "mm1"), ("mmm_table", "mmm")])
def test_reference_tables_match_the_models(name: str, model: str) -> None:
    """The transcribed Tables 12 and 13: all 28 points, and each printed E[n] and E[r] is
    what the model gives for the printed λ and μ (both rounded to 0.01)."""
    seed = mm_tables.seed_table(REFERENCE[name])
    assert len(seed) == 28
    assert set(seed["workers"]) == {8, 16, 32, 64}
    for r in seed.itertuples():
        m = 2 * r.workers
        pred = mm_tables.predict_point(r.lam, r.mu * (1 if model == "mm1" else m), m, model)
        # ρ is printed at 1.00 where it is just below one: compare relatively there.
        assert pred["n"] == pytest.approx(r.n, rel=0.02, abs=0.02), (r.clients, r.workers)
        assert pred["r_ms"] == pytest.approx(r.r_ms, rel=0.02, abs=0.02), (r.clients, r.workers)
