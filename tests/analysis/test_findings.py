"""Findings: link load, bottleneck naming, verdict rules and the catalogue, on small tables."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import bottleneck, findings, linkload, testbed_summary, verdicts
from analysis.report import findings as tables
from analysis.scale_model import ScaleError
from analysis.verdicts import Verdict

CATALOGUE = Path(__file__).resolve().parents[2] / "workflows" / "findings.yaml"


def _point(**extra: object) -> dict[str, object]:
    base = {
        "servers": 1,
        "middlewares": 0,
        "client_machines": 3,
        "middleware.replication": None,
        "middleware.sharded": False,
        "workload.key_size": None,
        "workload.data_size": 4096,
        "caps_mbit.server": 100.0,
        "caps_mbit.client": 200.0,
        "caps_mbit.middleware": 800.0,
        "scale": 1.0,  # the plan's s of a point without the scale model
    }
    return {**base, **extra}


def test_get_reply_and_set_request_sizes_match_the_studys_table() -> None:
    sizes = linkload.Sizes(key=12, data=4096)
    # seed 004, Table 1: 4131 B per SET request, 4132 B per GET reply (key lengths vary).
    assert abs(sizes.set_request() - 4131) <= 2
    assert abs(sizes.get_reply(1) - 4132) <= 2


def test_read_bound_of_one_server_is_the_studys() -> None:
    per_get = linkload.egress_mbit(_point(), 0.0, 1.0, 1.0)["server"]
    bound = 101 / per_get  # the study's measured server upload, Mbit/s
    assert bound == pytest.approx(3055, rel=0.01)


def test_writes_through_middleware_load_its_link_by_replicas() -> None:
    one = linkload.egress_mbit(_point(servers=1, middlewares=1), 1000.0, 0.0, 1.0)
    three = linkload.egress_mbit(_point(servers=3, middlewares=1), 1000.0, 0.0, 1.0)
    assert three["middleware"] == pytest.approx(3 * one["middleware"], rel=0.01)
    assert "middleware" not in linkload.egress_mbit(_point(), 1000.0, 0.0, 1.0)


def test_negative_rates_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        linkload.egress_mbit(_point(), -1.0, 0.0, 1.0)


def test_bottleneck_prefers_a_full_link_then_the_shared_host() -> None:
    assert bottleneck.name_bottleneck({"server": 0.95}, {}, None) == "server link"
    assert bottleneck.name_bottleneck({"server": 0.5}, {"client": 0.2}, True) == "host CPU"
    assert bottleneck.name_bottleneck({"server": 0.5}, {"server": 0.97}, False) == "server CPU"
    assert bottleneck.name_bottleneck({"server": 0.5}, {"server": 0.3}, False) == "none saturated"
    assert bottleneck.name_bottleneck({"server": 0.5}, {}, None) == "not identified"


def test_cpu_columns_absent_mean_not_measured() -> None:
    row = pd.Series({"cpu_util_server_mean": 0.5, "cpu_util_client": float("nan")})
    assert bottleneck.cpu_utilisation(row) == {"server": 0.5}
    assert bottleneck.host_saturated(pd.Series({"x": 1})) is None
    assert tables._percentages({}) == "not measured"


def _points(throughputs: dict[int, float]) -> pd.DataFrame:
    rows = []
    for clients, x in throughputs.items():
        for kind, share in (("all", 1.0), ("get", 1.0), ("set", 0.0)):
            rows.append(
                {
                    **_point(),
                    "point": f"vc={clients}",
                    "side": "client",
                    "type": kind,
                    "keys": 1,
                    "clients_total": clients,
                    "throughput_ops_mean": x * share,
                    "level_workload": "read-only",
                }
            )
    return pd.DataFrame(rows)


def test_family_load_takes_the_most_clients_and_names_its_link() -> None:
    (row,) = findings.family_loads("baseline_direct", _points({6: 2000.0, 48: 2950.0}))
    assert row["clients"] == 48
    assert row["link"]["server"] > 0.9
    assert row["bottleneck"] == "server link"
    assert row["cpu"] == {}


def _runs(levels: dict[str, list[float]], column: str = "level_workers", **extra: object):
    """Client runs of one family: per level of `column`, one point whose repetitions have the
    given throughputs (in the study's time: scale 1)."""
    rows = []
    for level, xs in levels.items():
        for i, x in enumerate(xs, start=1):
            rows.append(
                {
                    **_point(),
                    "run": f"{column}={level}/rep{i}",
                    "point": f"{column}={level}",
                    "repetition": i,
                    "side": "client",
                    "type": "all",
                    "keys": 0,
                    "status": "ok",
                    "clients_total": 48,
                    "throughput_ops": x,
                    "response_us_mean": 1e6 * 48 / x,
                    column: level,
                    **extra,
                }
            )
    return pd.DataFrame(rows)


def _windows(runs: pd.DataFrame, sd: float, n: int = 40, seed: int = 1) -> pd.DataFrame:
    """Independent one-second client windows around each run's throughput."""
    rng = np.random.default_rng(seed)
    rows = []
    for _, r in runs.iterrows():
        for w, x in enumerate(rng.normal(r["throughput_ops"], sd, n)):
            rows.append({"run": r["run"], "point": r["point"], "side": "client", "type": "all",
                         "window": w, "throughput_ops": x, "count": x, "sources": 1,
                         "start_ms": 1000.0 * w, "end_ms": 1000.0 * (w + 1),
                         "response_us_mean": r["response_us_mean"]})  # fmt: skip
    return pd.DataFrame(rows)


def _effect_finding(direction: str = "increase", **measure: object) -> dict:
    return {
        "id": "workers",
        "study_of": "2018",
        "claim": "More workers raise throughput",
        "source": "seed 004 §4.2",
        "study": direction,
        "study_text": "up",
        "measure": {
            "kind": "max_throughput",
            "family": "f",
            "factor": "level_workers",
            "low": "8",
            "high": "32",
            **measure,
        },
        "rule": {"kind": "effect", "direction": direction},
        "reasons": {"default": "the reason the catalogue gives"},
    }


def _evaluate(finding: dict, tables: dict[str, pd.DataFrame]) -> findings.Outcome:
    catalogue = {"bottlenecks": [], "findings": [finding]}
    data = findings.Data(families={"f": tables})
    (outcome,) = findings.evaluate(catalogue, data, [])
    return outcome


def test_an_effect_with_repetitions_takes_each_of_the_three_verdicts() -> None:
    clear = _runs({"8": [100, 102, 98], "32": [200, 204, 199]})
    up = _evaluate(_effect_finding(), {"runs": clear})
    assert up.verdict is Verdict.REPRODUCED and up.reason == ""
    assert up.ci_low > 0 and "Welch" in up.test and up.repetitions == 3
    down = _evaluate(_effect_finding("decrease"), {"runs": clear})
    assert down.verdict is Verdict.CONTRADICTED
    assert down.reason == "the reason the catalogue gives"
    noisy = _runs({"8": [100, 160, 70], "32": [120, 90, 150]})
    unsure = _evaluate(_effect_finding(), {"runs": noisy})
    assert unsure.verdict is Verdict.INCONCLUSIVE
    assert unsure.ci_low < 0 < unsure.ci_high
    assert unsure.needed is not None and unsure.needed > 3
    assert f"{unsure.needed} repetitions per level would decide" in unsure.reason
    assert "after 3 repetitions per level" in unsure.reason


def test_one_run_per_level_is_judged_by_its_batch_means() -> None:
    runs = _runs({"8": [1000], "32": [1100]})
    tight = _evaluate(_effect_finding(), {"runs": runs, "windows": _windows(runs, 20)})
    assert tight.verdict is Verdict.REPRODUCED
    assert tight.test.startswith("batch means of one run per level")
    assert tight.repetitions == 1
    loose = _evaluate(_effect_finding(), {"runs": runs, "windows": _windows(runs, 600)})
    assert loose.verdict is Verdict.INCONCLUSIVE
    assert loose.needed is not None and loose.needed >= 2


def test_runs_the_validation_excluded_do_not_count() -> None:
    runs = _runs({"8": [100, 102, 98], "32": [200, 204, 5]})
    data = findings.Data(families={"f": {"runs": runs}}, excluded={"level_workers=32/rep3"})
    catalogue = {"bottlenecks": [], "findings": [_effect_finding()]}
    (outcome,) = findings.evaluate(catalogue, data, [])
    assert outcome.verdict is Verdict.REPRODUCED
    assert outcome.repetitions == 2


def _validation(runs: pd.DataFrame, reasons: dict[str, str]) -> pd.DataFrame:
    """The validation table of `runs`: stable, but for the runs `reasons` names."""
    return pd.DataFrame(
        {
            "family": "f",
            "run": runs["run"],
            "status": "ok",
            "stability": [reasons.get(r, "stable: 30 windows") for r in runs["run"]],
            "excluded": [r in reasons for r in runs["run"]],
        }
    )


def test_a_maximum_is_the_one_the_tables_show_without_imprecise_repetitions() -> None:
    # Level 32 has two points. At 96 clients two stable runs reach 202 ops/s and a third
    # run the validation excluded as imprecise only 120; the points table averages the
    # stable runs (202, the level's maximum), and so must the finding, not take the 192
    # clients' 182 because the imprecise run pulled 96 clients down to 175.
    low = _runs({"8": [100, 102, 98]})
    at96 = _runs({"32": [200, 204, 120]}).assign(clients_total=96)
    at192 = _runs({"32": [180, 185, 182]}).assign(clients_total=192)
    at192["point"] = "level_workers=32,vc=192"
    at192["run"] = at192["point"] + "/rep" + at192["repetition"].astype(str)
    runs = pd.concat([low, at96, at192], ignore_index=True)
    validation = _validation(
        runs,
        {
            "level_workers=32/rep3": "imprecise: 95% CI half-width 24.1% of the mean > 10%",
            "level_workers=8/rep3": "trend: Kendall tau -0.88, p 0.000 < 0.05",
        },
    )
    data = findings.Data(
        families={"f": {"runs": runs}},
        excluded=findings.unusable_runs(validation),
        imprecise=findings.imprecise_runs(validation),
    )
    assert findings.imprecise_runs(validation) == {"level_workers=32/rep3"}
    m = findings.measure_max_throughput(data, _effect_finding()["measure"])
    assert "101 → 202 ops/s" in m.text
    both = "2 repetitions + 2 repetitions (spread of its point's 3 runs)"
    assert m.evidence.test == f"Welch t, {both}"


def test_an_imprecise_run_stands_where_it_is_its_points_only_run() -> None:
    runs = _runs({"8": [1000], "32": [1100]})
    data = findings.Data(
        families={"f": {"runs": runs, "windows": _windows(runs, 20)}},
        imprecise={"level_workers=32/rep1"},
    )
    m = findings.measure_max_throughput(data, _effect_finding()["measure"])
    assert "1,000 → 1,100 ops/s" in m.text
    assert m.evidence.test.startswith("batch means of one run per level")


def test_rules_decide_values_and_thresholds() -> None:
    e = verdicts.Evidence(0.9, 0.88, 0.93, "t", 3, 0.01)
    assert findings.decide({"kind": "within", "tolerance": 0.1}, 0.96, e)[0] is Verdict.REPRODUCED
    far = verdicts.Evidence(0.5, 0.45, 0.55, "t", 3, 0.01)
    assert findings.decide({"kind": "within", "tolerance": 0.1}, 0.96, far)[0] is (
        Verdict.CONTRADICTED
    )
    over = {"kind": "beyond", "direction": "above", "threshold": 0.1}
    assert findings.decide(over, 0.1, verdicts.Evidence(0.6, 0.4, 0.8, "t", 3, 0.1))[0] is (
        Verdict.REPRODUCED
    )
    verdict, distance = findings.decide(over, 0.1, verdicts.Evidence(0.15, 0, 0.3, "t", 3, 0.1))
    assert verdict is Verdict.INCONCLUSIVE and distance == pytest.approx(0.05)
    with pytest.raises(findings.FindingsError, match="unknown rule"):
        findings.decide({"kind": "guess"}, 1, e)


def test_an_effect_whose_interval_leaves_its_sign_open_is_inconclusive() -> None:
    # A fall as large as the seed's 12.8 % lies outside the interval, but the rule's threshold
    # (no change) lies inside it: the seed's own value decides nothing.
    decrease = {"kind": "effect", "direction": "decrease"}
    small = verdicts.Evidence(0.001, -0.068, 0.070, "t", 9, 0.05)
    assert findings.decide(decrease, "decrease", small)[0] is Verdict.INCONCLUSIVE


def test_a_dominant_factorial_term() -> None:
    # 2^2 r=2: A has effect 50, B 5, AB 0.
    rows = []
    for a in (-1, 1):
        for b in (-1, 1):
            for r, noise in ((1, -2.0), (2, 2.0)):
                rows.append({"run": f"{a}{b}{r}", "point": f"{a}{b}", "repetition": r,
                             "side": "client", "type": "all", "status": "ok", "scale": 1.0,
                             "level_a": str(a), "level_b": str(b), "started_at": r,
                             "throughput_ops": 1000 + 50 * a + 5 * b + noise})  # fmt: skip
    runs = pd.DataFrame(rows)
    p = {"family": "f", "factors": {"level_a": "A", "level_b": "B"},
         "high": {"A": "1", "B": "1"}}  # fmt: skip
    data = findings.Data(families={"f": {"runs": runs}})
    m = findings.measure_factorial_top(data, {**p, "study": "A"})
    assert m.text.startswith("A (")
    assert verdicts.beyond(m.evidence, 0, +1) is Verdict.REPRODUCED
    m = findings.measure_factorial_top(data, {**p, "study": "B"})
    assert verdicts.beyond(m.evidence, 0, +1) is Verdict.CONTRADICTED
    # Two terms together: the weaker (B, 5) against the strongest other (AB, 0).
    m = findings.measure_factorial_top(data, {**p, "study": "A+B"})
    assert m.text.startswith("A and B (") and "together" in m.text
    assert m.evidence.estimate == pytest.approx(5, abs=0.5)
    with pytest.raises(findings.FindingsError, match="no term C"):
        findings.measure_factorial_top(data, {**p, "study": "A+C"})
    # An imprecise replication stays: without it the design would be unbalanced.
    vague = findings.Data(families={"f": {"runs": runs}}, imprecise={"112"})
    m = findings.measure_factorial_top(vague, {**p, "study": "A"})
    assert m.evidence is not None and "2 repetitions" in m.evidence.test


def test_diminishing_returns_need_three_levels() -> None:
    runs = _runs({"8": [100, 101, 99], "16": [150, 151, 149], "32": [165, 166, 164]})
    data = findings.Data(families={"f": {"runs": runs}})
    m = findings.measure_gain_per_doubling(data, {"family": "f", "factor": "level_workers"})
    assert m.evidence.estimate == pytest.approx(math.log(1.5) - math.log(1.1), rel=0.01)
    assert verdicts.beyond(m.evidence, 0, +1) is Verdict.REPRODUCED
    # The first doubling gains more than the last, but the middle one gains more than the
    # first: the returns do not diminish at every doubling, and that pair decides.
    uneven = _runs({"8": [100, 101, 99], "16": [120, 121, 119], "32": [180, 181, 179],
                    "64": [190, 191, 189]})  # fmt: skip
    data = findings.Data(families={"f": {"runs": uneven}})
    m = findings.measure_gain_per_doubling(data, {"family": "f", "factor": "level_workers"})
    assert verdicts.beyond(m.evidence, 0, +1) is Verdict.CONTRADICTED
    assert "8→16 against 16→32 decides" in m.text
    # "At a certain point": the last doubling gains less than the one before, and decides.
    last = {"family": "f", "factor": "level_workers", "pair": "last"}
    m = findings.measure_gain_per_doubling(data, last)
    assert verdicts.beyond(m.evidence, 0, +1) is Verdict.REPRODUCED
    assert "16→32 against 32→64 decides" in m.text
    two = findings.Data(families={"f": {"runs": _runs({"8": [100], "32": [150]})}})
    with pytest.raises(findings.FindingsError, match="needs 3"):
        findings.measure_gain_per_doubling(two, {"family": "f", "factor": "level_workers"})


def test_paired_effect_pairs_the_other_levels() -> None:
    runs = pd.concat(
        [
            _runs({"none": [1000, 1010], "full": [900, 905]}, "level_replication",
                  level_servers="5"),
            _runs({"none": [800, 805], "full": [700, 702]}, "level_replication",
                  level_servers="7"),
        ]
    )  # fmt: skip
    runs["run"] = runs["run"] + runs["level_servers"]
    data = findings.Data(families={"f": {"runs": runs}})
    p = {"family": "f", "factor": "level_replication", "low": "none", "high": "full"}
    m = findings.measure_paired(data, p)
    assert "4 pairs" in m.text
    assert verdicts.beyond(m.evidence, 0, -1) is Verdict.REPRODUCED
    only7 = findings.measure_paired(data, {**p, "where": {"level_servers": ["7"]}})
    assert "2 pairs" in only7.text


def test_a_quantile_of_one_run_has_an_order_statistics_interval() -> None:
    buckets = np.arange(1, 1001, dtype=float)
    hist = pd.DataFrame({"bucket_us": buckets, "count": np.ones(1000)})
    s = findings.quantile_sample(hist, 0.99)
    assert s.mean == 990
    assert s.basis == "order statistics"
    # The binomial(1000, 0.99) ranks at 95 %: about 984 to 996.
    assert 2 < s.std_error < 5


def test_a_model_error_keeps_the_measurements_relative_spread() -> None:
    runs = _runs({"a": [1000, 1020, 980]}, "level_x")
    data = findings.Data(families={"f": {"runs": runs}})
    entry = {"point": "level_x=a", "model": 1500.0, "measured": 1000.0,
             "metric": "throughput_ops", "side": "client", "label": "S = 5"}  # fmt: skip
    e = findings.model_error(data, "f", entry)
    assert e.estimate == pytest.approx(0.5)
    assert verdicts.beyond(e, 0.1, +1) is Verdict.REPRODUCED


def test_catalogue_loads_and_missing_data_is_inconclusive() -> None:
    catalogue = findings.load_catalogue(CATALOGUE)
    ids = {f["id"] for f in catalogue["findings"]}
    # The conclusions a reviewer expects, each with its rule.
    for wanted in ("replication-writes", "middleware-cost-writes", "servers-2016",
                   "multiget-keys", "workers-diminishing", "mm1-2016"):  # fmt: skip
        assert wanted in ids
    outcomes = findings.evaluate(catalogue, findings.Data(), [])
    assert all(o.verdict is Verdict.INCONCLUSIVE and o.ours == "not measured" for o in outcomes)
    assert all(o.reason.startswith("not measured") for o in outcomes)
    assert {o.study_of for o in outcomes} == {"2015", "2016", "2018"}


def test_reason_follows_the_computed_bottleneck(tmp_path: Path) -> None:
    doc = {
        "bottlenecks": [],
        "findings": [
            {
                "id": "plateau",
                "study_of": "2018",
                "claim": "Reads plateau at the link",
                "source": "seed 004 §2.1",
                "study": 0.5,
                "study_text": "half",
                "measure": {"kind": "link_ratio", "family": "f"},
                "rule": {"kind": "within", "tolerance": 0.01, "why": "a stated share"},
                "reasons": {"server link": "link reason", "default": "other"},
            }
        ],
    }
    path = tmp_path / "findings.yaml"
    path.write_text(__import__("yaml").safe_dump(doc))
    catalogue = findings.load_catalogue(path)
    points = _points({6: 2000.0, 48: 2950.0})
    runs = _runs({"48": [2940.0, 2950.0, 2960.0]}, "level_vc")
    runs["point"] = "vc=48"
    data = findings.Data(families={"f": {"points": points, "runs": runs}})
    loads = findings.family_loads("f", points)
    (outcome,) = findings.evaluate(catalogue, data, loads)
    # The interval contradicts, and the link's reason is the one the bottleneck picks; the
    # link cap sets the quantity, so the row is by construction, counted apart.
    assert outcome.interval_verdict == Verdict.CONTRADICTED.value
    assert outcome.verdict is Verdict.BY_CONSTRUCTION
    assert outcome.decided_by.startswith("construction (link cap)")
    points["cpu_util_server_mean"] = 0.95
    points["caps_mbit.server"] = 1000.0  # the link no longer binds: the server's CPU does
    loads = findings.family_loads("f", points)
    data = findings.Data(families={"f": {"points": points, "runs": runs}})
    (outcome,) = findings.evaluate(catalogue, data, loads)
    assert outcome.bottleneck == "server CPU"
    assert outcome.verdict is Verdict.CONTRADICTED and outcome.reason == "other"


def test_catalogue_errors_are_clear(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("findings: []\n")
    with pytest.raises(findings.FindingsError, match="bottlenecks"):
        findings.load_catalogue(path)


def test_testbed_numbers_without_budgets_or_delay_check(tmp_path: Path) -> None:
    manifest = tmp_path / "run.json"
    manifest.write_text(
        '{"host_kind": "emulated", "point": {"name": "f/p/rep1", "scale": 0.05,'
        ' "caps_mbit": {"server": 100}}, "link_capacity_mbit": {"server": 95.5}}'
    )
    runs = testbed_summary.runs_table([manifest])
    text = testbed_summary.numbers(runs, {"cores": 2, "kernel": "6.1"}, None)
    assert r"\newcommand{\TestbedScale}{0.05}" in text
    assert r"\newcommand{\TestbedBudgetServer}{none}" in text
    assert r"\newcommand{\TestbedCapServer}{100}" in text
    assert r"\newcommand{\TestbedDelayCheckCase}{none}" in text
    assert r"\newcommand{\TestbedDelayCheckLevels}{--}" in text
    assert r"\newcommand{\TestbedPeriodLongest}{--}" in text
    # A budget of 0.0125 cores keeps the kernel's 1 ms quota with an 80 ms period: 4 ms of
    # the study's time at s = 0.05, the longest a throttled host waits.
    budgeted = tmp_path / "budgeted.json"
    budgeted.write_text(
        '{"host_kind": "emulated", "point": {"name": "f/q/rep1", "scale": 0.05,'
        ' "caps_mbit": {"server": 100}, "budgets_cores": {"server": 0.0125, "middleware": 0.5}},'
        ' "link_capacity_mbit": {"server": 95.5}}'
    )
    periods = testbed_summary.numbers(
        testbed_summary.runs_table([manifest, budgeted]), {"cores": 2}, None
    )
    assert r"\newcommand{\TestbedPeriodLongest}{80}" in periods
    assert r"\newcommand{\TestbedPeriodLongestStudy}{4.0}" in periods
    assert r"\newcommand{\TestbedPeriodLongestRole}{server}" in periods
    check = {
        "levels": [
            {
                "one_way_ms": 1,
                "target_rtt_ms": 2,
                "idle": {"icmp": {"rtt_ms": {"median": 2.04}}},
                "loaded": {"memcached": {"excess_ms": {"median": 0.31}}},
            }
        ]
    }
    assert testbed_summary.delay_case(check) == "measured"
    assert testbed_summary.delay_items(check) == [r"\TestbedDelayLevel{1}{2.04}{2}{+0.31}"]
    # A level without its load measurement keeps the idle one; one without a round trip goes.
    del check["levels"][0]["loaded"]
    check["levels"].append({"one_way_ms": 3, "target_rtt_ms": 6})
    assert testbed_summary.delay_items(check) == [r"\TestbedDelayLevel{1}{2.04}{2}{}"]
    del check["levels"][0]
    assert testbed_summary.delay_case(check) == "unmeasured"
    assert testbed_summary.delay_case({"levels": []}) == "empty"
    assert testbed_summary.delay_case(None) == "none"
    assert r"\newcommand{\TestbedExemptRuns}{0}" in text


def test_testbed_numbers_refuse_a_run_without_its_scale(tmp_path: Path) -> None:
    manifest = tmp_path / "run.json"
    manifest.write_text('{"host_kind": "local", "point": {"name": "f/p/rep1"}}')
    with pytest.raises(ScaleError, match="run f/p/rep1"):
        testbed_summary.numbers(testbed_summary.runs_table([manifest]), {"cores": 2}, None)


def test_testbed_numbers_give_the_budgeted_middlewares_cpu_outside_their_budget(
    tmp_path: Path,
) -> None:
    def manifest(name: str, exempt_s: list[float], budget: float | None) -> Path:
        hosts = [
            {
                "name": f"middleware{i}",
                "role": "middleware",
                "budget_cores": budget,
                "exempt_cpu_s_window": e,
            }
            for i, e in enumerate(exempt_s)
        ] + [{"name": "server1", "role": "server", "budget_cores": 0.1, "exempt_cpu_s_window": 9}]
        path = tmp_path / f"{name}.json"
        doc = {"host_kind": "emulated", "point": {"name": name, "scale": 1.0},
               "cpu": {"window_s": 10.0, "hosts": hosts}}  # fmt: skip
        path.write_text(json.dumps(doc))
        return path

    runs = testbed_summary.runs_table(
        [manifest("a", [0.5, 2.0], 0.1), manifest("b", [0.1], 0.1), manifest("c", [5.0], None)]
    )
    # Per run, the busiest budgeted middleware; unbudgeted ones and servers do not count.
    assert runs["exempt_cores_middleware"].tolist()[:2] == [0.2, 0.01]
    assert pd.isna(runs["exempt_cores_middleware"].iloc[2])
    text = testbed_summary.numbers(runs, {"cores": 2}, None)
    assert r"\newcommand{\TestbedExemptRuns}{2}" in text
    assert r"\newcommand{\TestbedExemptMedian}{0.105}" in text
    assert r"\newcommand{\TestbedExemptMax}{0.200}" in text


def test_findings_show_our_values_in_the_studys_time_and_ratios_do_not_depend_on_s() -> None:
    # The same runs at scale 0.04: 25 times slower throughput over a link capped at 0.04 times.
    def family(scale: float) -> dict[str, pd.DataFrame]:
        points = _points({48: 2950.0 * scale}).assign(scale=scale)
        points["caps_mbit.server"] = points["caps_mbit.server"] * scale
        runs = _runs({"48": [2940.0 * scale, 2950.0 * scale, 2960.0 * scale]}, "level_vc")
        return {"points": points, "runs": runs.assign(point="vc=48", scale=scale)}

    measure = {"kind": "link_ratio", "family": "f"}
    at_one = findings.measure_link_ratio(findings.Data(families={"f": family(1.0)}), measure)
    scaled = family(0.04)
    at_s = findings.measure_link_ratio(findings.Data(families={"f": scaled}), measure)
    assert at_s.evidence.estimate == pytest.approx(at_one.evidence.estimate)
    assert (at_s.evidence.low, at_s.evidence.high) == pytest.approx(
        (at_one.evidence.low, at_one.evidence.high)
    )
    assert at_s.text == at_one.text  # "2,950 of ... ops/s": the study's time
    data = findings.Data(families={"f": scaled})
    assert data.table("f", "points")["throughput_ops_mean"].max() == pytest.approx(2950.0)
    assert scaled["points"]["throughput_ops_mean"].max() == pytest.approx(118.0)  # untouched


def test_the_findings_tables_show_each_verdict_with_its_interval_and_repetitions() -> None:
    runs = _runs({"8": [100, 160, 70], "32": [120, 90, 150]})
    unsure = _evaluate(_effect_finding(), {"runs": runs})
    clear = _evaluate(
        _effect_finding(), {"runs": _runs({"8": [100, 102, 98], "32": [200, 204, 199]})}
    )
    built = dataclasses.replace(
        clear,
        verdict=Verdict.BY_CONSTRUCTION,
        construction="the cap is set to it",
        reason="the cap is set to it",
        decided_by="construction (link cap): the cap is set to it",
        interval_verdict="reproduced",
        id="built",
    )
    untestable = dataclasses.replace(
        unsure, verdict=Verdict.NOT_TESTABLE, reason="the model misses by -90 %", id="model"
    )
    clear = dataclasses.replace(clear, study_value=0.5, id="clear")
    assert clear.ratio == pytest.approx(clear.estimate / 0.5)
    table = tables.findings_table([unsure, clear, built], "2018")
    assert r"\textbf{inconclusive}" in table and r"\textbf{reproduced}" in table
    # How an interval was obtained is a note under the table, marked once per description.
    notes = table[table.index(r"\newcommand{\FindingsEighteenNotes}") :]
    assert r"$^{\mathrm{a}}$\,Welch t, 3 + 3 repetitions" in notes
    assert table.count(r"$^{\mathrm{a}}$") == 4 and "$^{\\mathrm{b}}$" not in table
    assert f"study +50.0\\,\\%, ratio {clear.ratio:.2f}" in table
    # What the interval alone gives has its own column, also where the row is not evidence.
    built_cells = r"\raggedright reproduced & \raggedright \textbf{by construction}; the cap is"
    assert built_cells in table
    assert r"\raggedright inconclusive & \raggedright \textbf{inconclusive}" in table
    assert tables.findings_table([unsure], "2016").count("tabularnewline") == 0
    # A row whose levels have different bottlenecks names each; one alike names it once.
    two = dataclasses.replace(built, level_bottlenecks=("none saturated", "server link"))
    assert r"none saturated $\to$ server link" in tables.findings_table([two], "2018")
    same = dataclasses.replace(built, level_bottlenecks=("server link", "server link"))
    assert r"server link $\to$" not in tables.findings_table([same], "2018")
    text = tables.numbers([unsure, clear, built, untestable], [])
    assert r"\newcommand{\FindingsNotTestable}{1}" in text
    assert r"\newcommand{\FindingsEvidence}{2}" in text
    assert r"\newcommand{\FindingsReproduced}{1}" in text
    assert r"\newcommand{\FindingsInconclusive}{1}" in text
    assert r"\newcommand{\FindingsByConstruction}{1}" in text
    assert r"\newcommand{\FindingsRepetitions}{3 repetitions}" in text
    # Each verdict by itself, for the prose that says agreement only where it is given.
    assert r"\newcommand{\FindingWorkersVerdict}{inconclusive}" in text
    assert r"\newcommand{\FindingClearVerdict}{reproduced}" in text
    assert r"\newcommand{\FindingsContradictedBottlenecks}{none}" in text
    against = dataclasses.replace(clear, verdict=Verdict.CONTRADICTED, bottleneck="middleware CPU",
                                  study_of="2016", id="against")  # fmt: skip
    text = tables.numbers([against, dataclasses.replace(against, id="other")], [])
    assert r"\newcommand{\FindingsContradictedBottlenecks}{middleware CPU (2016) in 2}" in text


def test_every_catalogued_finding_names_its_verdict_macro() -> None:
    assert tables.verdict_macro("threads-2016") == "FindingThreadsSixteenVerdict"
    assert tables.verdict_macro("mm1-2016") == "FindingMmOneSixteenVerdict"
    with pytest.raises(ValueError, match="no TeX macro name"):
        tables.verdict_macro("p_99")
    catalogue = findings.load_catalogue(CATALOGUE)
    names = [tables.verdict_macro(f["id"]) for f in catalogue["findings"]]
    assert len(set(names)) == len(names)


def test_a_change_between_two_families_and_keys_per_request() -> None:
    # The middleware's cost: one family's best point against another's.
    direct = _runs({"64": [16000, 16300, 16200]}, "level_vc")
    through = _runs({"64": [11500, 11600, 11400]}, "level_vc")
    data = findings.Data(families={"d": {"runs": direct}, "m": {"runs": through}})
    p = {"low": {"family": "d"}, "high": {"family": "m"}}
    m = findings.measure_max_throughput(data, p)
    assert m.evidence.estimate == pytest.approx(11500 / 16166.67 - 1, rel=1e-3)
    assert verdicts.beyond(m.evidence, 0, -1) is Verdict.REPRODUCED
    # Keys per second: each level's GETs times its keys per GET.
    gets = _runs({"1": [3000, 3010, 2990], "9": [1000, 1005, 995]}, "level_size", type="get")
    data = findings.Data(families={"g": {"runs": gets}})
    p = {"family": "g", "factor": "level_size", "low": "1", "high": "9", "per_level": True,
         "unit": " keys/s", "type": ["get"]}  # fmt: skip
    m = findings.measure_max_throughput(data, p)
    assert m.evidence.estimate == pytest.approx(2.0, rel=1e-3)
    assert "3,000 → 9,000 keys/s" in m.text


def _multiget_runs() -> pd.DataFrame:
    """A multi-GET family as the runs table holds it: per size, one point of three
    repetitions with a SET and a GET row (`get` at one key, `multiget` above) and their sum
    (`all`), on the clients' side and the middleware's; half the requests are SETs."""
    parts = []
    for size, gets in (("1", [2540, 2550, 2530]), ("9", [960, 965, 970])):
        kind = "get" if size == "1" else "multiget"
        for side in ("client", "middleware"):
            # The middleware counts a few more GETs than the clients (its windows differ).
            k = 1.0 if side == "client" else 1.01
            for t, xs in (("set", gets), (kind, gets), ("all", [2 * x for x in gets])):
                level = {size: [k * x for x in xs]}
                parts.append(_runs(level, "level_size", type=t, side=side, level_sharding="s"))
    return pd.concat(parts, ignore_index=True)


def test_multiget_keys_count_the_gets_keys_at_the_middleware_not_the_sets() -> None:
    # The catalogue's multi-GET finding: a SET carries one key whatever the keys per GET,
    # so the keys per second are the GETs' times their keys, at the middleware as the study
    # (and Table mget) counts them; the clients' every request times the keys doubles them.
    catalogue = findings.load_catalogue(CATALOGUE)
    (finding,) = [f for f in catalogue["findings"] if f["id"] == "multiget-keys"]
    runs = _multiget_runs().assign(level_sharding="sharded")
    data = findings.Data(families={"multiget": {"runs": runs}})
    m = findings.measure_max_throughput(data, finding["measure"])
    assert "2,565 → 8,772 keys/s" in m.text  # 1.01 * 2,540 and 1.01 * 965 * 9
    assert m.evidence.estimate == pytest.approx(965 * 9 / 2540 - 1, rel=1e-6)
    # Counting every request's keys is refused rather than doubled.
    with pytest.raises(findings.FindingsError, match="GETs"):
        findings.measure_max_throughput(data, {**finding["measure"], "type": "all"})


def test_a_paired_change_from_the_lowest_to_the_highest_level() -> None:
    runs = pd.concat(
        [
            _runs({"3": [1000], "7": [800]}, "level_servers", level_replication="none"),
            _runs({"3": [900], "7": [700]}, "level_servers", level_replication="full"),
        ]
    )
    runs["run"] = runs["run"] + runs["level_replication"]
    data = findings.Data(families={"f": {"runs": runs}})
    p = {"family": "f", "factor": "level_servers", "low": "min", "high": "max"}
    m = findings.measure_paired(data, p)
    assert m.evidence.repetitions == 1 and m.evidence.per_repetition == 2
    assert m.evidence.estimate == pytest.approx(((800 / 1000) + (700 / 900)) / 2 - 1)
    only = findings.Data(families={"f": {"runs": runs[runs["level_servers"] == "3"]}})
    with pytest.raises(findings.FindingsError, match="one level"):
        findings.measure_paired(only, p)


def test_a_median_share_is_a_ratio_of_medians_at_the_selected_point() -> None:
    runs = _runs({"24": [1000, 1010, 990]}, side="middleware", type="get")
    scale = float(runs["scale"].iloc[0])
    rows, hist, windows = [], [], []
    for run in runs["run"]:
        for window in range(3):
            rows.append({"run": run, "point": "level_workers=24", "repetition": 1,
                         "window": window, "pool": "read", "type": "get", "count": 10,
                         "server_us_mean": 9000.0, "server_us_var": 1.0, "server_us_p50": 800.0,
                         "server_us_p90": 900.0, "server_us_p99": 950.0,
                         "response_us_mean": 10000.0, "response_us_var": 1.0,
                         "response_us_p50": 2000.0 + window, "response_us_p90": 2200.0,
                         "response_us_p99": 2300.0})  # fmt: skip
            windows.append({"run": run, "window": window, "side": "middleware"})
            # The middleware's GET histogram: its median about 1,000 µs as measured.
            for bucket in (990.0, 1000.0):
                hist.append({"run": run, "point": "level_workers=24", "side": "middleware",
                             "window": window, "type": "get", "bucket_us": bucket,
                             "count": 5, "scale": scale})  # fmt: skip
    tables = {"runs": runs, "pool_requests": pd.DataFrame(rows),
              "histograms": pd.DataFrame(hist), "windows": pd.DataFrame(windows)}  # fmt: skip
    data = findings.Data(families={"f": tables})
    m = findings.measure_median_share(
        data, {"family": "f", "part": "server", "where": {"level_workers": "24"}}
    )
    # The medians' ratio: the server's 800 of the response's histogram median (about 1,000),
    # the value the study's section prints; not the means' (9,000 of 10,000), nor the pool
    # records' average of window medians (about 2,000).
    assert m.evidence is not None and m.evidence.estimate == pytest.approx(0.8, abs=0.01)
    assert "48 clients, 3 runs" in m.text


def test_estimates_are_printed_without_an_exponent() -> None:
    # As :,.3g, but 2,590 where :,.3g gives 2.59e+03.
    assert [tables._significant(x) for x in (2590.4, -1212.9, -457.2, 13.456, 0.012345, 1.0)] == [
        "2,590", "-1,210", "-457", "13.5", "0.0123", "1"
    ]  # fmt: skip


def test_a_model_reason_in_greek_letters_sets_in_latex() -> None:
    assert tables.tex("N(1−ρ)/ρ, λ ± 5 %") == r"N(1$-$$\rho$)/$\rho$, $\lambda$ $\pm$ 5 \%"


def test_the_bottleneck_rows_name_the_busiest_thread_pool_at_their_point() -> None:
    def window(run: str, point: str, pool: str, server: int, busy: float) -> dict:
        return {"run": run, "point": point, "repetition": 1, "side": "middleware",
                "source": "middleware1", "window": 0, "start_ms": 0, "end_ms": 1000,
                "pool": pool, "server": server, "threads": 8, "enqueued": 10,
                "completed": 10, "queue_length_mean": 0.0, "queue_length_max": 0,
                "busy_threads_mean": 8 * busy, "busy_fraction": busy, "in_flight_mean": 0.0,
                "in_flight_max": 0}  # fmt: skip

    table = pd.DataFrame(
        [window("r1", "top", "read", 0, 0.5), window("r1", "top", "read", 2, 0.96),
         window("r2", "top", "read", 2, 0.9), window("r1", "low", "read", 0, 0.1)]
    )  # fmt: skip
    loads = [{"family": "f", "point": "top"}, {"family": "g", "point": "p"}]
    rows = findings.with_threads(loads, {"f": {"pools": table}, "g": {}})
    assert rows[0]["threads"]["pool"] == "read 2"
    assert rows[0]["threads"]["busy"] == pytest.approx(0.93)
    assert rows[1]["threads"] is None  # no pools recorded: the row says "--"


def test_a_full_thread_pool_names_the_bottleneck_and_agrees_with_a_study_that_named_it() -> None:
    # Write-only through the 2018 middleware: no link or budget at 90 %, but its worker pool
    # busy 99.6 % of the time. The study named its worker threads: the groups agree.
    row = {"family": "write_throughput", "group": {}, "point": "p", "clients": 288,
           "throughput": 12000.0, "cpu": {"middleware": 0.72}, "link": {"middleware": 0.86},
           "host_saturated": False, "bottleneck": "none saturated",
           "threads": {"pool": "shared", "busy": 0.996}}  # fmt: skip
    idle = {**row, "family": "multiget", "threads": {"pool": "shared", "busy": 0.03}}
    catalogue = {"bottlenecks": [
        {"family": "write_throughput", "bottleneck": "middleware worker threads",
         "ours": ["middleware threads"], "source": "seed 002"},
        {"family": "multiget", "bottleneck": "server link", "ours": ["server link"],
         "source": "seed 004"}]}  # fmt: skip
    named = [{**r, "bottleneck": findings.with_pool_bottleneck(r)} for r in (row, idle)]
    _, rows = tables.bottleneck_table(named, catalogue)
    assert [r["bottleneck"] for r in rows] == ["middleware threads", "none saturated"]
    assert [r["agrees"] for r in rows] == [True, False]
    assert "BottleneckAgree}{1}" in tables.numbers([], rows)


def test_runs_left_out_as_imprecise_widen_the_interval_of_the_calm_run_kept() -> None:
    # Level 32's point measured three runs; two wandered and were left out as imprecise. Its
    # mean stays the calm run's (the tables'), but its interval is as wide as the three runs
    # are apart, not the calm run's own batch means.
    runs = _runs({"8": [1000, 1010, 990], "32": [1100, 700, 1500]})
    data = findings.Data(
        families={"f": {"runs": runs, "windows": _windows(runs, 20)}},
        imprecise={"level_workers=32/rep2", "level_workers=32/rep3"},
    )
    m = findings.measure_max_throughput(data, _effect_finding()["measure"])
    assert "1,000 → 1,100 ops/s" in m.text
    assert "one run (spread of its point's 3 runs)" in m.evidence.test
    assert m.evidence.low < 0 < m.evidence.high
    calm = findings.Data(families={"f": {"runs": runs.iloc[:4], "windows": _windows(runs, 20)}})
    alone = findings.measure_max_throughput(calm, _effect_finding()["measure"])
    assert alone.evidence.low > 0


def test_a_point_with_a_run_left_out_takes_the_spread_and_freedom_of_all_its_runs() -> None:
    # Two kept runs alone give one degree of freedom (t = 12.7 at 95 %), however close the
    # third run is: the point's three runs are three repetitions, and decide its interval.
    runs = _runs({"32": [1000, 1100, 1050]})
    data = findings.Data(families={"f": {"runs": runs}}, imprecise={"level_workers=32/rep3"})
    kept = data.runs("f")
    sample = findings.level_sample(data, "f", kept, "throughput_ops", "all")
    assert sample.mean == pytest.approx(1050)  # the kept runs' mean, as the tables show
    assert sample.df == 2
    assert sample.std_error == pytest.approx(50 / math.sqrt(2))
    alone = findings.level_sample(data, "f", kept, "throughput_ops", "all", point_spread=False)
    assert alone.df == 1


def test_an_estimate_on_the_threshold_is_not_given_a_repetition_count() -> None:
    e = verdicts.Evidence(0.102, -0.58, 0.78, "paired t over 3 pairs", 3, 0.5)
    reason = findings._inconclusive_reason(e, verdicts.MAX_REPETITIONS + 1)
    assert "no practical number of repetitions" in reason
    assert str(verdicts.MAX_REPETITIONS + 1) not in reason
    assert "5 repetitions per level would decide" in findings._inconclusive_reason(e, 5)


def test_a_model_over_several_entries_restates_its_recipe_only_where_every_entry_does() -> None:
    recipe = {"validity": {"valid": False, "reason": "misses", "in_domain": True,
                           "restates_recipe": "barely queues"}}  # fmt: skip
    queues = {"validity": {"valid": False, "reason": "misses", "in_domain": True}}
    outside = {"validity": {"valid": False, "reason": "rho above 1", "in_domain": False}}
    assert findings._entries_gate([recipe, recipe]) == (findings.RECIPE, "barely queues")
    # One entry whose model queues tests the model: the average is judged.
    assert findings._entries_gate([recipe, recipe, queues]) == ("", "")
    assert findings._entries_gate([recipe, outside])[0] == findings.INVALID


def test_a_change_of_a_time_mostly_a_derived_delay_leaves_the_evidence_where_it_could_decide() -> (
    None
):
    # A SET's server time, 5.0 ms of which is the round trip of a derived 2.5 ms delay: a
    # 10 % rise falls short of "greatly" (sqrt 2), as the constant would make it whatever the
    # system did, so the row is by construction; a time said to stay that rises 40 % anyway
    # moved against the dilution, and stays evidence.
    def server_runs(low_ms: float, high_ms: float) -> pd.DataFrame:
        runs = _runs({"none": [1000] * 3, "full": [1000] * 3}, "level_replication",
                     side="middleware", type="set")  # fmt: skip
        spread = np.tile([0.99, 1.0, 1.01], 2)
        level_ms = np.where(runs["level_replication"] == "none", low_ms, high_ms)
        return runs.assign(server_us_mean=1e3 * level_ms * spread)

    def finding(rule: dict) -> dict:
        delay = {"study": "2016", "pair": "mw_server"}
        measure = {"kind": "paired", "family": "f", "factor": "level_replication",
                   "low": "none", "high": "full", "metric": "server_us_mean", "type": "set",
                   "side": "middleware", "derived_delay": delay}  # fmt: skip
        study = 0.0 if rule["kind"] == "within" else 0.414
        return {"id": "set-time", "claim": "c", "source": "s", "study_of": "2016",
                "study": study, "study_text": "t", "measure": measure, "rule": rule,
                "reasons": {"default": "the reason the catalogue gives"}}  # fmt: skip

    def judged(rule: dict, low_ms: float, high_ms: float) -> findings.Outcome:
        data = findings.Data(families={"f": {"runs": server_runs(low_ms, high_ms)}},
                             derived_delays={"2016": {"mw_server": 2.5}})  # fmt: skip
        (o,) = findings.evaluate({"bottlenecks": [], "findings": [finding(rule)]}, data, [])
        return o

    greatly = {"kind": "beyond", "direction": "above", "threshold": 0.414}
    diluted = judged(greatly, 5.2, 5.7)
    assert diluted.interval_verdict == Verdict.CONTRADICTED.value
    assert diluted.verdict is Verdict.BY_CONSTRUCTION
    assert "round trip of the mw-server delay of 2016" in diluted.reason
    # Beyond the threshold despite the constant: the system's own, reproduced.
    assert judged(greatly, 5.2, 9.0).verdict is Verdict.REPRODUCED
    stays = {"kind": "within", "tolerance": 0.10}
    assert judged(stays, 5.2, 7.3).verdict is Verdict.CONTRADICTED
    assert judged(stays, 5.2, 5.3).verdict is Verdict.BY_CONSTRUCTION
    # Where the delay is under half the time, the change is the system's.
    assert judged(greatly, 12.0, 13.0).verdict is Verdict.CONTRADICTED
