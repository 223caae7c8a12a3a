"""The 2015 section's builders on small hand-made tables: Table 2 beside the seed's cells
(with missing levels on either side), the drop from 60 to 140 clients, the explanation from
the database's counters, the pop strategies and a family that was not measured."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.report.figures import MISSING
from analysis.studies.s2015 import baseline, counters, drop, factorial, pop, stability, table2

REFERENCE = yaml.safe_load(Path("workflows/reference2015.yaml").read_text())


def points(cells: dict[tuple[str, str], float], scale: float = 0.1, reps: int = 1,
           factors: tuple[str, str] = ("workers", "clients")) -> pd.DataFrame:  # fmt: skip
    """A points table of client rows (type all) at the given levels, measured throughput
    (ops/s on the testbed) at scale `scale`."""
    rows = []
    for (a, b), x in cells.items():
        for side in ("client", "middleware"):
            rows.append({
                "point": f"{factors[0]}={a},{factors[1]}={b}", "side": side, "type": "all",
                "keys": 1, "repetitions": reps, "scale": scale,
                f"level_{factors[0]}": a, f"level_{factors[1]}": b,
                "throughput_ops_mean": x, "throughput_ops_ci_low": x - 10 if reps > 1 else math.nan,
                "throughput_ops_ci_high": x + 10 if reps > 1 else math.nan,
                "response_us_mean_mean": 1000.0, "response_us_mean_ci_low": math.nan,
                "response_us_mean_ci_high": math.nan, "queue_us_mean_mean": 100.0 * int(b),
                "server_us_mean_mean": 500.0, "net_us_mean_mean": 10.0,
            })  # fmt: skip
    return pd.DataFrame(rows)


def test_table2_pairs_our_cells_with_the_seeds_and_keeps_the_missing_ones() -> None:
    # We measured 60 workers at 60 and 141 clients and a cell the seed left empty (54).
    p = points({("60", "60"): 180.0, ("60", "141"): 90.0, ("60", "54"): 170.0})
    cells = table2.paired(p, REFERENCE)
    by = cells.set_index(["workers", "clients"])
    # In the study's units: 180 ops/s at s = 0.1 is 1,800.
    assert by.loc[(60, 60), "ours"] == pytest.approx(1800.0)
    assert by.loc[(60, 60), "seed"] == pytest.approx(1845.4)
    assert by.loc[(60, 60), "ratio"] == pytest.approx(1800.0 / 1845.4)
    # Our 141 stands for the seed's 140.
    assert by.loc[(60, 140), "seed"] == pytest.approx(977.2)
    assert by.loc[(60, 140), "ours"] == pytest.approx(900.0)
    # A seed cell we did not measure, and ours the seed left empty.
    assert math.isnan(by.loc[(80, 100), "ours"])
    assert math.isnan(by.loc[(60, 54), "seed"])
    assert len(cells) == 9 + 1


def test_the_drop_is_per_worker_count_and_nan_where_a_cell_is_missing() -> None:
    p = points({("60", "60"): 200.0, ("60", "141"): 100.0, ("100", "60"): 200.0})
    cells = table2.paired(p, REFERENCE)
    ours = table2.drops(cells, "ours")
    assert ours[60] == pytest.approx(-0.5)
    assert math.isnan(ours[100])
    seed = table2.drops(cells, "seed")
    assert seed[60] == pytest.approx(977.2 / 1845.4 - 1)
    assert seed[80] == pytest.approx(1041.7 / 1849.0 - 1)


def test_table2_report_ratio_to_the_database_and_an_unmeasured_family() -> None:
    p = points({("60", "60"): 180.0, ("80", "60"): 190.0, ("80", "99"): 170.0,
                ("100", "99"): 150.0}, reps=3)  # fmt: skip
    # The database baseline, small messages: highest at 20 clients, falling with sessions.
    r = table2.report(p, REFERENCE, {20: 2000.0, 80: 1600.0, 100: 1500.0})
    assert r.numbers["MqRatioOurs"] == "0.95"  # 1,900 of 2,000
    # At as many sessions as workers, at 99 clients (the seed's 100): 80 workers (1,700 of
    # 1,600) and 100 (1,500 of 1,500); 60 workers have no baseline level, and 80 workers at
    # 60 clients hold only 60 sessions.
    assert r.numbers["MqRatioSessionsCells"] == "2"
    assert r.numbers["MqRatioSessionsWorkers"] == "80, 100"
    assert r.numbers["MqRatioSessionsLow"] == "1.00"
    assert r.numbers["MqRatioSessionsHigh"] == "1.06"
    assert r.numbers["MqRatioSeed"] == "0.95"  # 1,849.0 / 1,950
    assert r.numbers["MqTabletwoBest"].startswith("1{,}900 $\\pm$ 100")
    assert r.numbers["MqDropMeasured"] == "0"
    empty = table2.report(pd.DataFrame(), REFERENCE, {})
    assert empty.numbers["MqTabletwoMeasured"] == "0"
    assert empty.numbers["MqRatioOurs"] == empty.numbers["MqRatioSessionsLow"] == MISSING
    assert "1{,}845.4" in empty.tex["table"]  # the seed's cells stay


def counters_row(run: str, point: str, lock: int, wal: int, cpu: int, commits: int) -> dict:
    return {"run": run, "point": point, "repetition": 1, "server": "server1",
            "wait_lock": lock, "wait_wal": wal, "wait_cpu": cpu, "wait_client": 0,
            "wait_other": 0, "wait_samples": lock + wal + cpu,
            "database.xact_commit": commits, "after.messages.n_dead_tup": 10,
            "messages.autovacuum_count": 1}  # fmt: skip


def test_counters_give_wait_shares_and_commits_in_study_units() -> None:
    db = pd.DataFrame([counters_row("r1", "p", 30, 60, 10, 1000),
                       counters_row("r2", "p", 10, 80, 10, 3000)])  # fmt: skip
    runs = pd.DataFrame({"run": ["r1", "r2"], "duration_s": [10.0, 10.0], "scale": [0.1, 0.1]})
    out = counters.per_point(db, runs).set_index("point")
    assert out.loc["p", "share_lock"] == pytest.approx(0.2)  # (0.3 + 0.1) / 2
    assert out.loc["p", "share_wal"] == pytest.approx(0.7)
    assert out.loc["p", "commits_per_s"] == pytest.approx(2000.0)  # 200/s on the testbed / 0.1
    assert counters.per_point(db.iloc[:0], runs).empty


def test_the_drop_explanation_names_what_grows() -> None:
    p = points({("60", "60"): 200.0, ("60", "141"): 100.0})
    db = pd.DataFrame([counters_row("a", "workers=60,clients=60", 0, 90, 10, 100),
                       counters_row("b", "workers=60,clients=141", 50, 40, 10, 100)])  # fmt: skip
    runs = pd.DataFrame({"run": ["a", "b"], "duration_s": [1.0, 1.0], "scale": [0.1, 0.1]})
    windows = pd.DataFrame([
        {"point": "workers=60,clients=60", "side": "middleware", "type": "pop_queue",
         "misses": 2, "count": 100},
        {"point": "workers=60,clients=141", "side": "middleware", "type": "pop_queue",
         "misses": 7, "count": 100},
    ])  # fmt: skip
    r = drop.report(p, db, runs, windows)
    assert r.numbers["MqWhyEmptyLow"] == "2.0\\,\\%"
    assert r.numbers["MqWhyEmptyHigh"] == "7.0\\,\\%"
    assert r.numbers["MqWhyCommitsChange"] == "$+0.0$\\,\\%"  # 100 commits at both
    # Net 10 µs plus queue 100 µs per client level: 6.01 ms at 60, 14.11 ms at 141 (×0.1 to
    # study ms); client and middleware both answer in 1 ms, so nothing lies unread.
    assert r.numbers["MqWhyWaitLow"] == "0.6"
    assert r.numbers["MqWhyWaitHigh"] == "1.4"
    assert r.numbers["MqWhyOutsideHigh"] == "0.0"
    assert r.numbers["MqWhyGrows"] == drop.PARTS["wait"]
    assert r.numbers["MqWhyLockHigh"] == "50.0\\,\\%"


def test_pop_compares_the_strategies_at_the_most_clients(tmp_path: Path) -> None:
    p = points({("naive", "60"): 50.0, ("skip_locked", "60"): 200.0}, factors=("pop", "clients"))
    pops = p.assign(type="pop_queue")
    db = pd.DataFrame([counters_row("n", "pop=naive,clients=60", 40, 50, 10, 1),
                       counters_row("s", "pop=skip_locked,clients=60", 0, 90, 10, 1)])  # fmt: skip
    runs = pd.DataFrame({"run": ["n", "s"], "duration_s": [1.0, 1.0], "scale": [0.1, 0.1]})
    # The middleware answered 300 of the naive pops' 400 empty (two windows), none of the others;
    # its sends and the clients' rows carry no misses that could be mistaken for empty pops.
    windows = pd.DataFrame([
        {"point": "pop=naive,clients=60", "side": "middleware", "type": "pop_queue",
         "misses": 100, "count": 150},
        {"point": "pop=naive,clients=60", "side": "middleware", "type": "pop_queue",
         "misses": 200, "count": 250},
        {"point": "pop=naive,clients=60", "side": "middleware", "type": "send",
         "misses": 50, "count": 400},
        {"point": "pop=naive,clients=60", "side": "client", "type": "pop_queue",
         "misses": 7, "count": 100},
        {"point": "pop=skip_locked,clients=60", "side": "middleware", "type": "pop_queue",
         "misses": 0, "count": 400},
    ])  # fmt: skip
    r = pop.report(pd.concat([p, pops]), db, runs, windows, tmp_path / "pop.pdf")
    assert r.numbers["MqPopRatio"] == "0.25"
    assert r.numbers["MqPopNaiveLock"] == "40.0\\,\\%"
    assert r.numbers["MqPopSkipLockedLock"] == "0.0\\,\\%"
    assert r.numbers["MqPopNaiveEmpty"] == "75.0\\,\\%"
    assert r.numbers["MqPopSkipLockedEmpty"] == "0.0\\,\\%"
    assert "75.0" in r.tex["table"]
    # The strategies read as the SQL clause, not as the option's spelling.
    assert "SKIP LOCKED" in r.tex["table"] and "skip" not in r.tex["table"]
    assert (tmp_path / "pop.pdf").is_file()
    # Without the windows the share is unknown, not zero.
    blind = pop.report(pd.concat([p, pops]), db, runs, pd.DataFrame(), tmp_path / "pop.pdf")
    assert blind.numbers["MqPopNaiveEmpty"] == MISSING


def test_unmeasured_families_give_not_measured_and_a_figure(tmp_path: Path) -> None:
    empty = pd.DataFrame()
    assert (
        baseline.report(empty, REFERENCE, tmp_path / "b.pdf").numbers["MqBaselineMeasured"] == "0"
    )
    assert (
        stability.report(empty, empty, empty, tmp_path / "s.pdf").numbers["MqStabilityMeasured"]
        == "0"
    )
    assert factorial.report(empty).numbers["MqFactorialMeasured"] == "0"
    assert (tmp_path / "b.pdf").is_file() and (tmp_path / "s.pdf").is_file()


def test_the_baseline_knee_is_the_response_at_few_clients_times_the_maximum() -> None:
    rows = pd.DataFrame({"clients": [10.0, 80.0], "throughput_ops_mean": [1000.0, 2000.0],
                         "response_us_mean_mean": [10_000.0, 40_000.0]})  # fmt: skip
    # ΣD = R(10) = 10 ms, D_max = 1/2000 s per core: N* = 0.01 · 2000 = 20.
    assert baseline.knee(rows, cores=2) == pytest.approx(20.0)


def test_the_baseline_says_where_the_measured_clients_lie_against_the_knees() -> None:
    rows = pd.DataFrame({"size": ["small"] * 3 + ["large"] * 3,
                         "clients": [10.0, 20.0, 40.0] * 2})  # fmt: skip
    found = {"small": {"clients": 20.0}, "large": {"clients": 20.0}}
    # Knees at 10 and 11 clients: every level above the fewest lies past both, and each
    # maximum at the lowest load beyond its knee.
    n = baseline.past_knee(rows, {"small": 10.0, "large": 11.0}, found)
    assert (n["MqBaselinePastCase"], n["MqBaselineMaxPastCase"]) == ("fewest", "first")
    assert n["MqBaselineFewest"] == "10"
    n = baseline.past_knee(rows, {"small": 5.0, "large": 5.0}, found)
    assert (n["MqBaselinePastCase"], n["MqBaselineMaxPastCase"]) == ("all", "other")
    n = baseline.past_knee(rows, {"small": 30.0, "large": 5.0}, found)
    assert n["MqBaselinePastCase"] == "some"
    n = baseline.past_knee(rows, {"small": math.nan, "large": 5.0}, found)
    assert (n["MqBaselinePastCase"], n["MqBaselineFewest"]) == ("unknown", MISSING)


def test_the_stability_trend_is_the_change_over_the_run_in_study_units() -> None:
    # 41 windows of 250 ms at s = 0.1 (10 s measured, one study second in all; a window lasts
    # the point's client_window_ms, not a second), the throughput rising linearly from 100 to
    # 110 ops/s measured: 1,000 to 1,100 in study units.
    windows = pd.DataFrame({"run": "r", "point": "size=small", "side": "client", "type": "all",
                            "window": range(16, 57),
                            "throughput_ops": [100.0 + i / 4 for i in range(41)]})  # fmt: skip
    pts = pd.DataFrame({"point": ["size=small"], "scale": [0.1], "level_size": ["small"],
                        "client_window_ms": [250]})  # fmt: skip
    t = stability.trace(windows, pts)
    assert t["t_s"].max() == pytest.approx(1.0)
    assert t["throughput"].iloc[-1] == pytest.approx(1100.0)
    r = stability.trend(t)["small"]
    assert r["slope"] == pytest.approx(100.0 / 1050.0)  # +100 over the run, mean 1,050
    assert r["low"] == pytest.approx(r["slope"]) and r["high"] == pytest.approx(r["slope"])


def test_scaling_draws_the_models_from_the_baseline_and_the_middlewares_times(
    tmp_path: Path,
) -> None:
    from analysis.studies.s2015 import scaling

    base = points({("small", "80"): 200.0}, factors=("size", "clients"))
    base = base[base["side"] == "client"]
    scaled = points({("small", "10"): 100.0, ("small", "60"): 180.0, ("small", "100"): 180.0},
                    factors=("size", "clients"))  # fmt: skip
    scaled = scaled.assign(clients_total=scaled["level_clients"].astype(int), middlewares=2,
                           **{"queue.workers": 30})  # fmt: skip
    n = scaling.report(scaled, pd.DataFrame(), base, tmp_path / "scaling.pdf").numbers
    assert n["MqScaleClientsMeasured"] == "1" and n["MqScaleWorkersMeasured"] == "0"
    # The database's demand is 2 cores / 2,000 ops/s: the MVA can never predict more.
    rows = scaling.rows_of(scaled, "clients")
    pred = scaling.predictions(rows, scaled, base)
    assert pred["mva_ops"].notna().all()
    assert (pred["mva_ops"] <= 2000.0 + 1e-6).all()
    assert n["MqScaleClientsAtWorkers"] == "1{,}800" and n["MqScaleClientsChange"] == "0.0\\,\\%"
    assert (tmp_path / "scaling.pdf").is_file()


def test_the_baseline_says_whether_the_database_is_fastest_at_its_fewest_clients(
    tmp_path: Path,
) -> None:
    falling = {("small", "10"): 300.0, ("small", "40"): 250.0, ("small", "80"): 200.0}
    rising = {("small", "10"): 100.0, ("small", "40"): 250.0, ("small", "80"): 200.0}
    for cells, flag in ((falling, "1"), (rising, "0")):
        p = points(cells, factors=("size", "clients"))
        numbers = baseline.report(p, REFERENCE, tmp_path / "b.pdf").numbers
        assert numbers["MqBaselinePeakFewestSmall"] == flag
    # One level cannot show a fall.
    one = points({("small", "10"): 300.0}, factors=("size", "clients"))
    assert (
        baseline.report(one, REFERENCE, tmp_path / "b.pdf").numbers["MqBaselinePeakFewestSmall"]
        == "0"
    )


def design(workers_effect: float, noise: tuple[float, ...]) -> pd.DataFrame:
    """The 2^4 design's runs in study units: the throughput 1,000 plus `workers_effect` at
    60 workers and minus it at 20, each cell's repetitions off by `noise`."""
    rows = []
    for w in (20, 60):
        for m in (1, 2):
            for c in (30, 120):
                for s in (200, 2000):
                    for rep, e in enumerate(noise):
                        x = 1000.0 + (workers_effect if w == 60 else -workers_effect) + e
                        rows.append({"queue.workers": w, "middlewares": m, "clients_total": c,
                                     "queue.message_size": s, "rep": rep, "side": "client",
                                     "type": "all", "status": "ok", "throughput_ops": x,
                                     "time_base": "study"})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_factorial_names_the_terms_its_intervals_set_apart_from_zero() -> None:
    n = factorial.report(design(-100.0, (-5.0, 0.0, 5.0))).numbers
    assert n["MqFactorialTop"] == "W" and n["MqFactorialTopEffect"] == "$-100$"
    # Only the workers' interval excludes zero; the error is small beside it.
    assert n["MqFactorialSignificant"] == "W" and n["MqFactorialSignificantCount"] == "1"
    assert n["MqFactorialErrorLeads"] == "0" and n["MqFactorialWorkersLower"] == "1"
    assert float(n["MqFactorialHalfWidth"]) > 0
    # Repetitions that differ by more than the workers' effect: the error leads, and the
    # workers' interval holds zero.
    noisy = factorial.report(design(-10.0, (-400.0, 0.0, 400.0))).numbers
    assert noisy["MqFactorialErrorLeads"] == "1"
    assert noisy["MqFactorialSignificant"] == "none" and noisy["MqFactorialWorkersLower"] == "0"
    # One repetition: no interval, so no term is set apart.
    once = factorial.report(design(-100.0, (0.0,))).numbers
    assert once["MqFactorialHalfWidth"] == "--" and once["MqFactorialSignificantCount"] == "0"


def test_the_mvas_round_trip_comes_from_the_point_with_fewest_clients_per_worker() -> None:
    from analysis.studies.s2015 import scaling

    # 60 clients over 10 workers wait before the distributor (client 900 µs beyond the
    # middleware's); over 100 workers they do not (200 µs): the round trip is the latter's.
    rows = []
    for workers, client_us in ((10, 1000.0), (100, 300.0)):
        for side, r in (("client", client_us), ("middleware", 100.0)):
            rows.append({"point": f"workers={workers}", "side": side, "type": "all",
                         "level_size": "small", "clients_total": 60, "middlewares": 2,
                         "queue.workers": workers // 2, "response_us_mean_mean": r,
                         "net_us_mean_mean": 5.0, "time_base": "study"})  # fmt: skip
    base = pd.DataFrame([{"point": "clients=20", "side": "client", "type": "all",
                          "level_size": "small", "throughput_ops_mean": 2000.0,
                          "time_base": "study"}])  # fmt: skip
    d = scaling.demands(pd.DataFrame(rows), base, "small", cores=2)
    assert d is not None
    assert d.network == pytest.approx(200e-6)
    assert d.database == pytest.approx(2 / 2000.0)
