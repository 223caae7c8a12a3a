"""Our 2018 results beside seeds 002 and 004 (analysis.studies.s2018.seed) on small tables, and seed
002's transcription in workflows/reference2018.yaml."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis import estimate
from analysis.scale_model import TIME_BASE
from analysis.studies.s2018 import seed as seed2018

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = yaml.safe_load((ROOT / "workflows" / "reference2018.yaml").read_text())


def point_rows(
    point: str,
    clients: int,
    workers: int,
    client: tuple[float, float],
    mw: tuple[float, float, float, float],
    setup: str = "one_middleware",
    workload: str = "write-only",
) -> list[dict]:
    """A point's client row (X ops/s, R µs) and middleware row (X, R, queue, server µs)."""
    common = {
        "point": point,
        "clients_total": clients,
        "middleware.workers": workers,
        "level_setup": setup,
        "level_workload": workload,
        TIME_BASE: "study",
    }
    return [
        {
            **common,
            "side": "client",
            "throughput_ops_mean": client[0],
            "response_us_mean_mean": client[1],
        },
        {
            **common,
            "side": "middleware",
            "throughput_ops_mean": mw[0],
            "response_us_mean_mean": mw[1],
            "queue_us_mean_mean": mw[2],
            "server_us_mean_mean": mw[3],
        },
    ]


@pytest.fixture
def points() -> pd.DataFrame:
    rows = [
        # 8 workers: 6 clients (light), 48 clients (the maximum), 96 clients (past it)
        *point_rows("a", 6, 8, (3000, 2000), (3010, 1500, 100, 1200)),
        *point_rows("b", 48, 8, (6000, 8000), (6050, 7000, 4000, 2000)),
        *point_rows("c", 96, 8, (5900, 16000), (5950, 15000, 12000, 2100)),
        # read-only, one point
        *point_rows("d", 6, 8, (2800, 2100), (2820, 1200, 100, 900), workload="read-only"),
    ]
    return pd.DataFrame(rows)


def test_seed002_section_is_required_with_every_table() -> None:
    with pytest.raises(seed2018.ReferenceFileError, match="no `seed002`"):
        seed2018.seed002({"writes": {}})
    partial = {"seed002": {t: {} for t in seed2018.SEED002_TABLES if t != "writes"}}
    with pytest.raises(seed2018.ReferenceFileError, match="writes"):
        seed2018.seed002(partial)


def test_reference_file_holds_seed002_beside_seed004() -> None:
    s2 = seed2018.seed002(REFERENCE)
    # Seed 004's values stay at the top level, unchanged.
    assert REFERENCE["writes"][64]["mw_x"] == pytest.approx(11469.24)
    assert s2["writes"][64] == {
        "clients": 144,
        "mw_x": 11206,
        "il_x": 11562,
        "client_x": 11391,
        "queue_ms": 1.3,
        "queue_len": 8,
        "server_ms": 8.8,
    }
    assert s2["baselines_middleware"]["two_middlewares"]["write-only"]["client_x"] == 13776
    law = s2["interactive_law"]
    # Cells per table as printed (a "-" is not a cell): 9+7 columns, 10+7, 10.
    assert sum(len(v) for v in law["one_middleware"]["write-only"].values()) == 6 + 8 + 8 + 9
    assert sum(len(v) for v in law["two_middlewares"]["write-only"].values()) == 9 * 3 + 10
    assert sum(len(v) for v in law["full_system"]["write-only"].values()) == 40
    assert seed2018.direct_beside(REFERENCE, "two_servers", "write-only") == (5802, 6012)
    assert seed2018.direct_beside(REFERENCE, "one_server", "read-only") == (2962, 2962)


def test_best_points_takes_the_highest_client_throughput_with_both_sides(
    points: pd.DataFrame,
) -> None:
    best = seed2018.best_points(points, ["level_setup", "level_workload"])
    w = best[best["level_workload"] == "write-only"].iloc[0]
    assert w["point"] == "b"
    assert (w["clients"], w["workers"]) == (48, 8)
    assert w["client_x"] == 6000 and w["mw_x"] == 6050
    assert w["client_r"] == pytest.approx(8.0) and w["mw_r"] == pytest.approx(7.0)
    assert w["mw_queue"] == pytest.approx(4.0) and w["server_ms"] == pytest.approx(2.0)
    # Think time from the lightest point: 2000 - 1500 µs; X = 48 / (7000 + 500) µs.
    assert w["il_x"] == pytest.approx(48 / 7.5e-3)
    assert math.isnan(w["queue_len"])
    with_len = seed2018.best_points(points, ["level_workload"], queue_length=pd.Series({"b": 12.5}))
    assert with_len.set_index("level_workload").loc["write-only", "queue_len"] == 12.5


def test_best_points_needs_the_study_time(points: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="study's time"):
        seed2018.best_points(points.drop(columns=[TIME_BASE]), ["level_setup"])


def test_max_throughput_beside_sets_each_seed_in_its_row(points: pd.DataFrame) -> None:
    best = seed2018.best_points(points, ["level_setup", "level_workload"])
    t = seed2018.max_throughput_beside(best, REFERENCE)
    assert len(t) == 2 * len(seed2018.MAX_QUANTITIES)
    row = t[(t["workload"] == "write-only") & (t["quantity"] == "client_x")].iloc[0]
    assert (row["ours"], row["seed002"], row["seed004"]) == (6000, 12144, pytest.approx(11549.70))
    clients = t[(t["workload"] == "write-only") & (t["quantity"] == "clients")].iloc[0]
    assert clients["seed002"] == 144 and math.isnan(clients["seed004"])
    # Seed 002 names no worker count for its read maximum.
    wt = t[(t["workload"] == "read-only") & (t["quantity"] == "workers")].iloc[0]
    assert wt["ours"] == 8 and math.isnan(wt["seed002"])


def test_full_system_beside_lists_every_worker_count_of_either_source(
    points: pd.DataFrame,
) -> None:
    best = seed2018.best_points(
        points[points["level_workload"] == "write-only"], ["middleware.workers"]
    )
    t = seed2018.full_system_beside(best, REFERENCE)
    assert sorted(t["workers"].unique()) == [8, 16, 32, 64]
    x = t.set_index(["workers", "quantity"])
    assert x.loc[(8, "mw_x"), "ours"] == 6050
    assert x.loc[(8, "mw_x"), "seed002"] == 6262
    assert x.loc[(8, "mw_x"), "seed004"] == pytest.approx(6680.07)
    assert x.loc[(8, "queue_len"), "seed002"] == 12
    assert math.isnan(x.loc[(64, "clients"), "ours"])
    assert x.loc[(64, "server_ms"), "seed002"] == 8.8


def test_law_deviation_is_client_response_minus_n_over_middleware_throughput(
    points: pd.DataFrame,
) -> None:
    lonely = pd.DataFrame(point_rows("e", 12, 8, (1, 1), (1, 1, 1, 1)))
    lonely = lonely[lonely["side"] == "client"]
    d = seed2018.law_deviations_ms(pd.concat([points, lonely]))
    assert "e" not in set(d["clients"].astype(str)) and len(d) == 4
    b = d[(d["clients"] == 48)].iloc[0]
    assert b["deviation_ms"] == pytest.approx(8.0 - 48 / 6050 * 1e3)
    named = seed2018.law_deviations_ms(
        points.drop(columns=["level_setup", "level_workload"]), "full_system", "write-only"
    )
    assert set(named["setup"]) == {"full_system"} and set(named["workload"]) == {"write-only"}


def test_law_beside_summarises_both_and_counts_common_cells(points: pd.DataFrame) -> None:
    d = seed2018.law_deviations_ms(points)
    t = seed2018.law_beside(d, REFERENCE).set_index("workload")
    w = t.loc["write-only"]
    assert w["ours_points"] == 3
    assert w["ours_max_abs_ms"] == pytest.approx(
        d[d["workload"] == "write-only"]["deviation_ms"].abs().max()
    )
    assert w["seed002_cells"] == 31
    assert w["seed002_max_abs_ms"] == pytest.approx(0.9)
    # (8 workers, 6 / 48 / 96 clients): seed 002 measured all three.
    assert w["common_cells"] == 3
    assert t.loc["read-only", "seed002_max_abs_ms"] == pytest.approx(2.0)


def test_mva_beside_takes_the_largest_client_count() -> None:
    ours = pd.DataFrame(
        {
            "setup": ["one_middleware"] * 2,
            "workload": ["write-only"] * 2,
            "clients": [6, 192],
            "x_model": [100.0, 1500.0],
            "x_measured": [100.0, 1000.0],
            "bottleneck": ["workers1", "netthread1"],
        }
    )
    row = seed2018.mva_beside(ours, REFERENCE).iloc[0]
    assert row["clients"] == 192 and row["ours_error"] == pytest.approx(0.5)
    assert row["ours_bottleneck"] == "netthread1"
    assert row["seed004_error"] == pytest.approx((11545.00 - 7177.16) / 7177.16)
    assert row["seed004_bottleneck"] == "net-thread"
    assert row["seed002_bottleneck"] == "worker threads"
    assert math.isnan(seed2018.relative_error(1.0, 0.0))


def test_service_rate_of_the_best_run_is_below_the_best_window() -> None:
    tidy = pd.DataFrame(
        {
            "run": ["r1"] * 3 + ["r2"] * 3,
            "window": [0, 1, 2] * 2,
            "throughput_ops": [100.0, 300.0, 200.0, 220.0, 230.0, 240.0],
        }
    )
    assert estimate.service_rate_max_window(tidy) == 300.0
    assert estimate.service_rate_max_run(tidy) == pytest.approx(230.0)


def test_mva_beside_without_usable_points_keeps_its_columns() -> None:
    empty = pd.DataFrame(
        columns=["setup", "workload", "clients", "x_model", "x_measured", "bottleneck"]
    )
    out = seed2018.mva_beside(empty, REFERENCE)
    assert out.empty
    assert {"setup", "workload", "ours_error"} <= set(out.columns)
    assert out.set_index(["setup", "workload"]).empty
