"""2^k·r factorial analysis: Jain's printed example, statsmodels OLS, and design errors."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from analysis.models import factorial
from analysis.models.factorial import DesignError

# Jain, Table 18.1 / Example 18.1: memory (4, 16 MB) × cache (1, 2 kB), three repetitions.
JAIN = pd.DataFrame(
    {
        "memory": [4] * 3 + [16] * 3 + [4] * 3 + [16] * 3,
        "cache": [1] * 6 + [2] * 6,
        "perf": [15, 18, 12, 45, 48, 51, 25, 28, 19, 75, 75, 81],
    }
)


def test_jain_example_18_1() -> None:
    # Jain prints 90 % intervals; the report's level is analysis.aggregate.CI_LEVEL.
    res = factorial.analyse(JAIN, "perf", ["memory", "cache"], alpha=0.10)
    assert res.effects == pytest.approx(
        {"mean": 41, "memory": 21.5, "cache": 9.5, "memory:cache": 5}
    )
    assert res.sum_of_squares["memory"] == pytest.approx(5547)
    assert res.sum_of_squares["cache"] == pytest.approx(1083)
    assert res.sum_of_squares["memory:cache"] == pytest.approx(300)
    assert res.sum_of_squares["error"] == pytest.approx(102)
    assert res.sum_of_squares["total"] == pytest.approx(7032)
    printed = {"memory": 0.7888, "cache": 0.1540, "memory:cache": 0.0427, "error": 0.0145}
    for term, share in printed.items():
        assert res.variation[term] == pytest.approx(share, abs=0.00006)
    assert res.error_dof == 8
    assert res.std_error == pytest.approx(3.57, abs=0.005)
    assert res.std_effect == pytest.approx(1.03, abs=0.005)
    # Jain's 90% intervals use t[0.95; 8] = 1.86; the exact quantile is 1.8595.
    printed_ci = {
        "mean": (39.08, 42.91),
        "memory": (19.58, 23.41),
        "cache": (7.58, 11.41),
        "memory:cache": (3.08, 6.91),
    }
    for term, (lo, hi) in printed_ci.items():
        assert res.confidence_intervals[term] == pytest.approx((lo, hi), abs=0.011)
    assert all(res.significant().values())


def _random_design(k: int, r: int, seed: int) -> tuple[pd.DataFrame, list[str]]:
    rng = np.random.default_rng(seed)
    names = [f"f{i}" for i in range(k)]
    rows = []
    for levels in itertools.product([0, 1], repeat=k):
        for _ in range(r):
            row = {
                n: (10 * (i + 1) if lv else i + 1)
                for i, (n, lv) in enumerate(zip(names, levels, strict=True))
            }
            row["y"] = 100 + sum(5 * (i + 1) * (2 * lv - 1) for i, lv in enumerate(levels))
            row["y"] += 3 * np.prod([2 * lv - 1 for lv in levels[:2]]) + rng.normal(0, 2)
            rows.append(row)
    df = pd.DataFrame(rows).sample(frac=1, random_state=seed).reset_index(drop=True)
    return df, names


@pytest.mark.parametrize("k,r", [(1, 4), (2, 3), (3, 3), (4, 2)])
def test_effects_equal_ols_on_coded_factors(k: int, r: int) -> None:
    df, names = _random_design(k, r, seed=k * 10 + r)
    res = factorial.analyse(df, "y", names, alpha=0.05)
    coded = res.observations
    design = pd.DataFrame({"const": 1.0}, index=coded.index)
    for term in factorial.terms(names):
        design[":".join(term)] = np.prod([coded[f] for f in term], axis=0)
    ols = sm.OLS(coded["y"], design).fit()
    assert ols.params["const"] == pytest.approx(res.effects["mean"], rel=1e-10)
    for term in res.terms:
        assert ols.params[term] == pytest.approx(res.effects[term], rel=1e-9, abs=1e-10)
        lo, hi = ols.conf_int(alpha=0.05).loc[term]
        assert res.confidence_intervals[term] == pytest.approx((lo, hi), rel=1e-9, abs=1e-9)
    assert sum(res.variation.values()) == pytest.approx(1.0, rel=1e-12)
    assert len(res.terms) == 2**k - 1
    assert res.sum_of_squares["error"] == pytest.approx(ols.ssr, rel=1e-9)
    assert np.allclose(res.observations["residual"], ols.resid)


def test_sign_table_is_orthogonal() -> None:
    table = factorial.sign_table(["A", "B", "C"])
    assert list(table.columns) == ["I", "A", "B", "C", "A:B", "A:C", "B:C", "A:B:C"]
    gram = table.T @ table
    assert (gram.to_numpy() == 8 * np.eye(8)).all()


def test_multiplicative_model_is_additive_in_log10() -> None:
    df, names = _random_design(3, 3, seed=5)
    df["y"] = 10 ** (df["y"] / 50)
    mult = factorial.analyse(df, "y", names, multiplicative=True)
    logged = df.assign(log_y=np.log10(df["y"]))
    add = factorial.analyse(logged, "log_y", names)
    assert mult.effects == pytest.approx(add.effects)
    assert mult.variation == pytest.approx(add.variation)
    assert mult.multiplicative_factors()["mean"] == pytest.approx(10 ** add.effects["mean"])
    with pytest.raises(DesignError, match="positive"):
        factorial.analyse(df.assign(y=-df["y"]), "y", names, multiplicative=True)


def test_high_level_override_and_text_levels() -> None:
    df = JAIN.assign(cache=JAIN["cache"].map({1: "small", 2: "big"}))
    # "big" < "small" as text, so "small" is +1 unless overridden.
    default = factorial.analyse(df, "perf", ["memory", "cache"])
    assert default.levels["cache"] == {"low": "big", "high": "small"}
    assert default.effects["cache"] == pytest.approx(-9.5)
    assert default.effects["memory:cache"] == pytest.approx(-5)
    flipped = factorial.analyse(df, "perf", ["memory", "cache"], high={"cache": "big"})
    assert flipped.effects["cache"] == pytest.approx(9.5)
    assert flipped.effects["memory"] == pytest.approx(21.5)
    numeric = factorial.analyse(JAIN, "perf", ["memory", "cache"], high={"memory": "4"})
    assert numeric.effects["memory"] == pytest.approx(-21.5)


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d.iloc[:-3], "all 4 level combinations"),
        (lambda d: d.iloc[:-1], "unequal replications"),
        (lambda d: d.assign(cache=[1, 2, 3] * 4), "exactly two values"),
        (lambda d: d.assign(perf=["x"] * 12), "non-numeric"),
        (lambda d: d.drop(columns="cache"), "not in data"),
    ],
)
def test_design_errors(mutate, message: str) -> None:
    with pytest.raises(DesignError, match=message):
        factorial.analyse(mutate(JAIN), "perf", ["memory", "cache"])


def test_single_replication_has_no_error_term() -> None:
    res = factorial.analyse(JAIN.iloc[::3], "perf", ["memory", "cache"])
    assert res.replications == 1
    assert res.variation["error"] == pytest.approx(0)
    assert all(np.isnan(lo) for lo, _ in res.confidence_intervals.values())


def test_diagnostic_plots(tmp_path) -> None:
    res = factorial.analyse(JAIN, "perf", ["memory", "cache"])
    out = factorial.plot_diagnostics(res, tmp_path / "diag.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000


def test_the_diagnostics_axis_names_the_response_in_words_with_its_unit() -> None:
    df, names = _random_design(2, 2, seed=3)
    df["throughput_ops"] = df["y"] + 100
    additive = factorial.analyse(df, "throughput_ops", names)
    assert factorial.response_label(additive) == "throughput (ops/s)"
    mult = factorial.analyse(df, "throughput_ops", names, multiplicative=True)
    assert factorial.response_label(mult) == "log10 throughput (ops/s)"
    other = factorial.analyse(df.rename(columns={"y": "queue_len"}), "queue_len", names)
    assert factorial.response_label(other) == "queue len"
    # Residuals are in the unit of what the model fits.
    assert factorial.residual_label(additive) == "residual (ops/s)"
    assert factorial.residual_label(mult, "residual quantile") == "residual quantile (log10 ops/s)"
    assert factorial.residual_label(other) == "residual"
