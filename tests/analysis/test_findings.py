"""Findings: link load, bottleneck naming, verdict rules and the catalogue, on small tables."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis import bottleneck, findings, linkload, testbed_summary
from analysis.report import findings as tables

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


def test_effect_rule_needs_direction_and_significance() -> None:
    rule = {"kind": "effect", "direction": "increase"}
    up = findings.welch([100, 101, 99], [200, 201, 199])
    assert findings.verdict(rule, "increase", up, 0.95)
    down = findings.welch([200, 201, 199], [100, 101, 99])
    assert not findings.verdict(rule, "increase", down, 0.95)
    noisy = findings.welch([100, 300], [150, 250])
    assert not findings.verdict(rule, "increase", noisy, 0.95)
    single = findings.welch([100], [200])  # one repetition: no test, no verdict
    assert not findings.verdict(rule, "increase", single, 0.95)


def test_value_rules() -> None:
    assert findings.verdict({"kind": "within", "tolerance": 0.1}, 0.96, 0.9, 0.95)
    assert not findings.verdict({"kind": "within", "tolerance": 0.1}, 0.96, 0.8, 0.95)
    assert findings.verdict({"kind": "sign", "tolerance": 0.1}, -0.3, -0.7, 0.95)
    assert not findings.verdict({"kind": "sign", "tolerance": 0.1}, -0.3, 0.7, 0.95)
    assert findings.verdict({"kind": "same"}, "W", "W", 0.95)
    with pytest.raises(findings.FindingsError, match="unknown rule"):
        findings.verdict({"kind": "guess"}, 1, 1, 0.95)


def test_paired_effect_pairs_levels() -> None:
    t = findings.paired([100, 200, 300], [90, 181, 272])
    assert t.high < t.low and t.p < 0.05


def test_macro_numbers_are_parsed() -> None:
    assert findings.number_of(r"-70.8\,\%") == pytest.approx(-70.8)
    assert findings.number_of("2{,}311") == pytest.approx(2311)
    with pytest.raises(findings.FindingsError):
        findings.number_of("n/a")


def test_catalogue_loads_and_missing_data_is_not_measured() -> None:
    catalogue = findings.load_catalogue(CATALOGUE)
    assert len(catalogue["findings"]) >= 8
    outcomes = findings.evaluate(catalogue, findings.Data(), [])
    assert all(not o.reproduced and o.ours == "not measured" for o in outcomes)
    assert all(o.reason.startswith("no data") for o in outcomes)


def test_reason_follows_the_computed_bottleneck(tmp_path: Path) -> None:
    doc = {
        "bottlenecks": [],
        "findings": [
            {
                "id": "plateau",
                "claim": "Reads plateau at the link",
                "source": "seed 004 §2.1",
                "study": 0.5,
                "study_text": "half",
                "measure": {"kind": "link_ratio", "family": "f"},
                "rule": {"kind": "within", "tolerance": 0.01},
                "reasons": {"server link": "link reason", "default": "other"},
            }
        ],
    }
    path = tmp_path / "findings.yaml"
    path.write_text(__import__("yaml").safe_dump(doc))
    catalogue = findings.load_catalogue(path)
    points = _points({6: 2000.0, 48: 2950.0})
    data = findings.Data(families={"f": {"points": points}})
    loads = findings.family_loads("f", points)
    (outcome,) = findings.evaluate(catalogue, data, loads)
    assert not outcome.reproduced
    assert outcome.reason == "link reason"


def test_catalogue_errors_are_clear(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("findings: []\n")
    with pytest.raises(findings.FindingsError, match="bottlenecks"):
        findings.load_catalogue(path)


def test_testbed_numbers_without_budgets_or_delay_check(tmp_path: Path) -> None:
    manifest = tmp_path / "run.json"
    manifest.write_text(
        '{"host_kind": "emulated", "point": {"name": "f/p/rep1", "caps_mbit": {"server": 100}},'
        ' "link_capacity_mbit": {"server": 95.5}}'
    )
    runs = testbed_summary.runs_table([manifest])
    text = testbed_summary.numbers(runs, {"cores": 2, "kernel": "6.1"}, None)
    assert r"\newcommand{\TestbedBudgetServer}{none}" in text
    assert r"\newcommand{\TestbedCapServer}{100}" in text
    assert "No delay check" in text
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
    sentence = testbed_summary.delay_accuracy(check)
    assert "2.04" in sentence and "+0.31" in sentence
    assert "no delays" in testbed_summary.delay_accuracy({"levels": []})
    assert r"\newcommand{\TestbedExemptRuns}{0}" in text


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
        doc = {"host_kind": "emulated", "point": {"name": name},
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
    # The same run at scale 0.04: 25 times slower throughput over a link capped at 0.04 times.
    study = _points({48: 2950.0})
    scaled = _points({48: 2950.0 * 0.04}).assign(scale=0.04)
    scaled["caps_mbit.server"] = scaled["caps_mbit.server"] * 0.04
    measure = {"kind": "link_ratio", "family": "f"}
    at_one = findings.measure_link_ratio(findings.Data(families={"f": {"points": study}}), measure)
    at_s = findings.measure_link_ratio(findings.Data(families={"f": {"points": scaled}}), measure)
    assert at_s.value == pytest.approx(at_one.value)
    assert at_s.text == at_one.text  # "2,950 of ... ops/s": the study's time
    data = findings.Data(families={"f": {"points": scaled}})
    assert data.table("f", "points")["throughput_ops_mean"].max() == pytest.approx(2950.0)
    assert scaled["throughput_ops_mean"].max() == pytest.approx(118.0)  # input untouched
