"""The validation appendix's per-family summary and the aggregation of request types, on
small hand-made tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.aggregate import all_types
from analysis.report.validation import lengths_tabular, run_rows, summary_tabular
from analysis.validate import family_summary, needed_seconds, run_lengths, with_point_reruns
from common import stability


def checked(rows: list[tuple[str, str, str, bool, str, int]]) -> pd.DataFrame:
    """Rows of a check_runs table: family, run, status, stable, stability reason, reruns."""
    return pd.DataFrame(
        [
            {"family": f, "run": r, "status": st, "stable": ok, "stability": why, "reruns": n}
            for f, r, st, ok, why, n in rows
        ]
    )


def test_summary_counts_runs_by_outcome_and_unstable_runs_by_every_failed_criterion() -> None:
    table = checked(
        [
            ("a", "a/x=1/rep1", "ok", True, "stable: 12 windows", 0),
            ("a", "a/x=1/rep2", "ok", False, "trend: Kendall tau +0.4, p 0.01 < 0.05", 1),
            (
                "a",
                "a/x=2/rep1",
                "ok",
                False,
                "too few windows: 6 < 10; imprecise: 95% CI half-width 12% of the mean > 10%",
                2,
            ),
            ("a", "a/x=2/rep2", "failed", False, "", 1),
            ("b", "b/y=1/rep1", "ok", False, "no complete windows", 0),
        ]
    )
    s = family_summary(table).set_index("family")
    assert s.loc["a"].to_dict() == {
        "runs": 4,
        "stable": 1,
        "unstable": 2,
        "trend": 1,
        "imprecise": 1,
        "too few windows": 1,
        "steal": 0,
        "speed": 0,
        "failed": 1,
        "reruns": 4,
    }
    # A completed run without complete windows has too few of them.
    assert s.loc["b", "unstable"] == 1 and s.loc["b", "too few windows"] == 1
    text = summary_tabular(family_summary(table))
    # A family without words reads as its identifier's parts, not as code.
    assert "\na & 4 & 1 & 2 & 1 & 1 & 1 & 0 & 0 & 1 & 4 \\\\" in text
    assert r"\midrule all & 5 & 1 & 3 & 1 & 1 & 2 & 0 & 0 & 1 & 4 \\" in text
    # Unstable runs on a machine whose hypervisor took more than a fifth of the CPU.
    stolen = table.assign(steal=[0.5, 0.5, 0.5, 0.5, 0.1])
    assert family_summary(stolen).set_index("family").loc["a", "steal"] == 2
    # Unstable runs during which the CPU's speed spread by more than a quarter.
    slowed = table.assign(speed_spread=[0.4, 0.1, 0.4, 0.4, 0.4])
    summary = family_summary(slowed).set_index("family")
    assert (summary.loc["a", "speed"], summary.loc["b", "speed"]) == (1, 1)
    assert r"\caption" not in text


def test_run_rows_are_macros_for_the_sections_longtable() -> None:
    table = checked([("a", "a/x=1,y=big_one/rep2", "ok", True, "stable", 0)]).assign(
        throughput_ops=1234.4,
        windows=12,
        trend_p=0.5,
        rel_half_width=0.031,
        law_error=math.nan,
        bound_fraction=0.2,
        flags="",
    )
    text = run_rows(table)
    assert text.startswith(r"\newcommand{\ValidationRunHead}{\toprule")
    assert r"\quad 1 big one r2 & 1234 & 12 & 0.50 & 3.1\,\% & -- & 0.20 &  \\" in text
    assert r"\caption" not in text


def window(side: str, kind: str, count: int, tput: float, resp: float | None) -> dict:
    return {"run": "r", "point": "p", "repetition": 1, "side": side, "window": 0,
            "type": kind, "count": count, "throughput_ops": tput,
            "response_us_mean": resp, "keys": 1}  # fmt: skip


def test_all_types_sums_throughput_and_weights_times_by_request_count() -> None:
    w = pd.DataFrame(
        [
            window("client", "get", 300, 300.0, 100.0),
            window("client", "set", 100, 100.0, 500.0),
            window("middleware", "get", 10, 10.0, None),  # no time measured: no weight
            window("middleware", "set", 30, 30.0, 40.0),
        ]
    )
    out = all_types(w).set_index("side")
    assert set(out["type"]) == {"all"}
    assert out.loc["client", "throughput_ops"] == pytest.approx(400.0)
    assert out.loc["client", "count"] == 400
    assert out.loc["client", "response_us_mean"] == pytest.approx((300 * 100 + 100 * 500) / 400)
    assert out.loc["middleware", "response_us_mean"] == pytest.approx(40.0)


def test_run_lengths_give_each_family_the_measured_length_its_check_asks_for() -> None:
    rows = [
        # family, status, measured seconds, windows, CI half-width over the mean
        ("a", "ok", 10.0, 40, 0.2),
        ("a", "ok", 10.0, 40, 0.05),
        ("a", "failed", 10.0, 0, math.nan),
        # One-second windows: ten of them are needed whatever the precision.
        ("b", "ok", 5.0, 5, 0.01),
    ]
    columns = ["family", "status", "measured_s", "windows", "rel_half_width"]
    table = pd.DataFrame(rows, columns=columns)
    lengths = run_lengths(table).set_index("family")
    # (0.2 / 0.1)^2 = 4 times 10 s; the precise run needs only its ten windows (2.5 s).
    assert lengths.loc["a", "runs"] == 2
    assert lengths.loc["a", "needed_s"] == pytest.approx((40.0 + 2.5) / 2)
    assert lengths.loc["a", "needed_s_p90"] == pytest.approx(2.5 + 0.9 * 37.5)
    assert lengths.loc["b", "needed_s"] == pytest.approx(10.0)
    text = lengths_tabular(run_lengths(table))
    assert "\na & 2 & 10.0 & 12.5\\,\\% & 18.5\\,\\% & 21.2 & 36.2 \\\\" in text


def test_a_run_measured_for_the_length_it_needs_closes_its_interval_to_the_bound() -> None:
    # Independent quarter-second windows with a coefficient of variation of 0.5: 40 windows
    # give a half-width near 16 %; measured for the length needed_seconds predicts, the
    # half-width is at the check's bound, in the median over many runs.
    rng = np.random.default_rng(7)
    at_needed = []
    for _ in range(300):
        x = rng.normal(1000.0, 500.0, size=400)
        first = stability.assess(x[:40])
        windows = round(4 * needed_seconds(10.0, first.rel_half_width))
        if windows > len(x):
            continue
        at_needed.append(stability.assess(x[:windows]).rel_half_width)
    assert len(at_needed) > 200
    assert 0.085 <= float(np.median(at_needed)) <= 0.115


def test_reruns_of_a_point_measured_alone_are_counted_from_its_kept_attempts() -> None:
    # A run measured alone lists no attempts in its manifest (reruns 0 there); the run times
    # count the attempts it left among the failures, as for a series step.
    table = checked(
        [
            ("mq", "mq/c=10/rep1", "ok", True, "stable: 12 windows", 0),
            ("mq", "mq/c=10/rep2", "ok", False, "trend: Kendall tau +0.4, p 0.01 < 0.05", 0),
            ("b", "b/x=1/rep1", "ok", True, "stable: 12 windows", 1),
        ]
    )
    times = pd.DataFrame({"run": ["mq/c=10/rep1", "mq/c=10/rep2"], "attempts": [1, 3]})
    counted = with_point_reruns(table, times)
    assert counted["reruns"].tolist() == [0, 2, 1]  # a run the times lack keeps its own
    summary = family_summary(counted).set_index("family")
    assert summary.loc["mq", "reruns"] == 2 and summary.loc["b", "reruns"] == 1
