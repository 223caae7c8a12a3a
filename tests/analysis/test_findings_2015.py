"""Seed 003's claims in the findings catalogue: each is well-formed and belongs to the 2015
table, and the measures they use decide on our data the way the rule says (the database's cap
by the best point over the printed 1,950, the drop and the plateau by paired levels)."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from analysis import findings
from analysis.report import findings as tables
from analysis.verdicts import Verdict

CATALOGUE = findings.load_catalogue("workflows/findings.yaml")
BY_ID = {f["id"]: f for f in CATALOGUE["findings"] if f["study_of"] == "2015"}


def runs(family: str, levels: dict[tuple[str, ...], list[float]], columns: tuple[str, ...],
         scale: float = 0.1) -> pd.DataFrame:  # fmt: skip
    """Client runs (type all) with repetitions at the given levels, measured throughputs at
    scale `scale`."""
    rows = []
    for level, xs in levels.items():
        point = ",".join(f"{c}={v}" for c, v in zip(columns, level, strict=True))
        for i, x in enumerate(xs, start=1):
            rows.append({
                "run": f"{family}/{point}/rep{i}", "point": point, "repetition": i,
                "side": "client", "type": "all", "keys": 0, "status": "ok", "scale": scale,
                "throughput_ops": x, "response_us_mean": 1000.0, "clients_total": 60,
                **{f"level_{c}": v for c, v in zip(columns, level, strict=True)},
            })  # fmt: skip
    return pd.DataFrame(rows)


def evaluate(finding: dict, families: dict[str, dict[str, pd.DataFrame]]) -> findings.Outcome:
    data = findings.Data(families=families)
    (outcome,) = findings.evaluate({"bottlenecks": [], "findings": [finding]}, data, [])
    return outcome


def test_the_four_claims_are_in_the_catalogue_and_the_2015_table() -> None:
    assert set(BY_ID) == {"plateau-2015", "db-caps-2015", "middleware-near-db-2015", "drop-2015"}
    outcomes = findings.evaluate(CATALOGUE, findings.Data(), [])
    assert {o.id for o in outcomes if o.study_of == "2015"} == set(BY_ID)
    # Nothing measured: every 2015 claim is inconclusive and says why.
    for o in outcomes:
        if o.study_of == "2015":
            assert o.verdict is Verdict.INCONCLUSIVE and o.reason.startswith("not measured")
    assert r"\newcommand{\FindingsFifteenRows}" in tables.findings_table(outcomes, "2015")


def test_the_database_cap_compares_the_best_point_in_study_units() -> None:
    # 195 ops/s at s = 0.1 is 1,950 in the study's units: the cap, within its tolerance.
    at = runs("mq_db_baseline", {("small", "80"): [194, 195, 196], ("small", "40"): [150] * 3},
              ("size", "clients"))  # fmt: skip
    o = evaluate(BY_ID["db-caps-2015"], {"mq_db_baseline": {"runs": at}})
    assert o.estimate == pytest.approx(1.0, abs=0.01)
    assert o.verdict is Verdict.REPRODUCED
    far = at.assign(throughput_ops=at["throughput_ops"] * 2)
    assert evaluate(BY_ID["db-caps-2015"], {"mq_db_baseline": {"runs": far}}).verdict is (
        Verdict.CONTRADICTED
    )


def test_the_middleware_near_the_database() -> None:
    db = runs("mq_db_baseline", {("small", "80"): [200, 201, 199]}, ("size", "clients"))
    near = runs("mq_throughput", {("80", "60"): [190, 191, 189]}, ("workers", "clients"))
    o = evaluate(BY_ID["middleware-near-db-2015"],
                 {"mq_db_baseline": {"runs": db}, "mq_throughput": {"runs": near}})  # fmt: skip
    assert o.estimate == pytest.approx(-0.05, abs=0.005)
    assert o.verdict is Verdict.REPRODUCED
    slow = near.assign(throughput_ops=near["throughput_ops"] / 2)
    o = evaluate(BY_ID["middleware-near-db-2015"],
                 {"mq_db_baseline": {"runs": db}, "mq_throughput": {"runs": slow}})  # fmt: skip
    assert o.verdict is Verdict.CONTRADICTED


def test_the_drop_pairs_60_and_141_clients_at_each_worker_count() -> None:
    t = runs("mq_throughput",
             {("60", "60"): [180, 182], ("60", "141"): [100, 98], ("100", "60"): [181, 183],
              ("100", "141"): [102, 101]}, ("workers", "clients"))  # fmt: skip
    o = evaluate(BY_ID["drop-2015"], {"mq_throughput": {"runs": t}})
    assert o.verdict is Verdict.REPRODUCED
    assert o.estimate == pytest.approx(-0.45, abs=0.02)
    # No change, known to a few per cent, rules out a fall of the seed's size.
    flat = t.assign(throughput_ops=180.0 + t["repetition"])
    assert evaluate(BY_ID["drop-2015"], {"mq_throughput": {"runs": flat}}).verdict is (
        Verdict.CONTRADICTED
    )
    # A fall of about a fifth with a wide interval cannot tell.
    spread = t.assign(throughput_ops=t["throughput_ops"].where(
        t["level_clients"] == "60", 144.0 + 30.0 * (t["repetition"] % 2)))  # fmt: skip
    assert evaluate(BY_ID["drop-2015"], {"mq_throughput": {"runs": spread}}).verdict is (
        Verdict.INCONCLUSIVE
    )
    rise = t.assign(throughput_ops=t["throughput_ops"].where(t["level_clients"] == "60", 220.0))
    assert evaluate(BY_ID["drop-2015"], {"mq_throughput": {"runs": rise}}).verdict is (
        Verdict.CONTRADICTED
    )


def test_the_plateau_needs_the_level_of_the_workers() -> None:
    flat = runs("mq_scale_clients",
                {("small", "60"): [180, 181, 179], ("small", "100"): [181, 180, 180]},
                ("size", "clients"))  # fmt: skip
    o = evaluate(BY_ID["plateau-2015"], {"mq_scale_clients": {"runs": flat}})
    assert o.verdict is Verdict.REPRODUCED
    no60 = runs("mq_scale_clients", {("small", "30"): [100] * 2, ("small", "100"): [180] * 2},
                ("size", "clients"))  # fmt: skip
    o = evaluate(copy.deepcopy(BY_ID["plateau-2015"]), {"mq_scale_clients": {"runs": no60}})
    assert o.verdict is Verdict.INCONCLUSIVE and "not measured" in o.reason
