"""Seed 001's factorial design (Table 4) recomputed from its printed runs (Appendix A) by
our 2^k·r code, and the comparison's table rows and numbers on small designs."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.models import factorial
from analysis.studies.s2016 import seed as seed2016

ROOT = Path(__file__).resolve().parents[2]
BLOCK = yaml.safe_load((ROOT / "workflows" / "reference2016.yaml").read_text())["models"][
    "factorial"
]


def test_printed_runs_give_the_printed_effects() -> None:
    result, check = seed2016.recompute(BLOCK)
    assert result.replications == 3 and len(result.observations) == 24
    # The seed prints effects to 0.1 (its w, −1153.8, is 0.13 off −1153.67): the same
    # model was fitted.
    assert check.effect_difference < 0.15
    assert result.effects["w"] == pytest.approx(-1153.67, abs=0.01)


def test_printed_shares_add_up_to_more_than_one() -> None:
    _, check = seed2016.recompute(BLOCK)
    assert check.printed_sum == pytest.approx(1.04, abs=1e-9)
    assert check.recomputed_sum == pytest.approx(1.0, abs=1e-12)
    assert check.recomputed["w"] == pytest.approx(0.2456, abs=5e-5)
    assert check.recomputed["S"] == pytest.approx(0.0212, abs=5e-5)
    assert check.recomputed["S:Rep"] == pytest.approx(0.0439, abs=5e-5)
    # The error's share agrees; the terms' printed shares are about 9/8 of the true ones.
    assert check.printed["error"] == pytest.approx(check.recomputed["error"], abs=0.001)
    assert check.ratio("w") == pytest.approx(1.124, abs=0.003)


def small_design(r: int = 2) -> pd.DataFrame:
    rows = []
    for s, rep, w, i in itertools.product(("3", "7"), ("none", "full"), ("1", "10"), range(r)):
        y = 100 - 10 * (s == "7") - 4 * (w == "10") + (1 if i else -1)
        rows.append([s, rep, w, i, y])
    return pd.DataFrame(rows, columns=["S", "Rep", "w", "repetition", "throughput"])


def test_check_allocation_on_a_small_design() -> None:
    result = factorial.analyse(small_design(), "throughput", ["S", "Rep", "w"],
                               high={"S": "7", "Rep": "full", "w": "10"})  # fmt: skip
    # q_S = −5, q_w = −2, SSE = 16 · 1²: SST = 16·25 + 16·4 + 16 = 480.
    shares = {t: 0.0 for t in result.terms} | {"S": 0.9, "w": 0.2, "error": 0.1}
    check = factorial.check_allocation(result, shares, {"mean": 93.0, "S": -5.5})
    assert check.recomputed["S"] == pytest.approx(400 / 480)
    assert check.recomputed["w"] == pytest.approx(64 / 480)
    assert check.recomputed["error"] == pytest.approx(16 / 480)
    assert check.printed_sum == pytest.approx(1.2)
    assert check.effect_difference == pytest.approx(0.5)
    assert check.ratio("S") == pytest.approx(0.9 / (400 / 480))
    with pytest.raises(factorial.DesignError, match="missing"):
        factorial.check_allocation(result, {"S": 1.0})
    with pytest.raises(factorial.DesignError, match="unknown terms"):
        factorial.check_allocation(result, shares, {"X": 1.0})


def test_factorial_data_rejects_bad_blocks() -> None:
    with pytest.raises(factorial.DesignError, match="lack columns"):
        seed2016.factorial_data({"columns": ["S", "Rep"], "rows": []})
    with pytest.raises(factorial.DesignError, match="needs 5 values"):
        seed2016.factorial_data(
            {"columns": ["S", "Rep", "w", "repetition", "throughput"], "rows": [[3, "none"]]}
        )


def test_comparison_rows_and_numbers() -> None:
    seed, check = seed2016.recompute(BLOCK)
    data = small_design()
    ours = factorial.analyse(data, "throughput", ["S", "Rep", "w"],
                             high={"S": "7", "Rep": "full", "w": "10"})  # fmt: skip
    rows = seed2016.comparison_rows(ours, seed, check, BLOCK["effects"])
    assert [r[0] for r in rows] == ["mean", "S", "Rep", "w", "S:Rep", "S:w", "Rep:w",
                                    "S:Rep:w", "error", "sum"]  # fmt: skip
    assert rows[-1][4] == "104.0\\,\\%" and rows[-1][5] == "100.0\\,\\%"
    assert rows[3][3] == "-1{,}153.8" and rows[3][5] == "24.6\\,\\%"
    assert all(len(r) == 6 for r in rows)
    assert seed2016.top_term(ours.variation) == "S"
    runs = data.assign(cpu_util_middleware=[0.5 if s == "3" else 0.9 for s in data["S"]],
                       cpu_util_server=0.2)  # fmt: skip
    n = seed2016.compare_numbers(
        ours,
        seed,
        seed2016.cpu_by_servers(runs, "cpu_util_middleware"),
        seed2016.cpu_by_servers(runs, "cpu_util_server"),
        {"3": 75, "7": 175},
    )
    # The study's throughput varies most with w, ours with S; our middleware used 50 % of
    # its CPU budget with 3 servers and 90 % with 7 (75 and 175 read and write threads).
    assert (n["SixteenFactCompareCase"], n["SixteenFactCpuCase"]) == ("different", "more")
    assert (n["SixteenFactCpuLow"], n["SixteenFactCpuHigh"]) == ("50\\,\\%", "90\\,\\%")
    assert (n["SixteenFactThreadsLow"], n["SixteenFactThreadsHigh"]) == ("75", "175")
    unknown = seed2016.compare_numbers(ours, seed, {}, {}, {})
    assert (unknown["SixteenFactCpuCase"], unknown["SixteenFactThreadsCase"]) == (
        "unknown",
        "unknown",
    )
    same = seed2016.compare_numbers(seed, seed, {}, {}, {})
    assert same["SixteenFactCompareCase"] == "same"
