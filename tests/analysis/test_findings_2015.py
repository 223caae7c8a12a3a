"""Seed 003's claims in the findings catalogue: each is well-formed, names where it is judged
and belongs to the 2015 table, and the measures they use decide on our data the way the rule
says (the database's maxima by the best point over the printed values, their locations by
the best level near the seed's over the best elsewhere; a change between clients or workers
of the full system by paired levels); what no finding tests is listed, with why: the §3.3.1
hypothesis, §3.2's aim and its table, whose hypothesis and explanation are empty; and a
claim about the system with its middleware, whose speed no seed number fixes, is not testable
here."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis import construction, findings
from analysis.report import findings as tables
from analysis.verdicts import Verdict

CATALOGUE = findings.load_catalogue("workflows/findings.yaml")
BY_ID = {f["id"]: f for f in CATALOGUE["findings"] if f["study_of"] == "2015"}


def _system(fid: str, study: float, measure: dict, rule: dict) -> dict:
    """A claim about the full system (Table 2's grid), as a finding of the 2015 table."""
    return {"id": fid, "study_of": "2015", "claim": fid, "source": "seed 003 §3.2",
            "study": study, "study_text": "t", "reasons": {"default": "d"},
            "measure": measure, "rule": rule}  # fmt: skip


# Table 2's readings are findings of the catalogue (system-*-2015): these test their measures
# on small grids.
NEAR = _system("near", -0.10, {"kind": "max_throughput",
               "low": {"family": "mq_db_baseline", "where": {"level_size": "small"}},
               "high": {"family": "mq_throughput"}},
               {"kind": "beyond", "direction": "above", "threshold": -0.10})  # fmt: skip
DROP = _system("drop", -0.20, {"kind": "paired", "family": "mq_throughput",
               "factor": "level_clients", "low": "60", "high": "141"},
               {"kind": "beyond", "direction": "below", "threshold": -0.20})  # fmt: skip
WORKERS = _system("workers", 0.0, {"kind": "paired", "family": "mq_throughput",
                  "factor": "level_workers", "low": "60", "high": "100",
                  "where": {"level_clients": ["60", "99", "141"]}},
                  {"kind": "within", "tolerance": 0.10})  # fmt: skip


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


CLAIMS = {
    "db-rise-2015", "db-saturates-2015", "db-peak-at-2015",
    "db-caps-2015", "db-caps-large-2015", "db-peak-large-at-2015", "db-size-2015",
    "system-fall-2015", "system-fall-fixed-sessions-2015", "system-workers-2015",
}  # fmt: skip


def test_the_claims_are_in_the_catalogue_and_the_2015_table() -> None:
    assert set(BY_ID) == CLAIMS
    # Every 2015 finding names the configuration it is judged at.
    assert all(isinstance(f.get("at"), str) and f["at"] for f in BY_ID.values())
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
    o = evaluate(NEAR,
                 {"mq_db_baseline": {"runs": db}, "mq_throughput": {"runs": near}})  # fmt: skip
    assert o.estimate == pytest.approx(-0.05, abs=0.005)
    assert o.verdict is Verdict.REPRODUCED
    slow = near.assign(throughput_ops=near["throughput_ops"] / 2)
    o = evaluate(NEAR,
                 {"mq_db_baseline": {"runs": db}, "mq_throughput": {"runs": slow}})  # fmt: skip
    assert o.verdict is Verdict.CONTRADICTED


def test_a_change_with_a_control_is_judged_beyond_the_controls_change() -> None:
    # Both worker counts fall from 60 to 141 clients; at 100 workers by 0.45, at 60 by 0.25:
    # what 100 workers add to the fall is 0.20 of the low value.
    t = runs("mq_throughput",
             {("60", "60"): [200, 200], ("60", "141"): [150, 150],
              ("100", "60"): [200, 200], ("100", "141"): [111, 109]},
             ("workers", "clients"))  # fmt: skip
    more = {**DROP, "measure": {**DROP["measure"], "where": {"level_workers": "100"},
            "control": {"where": {"level_workers": "60"}, "words": "60 workers"}}}  # fmt: skip
    o = evaluate(more, {"mq_throughput": {"runs": t}})
    assert o.estimate == pytest.approx(-0.20, abs=0.01)
    assert "60 workers: 2,000 → 1,500" in o.ours and "beyond that of 60 workers" in o.ours
    # Without the control the whole fall decides.
    alone = {**DROP, "measure": {**DROP["measure"], "where": {"level_workers": "100"}}}
    whole = evaluate(alone, {"mq_throughput": {"runs": t}})
    assert whole.estimate == pytest.approx(-0.45, abs=0.01)


def test_the_drop_pairs_60_and_141_clients_at_each_worker_count() -> None:
    t = runs("mq_throughput",
             {("60", "60"): [180, 182], ("60", "141"): [100, 98], ("100", "60"): [181, 183],
              ("100", "141"): [102, 101]}, ("workers", "clients"))  # fmt: skip
    o = evaluate(DROP, {"mq_throughput": {"runs": t}})
    assert o.verdict is Verdict.REPRODUCED
    assert o.estimate == pytest.approx(-0.45, abs=0.02)
    # No change, known to a few per cent, rules out a fall of the seed's size.
    flat = t.assign(throughput_ops=180.0 + t["repetition"])
    assert evaluate(DROP, {"mq_throughput": {"runs": flat}}).verdict is (Verdict.CONTRADICTED)
    # A fall of about a fifth with a wide interval cannot tell.
    spread = t.assign(throughput_ops=t["throughput_ops"].where(
        t["level_clients"] == "60", 144.0 + 30.0 * (t["repetition"] % 2)))  # fmt: skip
    assert evaluate(DROP, {"mq_throughput": {"runs": spread}}).verdict is (Verdict.INCONCLUSIVE)
    rise = t.assign(throughput_ops=t["throughput_ops"].where(t["level_clients"] == "60", 220.0))
    assert evaluate(DROP, {"mq_throughput": {"runs": rise}}).verdict is (Verdict.CONTRADICTED)


# --- the parts of the claims, and the measures they need --------------------------------------


def baseline(means: dict[str, float], size: str = "small", step: float = 0.0) -> pd.DataFrame:
    """Database-baseline runs at clients -> mean throughput (three repetitions, +-1)."""
    return runs("mq_db_baseline",
                {(size, c): [x - 1 - step, x, x + 1 + step] for c, x in means.items()},
                ("size", "clients"))  # fmt: skip


def test_the_location_of_the_maximum_is_judged_within_a_step_of_the_seeds() -> None:
    f = BY_ID["db-peak-at-2015"]
    levels = [str(c) for c in range(10, 101, 10)]
    peak80 = {c: 100 + (90 if c == "80" else 10 * min(int(c), 60) / 10) for c in levels}
    o = evaluate(f, {"mq_db_baseline": {"runs": baseline(peak80)}})
    assert o.verdict is Verdict.REPRODUCED and "maximum at 80 clients" in o.ours
    # The maximum at 20 clients, the seed's band lower: contradicted.
    peak20 = {c: 200.0 if c == "20" else 150.0 for c in levels}
    o = evaluate(f, {"mq_db_baseline": {"runs": baseline(peak20)}})
    assert o.verdict is Verdict.CONTRADICTED and o.estimate == pytest.approx(-0.25)
    # A plateau over the band and beyond locates no maximum.
    flat = {c: 150.0 for c in levels}
    o = evaluate(f, {"mq_db_baseline": {"runs": baseline(flat, step=20)}})
    assert o.verdict is Verdict.INCONCLUSIVE
    # Large messages are judged on their own curve, at 60 clients.
    large = runs("mq_db_baseline", {("large", c): [x - 1, x, x + 1] for c, x in
                 {c: 200.0 if c == "60" else 120.0 for c in levels}.items()},
                 ("size", "clients"))  # fmt: skip
    both = pd.concat([baseline(peak20), large])
    o = evaluate(BY_ID["db-peak-large-at-2015"], {"mq_db_baseline": {"runs": both}})
    assert o.verdict is Verdict.REPRODUCED
    assert evaluate(f, {"mq_db_baseline": {"runs": both}}).verdict is Verdict.CONTRADICTED


def test_the_baseline_rises_then_saturates() -> None:
    rising = {"10": 50.0, "80": 195.0, "100": 196.0}
    data = {"mq_db_baseline": {"runs": baseline(rising)}}
    assert evaluate(BY_ID["db-rise-2015"], data).verdict is Verdict.REPRODUCED
    assert evaluate(BY_ID["db-saturates-2015"], data).verdict is Verdict.REPRODUCED
    # Ours fell from the fewest clients, and rose again beyond 80: both parts contradicted.
    falling = {"10": 240.0, "80": 160.0, "100": 200.0}
    data = {"mq_db_baseline": {"runs": baseline(falling)}}
    assert evaluate(BY_ID["db-rise-2015"], data).verdict is Verdict.CONTRADICTED
    assert evaluate(BY_ID["db-saturates-2015"], data).verdict is Verdict.CONTRADICTED


def test_the_large_maximum_and_its_fall_from_the_small_one() -> None:
    levels = {c: 100.0 for c in ("10", "60", "100")}
    small = baseline({**levels, "80": 195.0})
    large = runs("mq_db_baseline", {("large", c): [142, 143, 144] for c in ("10", "60", "100")},
                 ("size", "clients"))  # fmt: skip
    data = {"mq_db_baseline": {"runs": pd.concat([small, large])}}
    o = evaluate(BY_ID["db-caps-large-2015"], data)
    assert o.verdict is Verdict.REPRODUCED and o.estimate == pytest.approx(1.0, abs=0.01)
    assert not BY_ID["db-caps-large-2015"].get("construction")  # not a calibration target
    o = evaluate(BY_ID["db-size-2015"], data)
    assert o.verdict is Verdict.REPRODUCED and o.estimate == pytest.approx(-0.267, abs=0.01)
    same = large.assign(throughput_ops=large["throughput_ops"] + 52)
    data = {"mq_db_baseline": {"runs": pd.concat([small, same])}}
    assert evaluate(BY_ID["db-size-2015"], data).verdict is Verdict.CONTRADICTED


def test_the_workers_and_the_bound_as_a_premise() -> None:
    cells = {(w, c): [180.0, 181.0, 182.0] for w in ("60", "100") for c in ("60", "99", "141")}
    cells[("60", "54")] = [400.0, 401.0, 402.0]  # a column the seed left empty: not paired
    t = runs("mq_throughput", cells, ("workers", "clients"))
    assert evaluate(WORKERS, {"mq_throughput": {"runs": t}}).verdict is (Verdict.REPRODUCED)
    halved = t.assign(throughput_ops=t["throughput_ops"].where(t["level_workers"] == "60", 90.0))
    assert evaluate(WORKERS, {"mq_throughput": {"runs": halved}}).verdict is (Verdict.CONTRADICTED)
    # The database's bound is §3.2's premise and coming close to it its aim: listed untested,
    # with why; Table 2's own cells (the fall, the workers, the best cell) are judged.
    on_table2 = {i for i, f in BY_ID.items() if f["measure"].get("family") == "mq_throughput"}
    assert on_table2 == {
        "system-fall-2015",
        "system-fall-fixed-sessions-2015",
        "system-workers-2015",
    }
    assert BY_ID["system-workers-2015"]["measure"] == WORKERS["measure"]
    untested = {n["source"]: n["why"] for n in CATALOGUE["not_tested"]}
    assert "premise" in untested["seed 003 §3.2 (description)"]
    assert "seed 003 §3.2, Table 2" not in untested


def test_a_claim_about_the_system_is_not_testable_where_its_assumed_middleware_could_bind() -> None:
    db = runs("mq_db_baseline", {("small", "80"): [200, 201, 199]}, ("size", "clients"))
    near = runs("mq_throughput", {("80", "60"): [190, 191, 189]}, ("workers", "clients"))
    points = pd.DataFrame(
        [{"point": "workers=80,clients=60", "side": "client", "type": "all",
          "level_workers": "80", "level_clients": "60", "middlewares": 2, "servers": 1},
         {"point": "size=small,clients=80", "side": "client", "type": "all",
          "level_size": "small", "level_clients": "80", "middlewares": 0, "servers": 1}]
    ).assign(clients_total=60, keys=1, throughput_ops_mean=190.0, client_machines=3,
             scale=0.1, **{"caps_mbit.server": 1000.0, "caps_mbit.client": 1000.0,
                           "caps_mbit.middleware": 1000.0, "workload.data_size": 16})  # fmt: skip
    families = {
        "mq_db_baseline": {"runs": db, "points": points[points["middlewares"] == 0]},
        "mq_throughput": {"runs": near, "points": points[points["middlewares"] > 0]},
    }
    # The middleware runs at the upper bound (1.0); the database, the same machine type, was
    # fitted at 0.4: the middleware could run that slow.
    assumed = construction.assumed_roles(
        {"2015": {"middleware": "no seed number isolates it"}},
        {"2015": {"middleware": 1.0, "server": 0.4, "client": None}},
        {"2015": {"middleware": "m4", "server": "m4", "client": "m4"}},
        0.03,
    )
    assert assumed["2015"]["middleware"].slowest == 0.4
    catalogue = {"bottlenecks": [], "findings": [NEAR]}

    def judged(middleware_use: float) -> findings.Outcome:
        used = {f: {**t, "points": t["points"].assign(cpu_util_middleware_mean=middleware_use)}
                for f, t in families.items()}  # fmt: skip
        (o,) = findings.evaluate(catalogue, findings.Data(families=used, unfitted=assumed), [])
        return o

    # 40 % of its budget at 1.0 is 100 % at 0.4: it could bind, the claim is not testable.
    o = judged(0.4)
    assert o.verdict is Verdict.NOT_TESTABLE and o.interval_verdict == "reproduced"
    assert "no seed number isolates it" in o.reason and o.decided_by.startswith("assumed speed")
    # 9 % is 22 % at 0.4: far from binding at any plausible factor, the result stands.
    assert judged(0.09).verdict is Verdict.REPRODUCED
    # The database alone has no assumed role: its claims stay evidence.
    catalogue = {"bottlenecks": [], "findings": [BY_ID["db-caps-2015"]]}
    (o,) = findings.evaluate(catalogue, findings.Data(families=families, unfitted=assumed), [])
    assert o.verdict is not Verdict.NOT_TESTABLE


# --- what no finding tests --------------------------------------------------------------------


def test_the_untested_statements_are_listed_with_why(tmp_path: Path) -> None:
    entries = [n for n in CATALOGUE["not_tested"] if n["study_of"] == "2015"]
    assert entries and all(n["why"] and n["source"].startswith("seed 003") for n in entries)
    # §3.3.1's expectation is a hypothesis with an empty explanation: no conclusion to judge.
    assert any(n["source"] == "seed 003 §3.3.1 (hypothesis)" for n in entries)
    table = tables.untested_table(CATALOGUE, "2015")
    assert table.count(r"\\") == len(entries) + 1  # the head and one row each
    # Every study lists its own, each from its own seeds.
    for study, seeds in (("2018", ("seed 004", "seed 002")), ("2016", ("seed 000", "seed 001"))):
        own = [n for n in CATALOGUE["not_tested"] if n["study_of"] == study]
        assert own and all(n["source"].startswith(seeds) for n in own)
        assert tables.untested_table(CATALOGUE, study).count(r"\\") == len(own) + 1
    doc = copy.deepcopy(CATALOGUE)
    doc["not_tested"].append({"study_of": "2015", "source": "seed 003 §9", "claim": "x"})
    path = tmp_path / "findings.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    with pytest.raises(findings.FindingsError, match="needs study_of, source, claim, why"):
        findings.load_catalogue(path)
    doc["not_tested"][-1] |= {"why": "a hypothesis", "study_of": "1999"}
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    with pytest.raises(findings.FindingsError, match="study_of"):
        findings.load_catalogue(path)


def test_a_row_names_where_its_finding_is_judged(tmp_path: Path) -> None:
    outcomes = findings.evaluate(CATALOGUE, findings.Data(), [])
    rows = {o.id: o for o in tables.judged_at(outcomes, CATALOGUE)}
    assert rows["db-rise-2015"].source.endswith("judged at: " + BY_ID["db-rise-2015"]["at"])
    assert "judged at" in tables.findings_table(list(rows.values()), "2015")
    # `at` is optional, and text where given.
    plain = [f for f in CATALOGUE["findings"] if "at" not in f]
    assert plain and all(rows[f["id"]].source == f["source"] for f in plain)
    doc = copy.deepcopy(CATALOGUE)
    doc["findings"][0]["at"] = 80
    path = tmp_path / "findings.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    with pytest.raises(findings.FindingsError, match="`at` must be text"):
        findings.load_catalogue(path)


def test_a_maximum_over_two_selections_names_the_bottleneck_its_levels_share() -> None:
    small = baseline({c: 195.0 for c in ("10", "80", "100")})
    large = runs("mq_db_baseline", {("large", c): [142, 143, 144] for c in ("10", "80", "100")},
                 ("size", "clients"))  # fmt: skip
    both = pd.concat([small, large])
    points = pd.DataFrame(
        [{"point": f"size={size},clients={c}", "side": "client", "type": "all",
          "level_size": size, "level_clients": c, "clients_total": int(c)}
         for size in ("small", "large") for c in ("10", "80", "100")]
    ).assign(middlewares=0, servers=1, keys=1, throughput_ops_mean=150.0, client_machines=2,
             scale=0.1, cpu_util_server_mean=0.97, cpu_util_client_mean=0.2,
             **{"caps_mbit.server": 1000.0, "caps_mbit.client": 1000.0,
                "caps_mbit.middleware": 1000.0, "workload.data_size": 16})  # fmt: skip
    o = evaluate(BY_ID["db-size-2015"], {"mq_db_baseline": {"runs": both, "points": points}})
    # Small and large messages are two selections of one family; both levels are bound by
    # the database's CPU budget, and so is the finding.
    assert o.level_bottlenecks == ("server CPU", "server CPU")
    assert o.bottleneck == "server CPU"


def test_a_maximums_levels_are_named_by_their_best_points_bottleneck() -> None:
    small = baseline({"10": 195.0, "80": 150.0, "100": 150.0})
    large = runs("mq_db_baseline", {("large", c): [142, 143, 144] for c in ("10", "80", "100")},
                 ("size", "clients"))  # fmt: skip
    points = pd.DataFrame(
        [{"point": f"size={size},clients={c}", "side": "client", "type": "all",
          "level_size": size, "level_clients": c, "clients_total": int(c),
          "throughput_ops_mean": 195.0 if c == "10" else 150.0,
          # The best point (10 clients) is bound by the database's CPU budget; the highest
          # load is not (the budget idles while the clients convoy).
          "cpu_util_server_mean": 0.97 if c == "10" else 0.5}
         for size in ("small", "large") for c in ("10", "80", "100")]
    ).assign(middlewares=0, servers=1, keys=1, client_machines=2, scale=0.1,
             cpu_util_client_mean=0.2,
             **{"caps_mbit.server": 1000.0, "caps_mbit.client": 1000.0,
                "caps_mbit.middleware": 1000.0, "workload.data_size": 16})  # fmt: skip
    data = {"mq_db_baseline": {"runs": pd.concat([small, large]), "points": points}}
    o = evaluate(BY_ID["db-size-2015"], data)
    assert o.level_bottlenecks == ("server CPU", "server CPU")


def test_a_contradiction_stays_a_contradiction_whatever_its_reason_says() -> None:
    levels = {c: 100.0 for c in ("10", "60", "100")}
    small = baseline({**levels, "80": 195.0})
    same = runs("mq_db_baseline", {("large", c): [194, 195, 196] for c in ("10", "60", "100")},
                ("size", "clients"))  # fmt: skip
    data = {"mq_db_baseline": {"runs": pd.concat([small, same])}}
    o = evaluate(BY_ID["db-size-2015"], data)
    assert o.verdict is Verdict.CONTRADICTED
    # The reason explains the departure; it cannot move the row out of the evidence.
    explained = {**BY_ID["db-size-2015"], "reasons": {"default": "the budget binds"}}
    o = evaluate(explained, data)
    assert o.verdict is Verdict.CONTRADICTED and o.reason == "the budget binds"
