"""The verdicts under the other calibration sessions (analysis.sensitivity)."""

from __future__ import annotations

import pytest

from analysis import sensitivity
from analysis.verdicts import Evidence

# Two later sessions refitted the server's and the middleware's targets (`mwlab dataset
# merge` appends each session's refits in turn).
RECORD = {
    "targets": [
        {"name": "server_max", "fit": {"intercept": 0.0, "slope": 1000.0, "speed": 0.2}},
        {"name": "mw_plateau", "fit": {"intercept": 0.0, "slope": 1000.0, "speed": 0.1}},
    ],
    "refits": [
        {"name": "server_max", "role": "server", "kept": 0.2, "other": 0.3,
         "studies": ["2018"], "throughput_ratio": 1.25},
        {"name": "mw_plateau", "role": "middleware", "kept": 0.1, "other": 0.1,
         "studies": ["2018"], "throughput_ratio": 1.0},
        {"name": "server_max", "role": "server", "kept": 0.2, "other": 0.2,
         "studies": ["2018"], "throughput_ratio": None},
        {"name": "mw_plateau", "role": "middleware", "kept": 0.1, "other": 0.15,
         "studies": ["2018"], "throughput_ratio": None},
    ],
}  # fmt: skip
RISE = {"kind": "max_throughput", "rule": {"kind": "effect", "direction": "increase"}}


def _decide(e: Evidence) -> str:
    """An effect rule's verdict: an increase beyond zero."""
    if e.low > 0:
        return "reproduced"
    return "contradicted" if e.high < 0 else "inconclusive"


def test_each_later_session_gives_its_factors_and_its_machine() -> None:
    s = sensitivity.scenarios(RECORD)
    assert [x.name for x in s] == [
        "session 2's factors", "session 2's machine", "session 3's factors"
    ]  # fmt: skip
    # Session 2 fitted the server 1.5 times the budget: a server-bound level would give 1.5x.
    assert s[0].factor("2018", "server CPU") == pytest.approx(1.5)
    # Its server ran 1.25x slower under one budget: had the runs met it, 1 / 1.25.
    assert s[1].factor("2018", "server CPU") == pytest.approx(0.8)
    # A link, and a study the refit does not serve, take no factor.
    assert s[0].factor("2018", "server link") == 1.0
    assert s[0].factor("2016", "server CPU") == 1.0


def test_a_change_between_levels_one_budget_bounds_does_not_move() -> None:
    e = Evidence(0.3, 0.1, 0.5, "t", 3, 0.1)
    scenario = sensitivity.scenarios(RECORD)[0]
    same = sensitivity.moved(
        e, "change", RISE, "2018", "server CPU", ["server CPU", "server CPU"], scenario
    )
    assert same is not None and same.estimate == pytest.approx(0.3)
    result = sensitivity.judge(
        e, "change", RISE, "2018", "server CPU", ["server CPU", "server CPU"], "reproduced",
        sensitivity.scenarios(RECORD), _decide,
    )  # fmt: skip
    # No scenario moved it: the verdict stands, and the row says nothing of sessions.
    assert result.stands and result.moved == [] and result.text() == ""


def test_a_change_between_levels_bound_apart_moves_by_their_factors_ratio() -> None:
    # Middleware-bound at the low level, server-bound at the high one: under session 2's
    # factors the high level gains 1.5x, the low one nothing.
    e = Evidence(-0.2, -0.3, -0.1, "t", 3, 0.1)
    levels = ["middleware CPU", "server CPU"]
    scenario = sensitivity.scenarios(RECORD)[0]
    moved = sensitivity.moved(e, "change", RISE, "2018", "middleware CPU", levels, scenario)
    assert moved is not None
    assert moved.estimate == pytest.approx(0.8 * 1.5 - 1)
    assert (moved.low, moved.high) == (pytest.approx(0.7 * 1.5 - 1), pytest.approx(0.9 * 1.5 - 1))
    result = sensitivity.judge(
        e, "change", RISE, "2018", "middleware CPU", levels, "contradicted",
        sensitivity.scenarios(RECORD), _decide,
    )  # fmt: skip
    # Contradicted with the kept factors, reproduced with session 2's: the session decides.
    assert not result.stands
    assert "reproduced under session 2's factors" in result.text()


def test_a_time_is_not_moved() -> None:
    # A time holds emulated delays beside its CPU-bound part: no factor says how far it moves.
    e = Evidence(0.5, 0.4, 0.6, "t", 3, 0.1)
    levels = ["middleware CPU", "server CPU"]
    scenario = sensitivity.scenarios(RECORD)[0]
    time = {"kind": "paired", "metric": "server_us_mean"}
    assert sensitivity.moved(e, "change", time, "2018", "x", levels, scenario) is None
    throughput = {"kind": "paired"}
    assert sensitivity.moved(e, "change", throughput, "2018", "x", levels, scenario) is not None


def test_an_absolute_value_moves_with_its_bounding_role() -> None:
    e = Evidence(1.0, 0.95, 1.05, "t", 3, 0.02)
    scenario = sensitivity.scenarios(RECORD)[1]
    moved = sensitivity.moved(
        e, "ratio", {"kind": "study_ratio"}, "2018", "server CPU", ["server CPU"], scenario
    )
    assert moved is not None and moved.estimate == pytest.approx(0.8)


def test_a_time_moves_only_beyond_the_known_delay_it_holds() -> None:
    # 5.08 -> 7.47 ms, 5.0 ms of each the round trip of a derived delay; the high level is
    # bound by the middleware's CPU budget, the low one by its threads (factor 1). A session
    # whose factor is twice the kept one halves the high level's rest: 2.47 -> 1.235 ms.
    e = Evidence(7.47 / 5.08 - 1, 0.38, 0.56, "paired t", 9, 0.1)
    measure = {"kind": "paired", "metric": "server_us_mean", "factor": "level_servers"}
    faster = sensitivity.Scenario("session 2's factors", {("2016", "middleware"): 2.0})
    levels = ["middleware threads", "middleware CPU"]
    fixed = sensitivity.FixedTime(5.08, 5.0)
    m = sensitivity.moved(e, "change", measure, "2016", "x", levels, faster, fixed)
    assert m is not None
    assert m.estimate == pytest.approx((5.0 + 2.47 / 2) / 5.08 - 1)
    assert m.low < m.estimate < m.high
    # Without the delay known, a time is not moved.
    assert sensitivity.moved(e, "change", measure, "2016", "x", levels, faster) is None
    # A level bound by no fitted budget keeps its time.
    same = sensitivity.moved(e, "change", measure, "2016", "x", ["a link", "a link"], faster, fixed)
    assert same is not None and same.estimate == pytest.approx(e.estimate)
