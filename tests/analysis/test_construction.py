"""The construction rules: a verdict the scale model sets is found from the finding's points
and the calibration's record, with no mark in the catalogue."""

from __future__ import annotations

import pandas as pd

from analysis import construction, findings
from analysis.verdicts import Verdict

TARGET = {
    "name": "server_write_max",
    "role": "server",
    "study": "2018",
    "point": {"servers": 1, "middlewares": 0, "virtual_clients": 32,
              "workload": {"ratio": "1:0"}, "middleware": {"design": 2018}},
}  # fmt: skip


def _spec(servers: int, ratio: str, vc: int, design: str = "2018") -> dict:
    return {"servers": servers, "middlewares": 0, "virtual_clients": vc,
            "workload": {"ratio": ratio, "data_size": 4096},
            "middleware": {"design": design, "workers": 64}}  # fmt: skip


SPECS = {
    "direct": {
        f"setup={s},workload={w},vc={vc}": _spec(n, r, vc)
        for s, n in (("one", 1), ("two", 2))
        for w, r in (("write", "1:0"), ("read", "0:1"))
        for vc in (8, 32)
    }
}


def test_a_target_sites_every_client_count_of_its_configuration_only() -> None:
    (site,) = construction.fitted_sites([TARGET], {}, SPECS)
    assert site.points == {
        ("direct", "setup=one,workload=write,vc=8"),
        ("direct", "setup=one,workload=write,vc=32"),
    }
    # A number against a string of the same value (design: 2018 and "2018") matches.
    assert construction.matches(
        {"middleware": {"design": 2018}}, {"middleware": {"design": "2018"}}
    )
    assert not construction.matches({"servers": 2}, {"servers": 1})
    # A delay derived from a study number sites its configuration as well.
    (delay,) = construction.fitted_sites([], {"2018": {"pair": {"servers": 2}}}, SPECS)
    assert len(delay.points) == 4 and "pair delay" in delay.what


def _points(family: str = "direct") -> pd.DataFrame:
    """Client points of the specs, with what the bottleneck analysis reads: no link near its
    cap, the server's budget used at 95 %; the most clients give the most throughput."""
    rows = []
    for name in SPECS[family]:
        setup, workload, vc = (p.split("=")[1] for p in name.split(","))
        rows.append({"point": name, "side": "client", "type": "all", "level_setup": setup,
                     "level_workload": workload, "clients_total": int(vc), "keys": 1,
                     "throughput_ops_mean": 1000.0 + int(vc), "servers": 1, "middlewares": 0,
                     "client_machines": 3, "middleware.replication": None,
                     "middleware.sharded": False, "workload.key_size": None,
                     "workload.data_size": 16, "caps_mbit.server": 1000.0,
                     "caps_mbit.client": 1000.0, "caps_mbit.middleware": 1000.0,
                     "scale": 1.0, "cpu_util_server_mean": 0.95})  # fmt: skip
    return pd.DataFrame(rows)


def _finding(kind: str, **measure: object) -> dict:
    return {"id": "x", "study_of": "2018", "measure": {"kind": kind, "family": "direct",
            **measure}}  # fmt: skip


def test_a_throughput_measured_only_where_the_fit_put_it_is_by_construction() -> None:
    sites = construction.fitted_sites([TARGET], {}, SPECS)
    points = {"direct": _points()}
    at_target = _finding("study_ratio", where={"level_setup": "one", "level_workload": "write"})
    decision = construction.decide(at_target, "server CPU", points, sites)
    assert decision.rule == construction.FITTED and "one server's write maximum" in decision.reason
    # The level's best lies at another load than the fitted one, and well above the fitted
    # value: the fit does not pin it.
    elsewhere = {"direct": points["direct"].assign(
        throughput_ops_mean=lambda t: 40_000.0 / t["clients_total"])}  # fmt: skip
    assert not construction.decide(at_target, "server CPU", elsewhere, sites).applies
    # A best point on the fitted plateau (here 1 % above the fitted load's value) is the
    # fitted value read at another load: the fit pins the level still.
    plateau = {"direct": points["direct"].assign(
        throughput_ops_mean=lambda t: 2000.0 - t["clients_total"])}  # fmt: skip
    assert construction.decide(at_target, "server CPU", plateau, sites).rule == construction.FITTED
    # One level outside the fitted configuration: the change is measured, not set.
    across = _finding("max_throughput", factor="level_setup", low="one", high="two",
                      where={"level_workload": "write"})  # fmt: skip
    assert not construction.decide(across, "server CPU", points, sites).applies
    # A response time at the fitted point is no fitted quantity.
    share = _finding("share", where={"level_setup": "one", "level_workload": "write"})
    assert not construction.decide(share, "none saturated", points, sites).applies


def test_a_fit_sets_only_a_level_its_roles_budget_binds() -> None:
    sites = construction.fitted_sites([TARGET], {}, SPECS)
    points = {"direct": _points()}
    at_target = _finding("study_ratio", where={"level_setup": "one", "level_workload": "write"})
    # The level's bottleneck is the fitted role's budget: the fit set it.
    bound = construction.decide(at_target, "server CPU", points, sites, ["server CPU"])
    assert bound.rule == construction.FITTED
    # At the fitted configuration, but no budget binds there (the server's is at 83 %): the
    # factor does not set the level, so the verdict is the interval's.
    free = construction.decide(at_target, "none saturated", points, sites, ["none saturated"])
    assert not free.applies


def test_a_claim_made_at_a_configuration_never_measured_is_not_testable() -> None:
    points = {"direct": _points().assign(**{"middleware.workers": 24})}
    finding = {**_finding("max_throughput"), "seed_at": [
        {"column": "clients_total", "value": 180, "words": "clients"},
        {"column": "middleware.workers", "value": 32, "words": "threads"}]}  # fmt: skip
    decision = construction.unmeasured_configuration(finding, points)
    assert decision.rule == construction.SEED_CONFIGURATION
    assert "180 clients and 32 threads" in decision.reason
    assert "ours: 8, 32 clients" in decision.reason
    # A point near the seed's setting (within 10 %) judges the claim where it was made.
    near = {"direct": points["direct"].assign(**{"middleware.workers": 30, "clients_total": 170})}
    assert not construction.unmeasured_configuration(finding, near).applies


def test_a_throughput_where_a_link_binds_is_by_construction() -> None:
    decision = construction.decide(_finding("max_throughput"), "server link", {}, [])
    assert decision.rule == construction.LINK_CAP and "server link" in decision.reason
    # A link that binds at one of the levels compared sets that level: the change is set.
    rise = _finding("max_throughput", factor="level_size", low="1", high="9")
    levels = ["none saturated", "server link"]
    decision = construction.decide(rise, "none saturated", {}, [], levels)
    assert decision.rule == construction.LINK_CAP and "at a level it compares" in decision.reason
    # Unless the change runs against the cap: a cap can only lower the level it binds, so a
    # rise to a capped high level (or a fall from a capped low one) is the system's.
    assert not construction.decide(rise, "none saturated", {}, [], levels, (2.3, 2.5)).applies
    fall = construction.decide(rise, "none saturated", {}, [], levels, (-0.4, -0.1))
    assert fall.rule == construction.LINK_CAP
    capped_low = ["server link", "none saturated"]
    assert not construction.decide(rise, "x", {}, [], capped_low, (-0.4, -0.1)).applies
    both = ["server link"] * 2
    assert construction.decide(rise, "server link", {}, [], both, (2.3, 2.5)).applies
    # A model's error in throughput is a throughput.
    mva = _finding("model_error", what="throughput")
    assert construction.decide(mva, "server link", {}, []).rule == construction.LINK_CAP
    # A response time under the same link at both levels is the system's: how it spreads its
    # requests over the links decides it.
    tail = _finding("response", factor="level_sharding", low="non-sharded", high="sharded")
    assert not construction.decide(tail, "server link", {}, [], ["server link"] * 2).applies
    assert not construction.decide(_finding("model_error", what="mean response time"),
                                   "server link", {}, []).applies  # fmt: skip


def _mq_points(middlewares: int, workers: int, clients: tuple[int, ...]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"point": f"clients={c}", "side": "client", "type": "all", "level_clients": str(c),
          "clients_total": c, "middlewares": middlewares, "queue.workers": workers}
         for c in clients]
    )  # fmt: skip


def test_more_clients_than_database_sessions_is_evidence_not_construction() -> None:
    # The seed's clients beyond the workers reached no more of its database than ours do, yet
    # its throughput fell: whatever lowered it lies outside the database, in parts the model
    # runs for real, so the budget that binds there does not set the verdict.
    drop = {"id": "drop", "study_of": "2015", "measure": {"kind": "paired", "family": "mq",
            "factor": "level_clients", "low": "60", "high": "141"}}  # fmt: skip
    for points in (_mq_points(2, 30, (60, 141)), _mq_points(0, 16, (60, 141))):
        assert not construction.decide(drop, "server CPU", {"mq": points}, []).applies


def test_evaluate_counts_a_fitted_row_apart_without_a_catalogue_mark() -> None:
    runs = pd.DataFrame(
        [{"run": f"r{i}", "point": "setup=one,workload=write,vc=32", "side": "client",
          "type": "all", "status": "ok", "throughput_ops": x, "level_setup": "one",
          "level_workload": "write", "scale": 1.0}
         for i, x in enumerate((1940.0, 1950.0, 1960.0))]
    )  # fmt: skip
    finding = {
        "id": "caps", "study_of": "2018", "claim": "c", "source": "s", "study": 1.0,
        "study_text": "t", "reasons": {"default": "d"},
        "measure": {"kind": "study_ratio", "family": "direct", "value": 1950,
                    "where": {"level_setup": "one", "level_workload": "write"}},
        "rule": {"kind": "within", "tolerance": 0.1},
    }  # fmt: skip
    sites = construction.fitted_sites([TARGET], {}, SPECS)
    data = findings.Data(families={"direct": {"runs": runs, "points": _points()}}, sites=sites)
    (o,) = findings.evaluate({"bottlenecks": [], "findings": [finding]}, data, [])
    assert o.verdict is Verdict.BY_CONSTRUCTION and o.interval_verdict == "reproduced"
    assert o.decided_by.startswith("construction (fitted)")
    expected = "fitted there (the server's speed factor (to one server's write maximum))"
    assert o.short_reason == expected
    assert not o.is_evidence
    # Without the calibration's record the same row is evidence.
    data = findings.Data(families={"direct": {"runs": runs, "points": _points()}})
    (o,) = findings.evaluate({"bottlenecks": [], "findings": [finding]}, data, [])
    assert o.verdict is Verdict.REPRODUCED and o.decided_by.startswith("interval: within")


def test_a_model_claim_is_judged_only_within_the_models_domain_and_not_its_recipe() -> None:
    runs = pd.DataFrame(
        [{"run": f"r{i}", "point": "p", "side": "client", "type": "all", "status": "ok",
          "throughput_ops": x, "scale": 1.0} for i, x in enumerate((990.0, 1000.0, 1010.0))]
    )  # fmt: skip
    entry = {"point": "p", "model": 100.0, "measured": 1000.0, "metric": "throughput_ops",
             "side": "client", "label": "S = 5"}  # fmt: skip
    finding = {
        "id": "mva", "study_of": "2016", "claim": "c", "source": "s", "study": 0.0,
        "study_text": "t", "reasons": {"default": "d"},
        "measure": {"kind": "model_error", "model": "mva", "family": "f"},
        "rule": {"kind": "beyond", "direction": "above", "threshold": 0.0},
    }  # fmt: skip
    catalogue = {"bottlenecks": [], "findings": [finding]}

    def judged(validity: dict | None) -> findings.Outcome:
        model = {**entry, **({"validity": validity} if validity is not None else {})}
        data = findings.Data(families={"f": {"runs": runs}}, models2016={"mva": model})
        (o,) = findings.evaluate(catalogue, data, [])
        return o

    broken = judged({"valid": False, "reason": "it misses by -90 % at the lightest load"})
    assert broken.verdict is Verdict.NOT_TESTABLE and broken.interval_verdict == "contradicted"
    assert broken.reason == "it misses by -90 % at the lightest load"
    assert judged({"valid": True, "reason": ""}).verdict is Verdict.CONTRADICTED
    assert judged(None).verdict is Verdict.NOT_TESTABLE  # no check: it may not judge
    # Outside its domain (an input out of range, a utilisation above 1) a model says nothing
    # of the study's system: a claim about its error is not testable.
    outside = {"valid": False, "reason": "The MVA is not valid here: it misses by -40 %."}
    o = judged(outside)
    assert o.verdict is Verdict.NOT_TESTABLE and o.decided_by.startswith("model validity")
    assert o.reason.endswith("misses by -40 %.")
    # Within its domain, a model that only misses the lightest load is judged: a claim about
    # its own error claims that miss.
    missing = {**outside, "in_domain": True}
    assert judged(missing).verdict is Verdict.CONTRADICTED
    # An error that is its fitting recipe's algebra restates the recipe: by construction.
    recipe = {**outside, "restates_recipe": "the M/M/1's error is its recipe's algebra"}
    o = judged(recipe)
    assert o.verdict is Verdict.BY_CONSTRUCTION and o.decided_by.startswith("construction (recipe)")


def test_a_response_time_where_the_fitted_role_binds_is_by_construction() -> None:
    sites = construction.fitted_sites([TARGET], {}, SPECS)
    points = {"direct": _points()}
    response = _finding("response", where={"level_setup": "one", "level_workload": "write"})
    # The server's speed was fitted there and its budget binds: the throughput is the fit's,
    # and with it the closed loop's response time.
    decision = construction.decide(response, "server CPU", points, sites)
    assert decision.rule == construction.FITTED and "Little's law" in decision.reason
    # A share of that time is how the system spends it: the fit does not set it.
    share = _finding("share", where={"level_setup": "one", "level_workload": "write"})
    assert not construction.decide(share, "server CPU", points, sites).applies
    # Another role's budget binding, or the points beyond the fitted configuration: measured.
    assert not construction.decide(response, "middleware CPU", points, sites).applies
    two = _finding("response", where={"level_setup": "two", "level_workload": "write"})
    assert not construction.decide(two, "server CPU", points, sites).applies
    # A delay site fits no role's speed: a time there is measured.
    delay = construction.fitted_sites([], {"2018": {"pair": {"servers": 1}}}, SPECS)
    assert not construction.decide(response, "server CPU", points, delay).applies
    # A fit pins one level: the change between the loads of its configuration, and where the
    # throughput peaks among them, are the system's.
    rise = _finding("paired", factor="level_clients", low="8", high="32",
                    where={"level_setup": "one", "level_workload": "write"})  # fmt: skip
    points = {"direct": _points().assign(level_clients=lambda t: t["clients_total"].astype(str))}
    assert not construction.decide(rise, "server CPU", points, sites).applies
    peak = _finding("max_level", factor="level_clients", level=32,
                    where={"level_setup": "one", "level_workload": "write"})  # fmt: skip
    assert not construction.decide(peak, "server CPU", points, sites).applies
    # The fitted level's own value is the fit's.
    assert construction.decide(
        _finding("study_ratio", where={"level_setup": "one", "level_workload": "write"}),
        "server CPU", points, sites,
    ).rule == construction.FITTED  # fmt: skip


def test_a_share_that_is_mostly_a_derived_delay_is_by_construction() -> None:
    decision = construction.delay_set(0.76, "the middleware-server delay of 2016")
    assert decision.rule == construction.DERIVED_DELAY
    assert decision.reason.startswith("76 % or more of the time it judges is the round trip of")
    # Half or less: the system's own time decides the part.
    assert not construction.delay_set(0.5, "d").applies
    assert not construction.delay_set(None, "d").applies


def test_a_cap_takes_out_only_a_verdict_it_could_have_made() -> None:
    """A cap lowers the level it binds: a predicted change against it that the interval does
    not contradict stays evidence; one it contradicts may be the cap's doing."""
    delay = construction.Site("middleware_server", "the middleware-server delay of 2016",
                              "2016", frozenset({("x", "p")}))  # fmt: skip
    beyond = {"id": "b", "study_of": "2016", "rule": {"kind": "beyond", "direction": "below"},
              "measure": {"kind": "max_throughput", "family": "m", "factor": "level_workers",
                          "low": "24", "high": "32"}}  # fmt: skip
    levels = ["middleware threads", "middleware CPU"]
    # No gain claimed, the low level capped: the cap could only have made a gain.
    assert not construction.decide(beyond, "middleware CPU", {}, [delay], levels).applies
    # A gain found (the claim contradicted) may be the cap's: by construction.
    found = construction.decide(beyond, "middleware CPU", {}, [delay], levels, contradicted=True)
    assert found.rule == construction.DELAY_POOL
    # A claimed rise to a capped low level is what the cap makes: by construction.
    rise = {**beyond, "rule": {"kind": "effect", "direction": "increase"}}
    assert construction.decide(rise, "middleware CPU", {}, [delay], levels).applies


def test_a_throughput_where_threads_hold_requests_over_a_derived_delay_is_by_construction() -> None:
    # The delay's site lies elsewhere: a pool that holds requests over it binds wherever.
    delay = construction.Site("middleware_server", "the middleware-server delay of 2016",
                              "2016", frozenset({("x", "p")}))  # fmt: skip
    servers = {"id": "s", "study_of": "2016", "measure": {"kind": "paired", "family": "r",
               "factor": "level_servers", "low": "3", "high": "7"}}  # fmt: skip
    levels = ["middleware threads", "middleware CPU"]
    decision = construction.decide(servers, "middleware CPU", {}, [delay], levels, (-0.07, 0.07))
    assert decision.rule == construction.DELAY_POOL and "Little's law" in decision.reason
    assert "at a level it compares" in decision.reason
    # A fall from the pool-bound level is the system's: the pool only caps the level it binds.
    assert not construction.decide(servers, "x", {}, [delay], levels, (-0.3, -0.1)).applies
    # Without a derived delay, or in another study, the pool's bound is measured.
    assert not construction.decide(servers, "x", {}, [], levels, (-0.07, 0.07)).applies
    other = {**servers, "study_of": "2018"}
    assert not construction.decide(other, "x", {}, [delay], levels, (-0.07, 0.07)).applies
    # A time under the bound pool is the system's.
    sets = {**servers, "measure": {**servers["measure"], "kind": "response"}}
    assert not construction.decide(sets, "x", {}, [delay], levels, (-0.07, 0.07)).applies


def test_a_load_shape_the_wal_waits_set_under_an_assumed_commit_delay_is_not_testable() -> None:
    points = {"db": pd.DataFrame({"point": ["c=10", "c=80"], "level_clients": ["10", "80"]})}
    counters = {"db": pd.DataFrame({"point": ["c=10", "c=80"], "wait_wal": [80.0, 70.0],
                                    "wait_samples": [100.0, 100.0]})}  # fmt: skip
    rise = {
        "id": "x",
        "study_of": "2015",
        "measure": {
            "kind": "paired",
            "family": "db",
            "factor": "level_clients",
            "low": "10",
            "high": "80",
        },
    }
    assumed = {"2015": "assumed: no disk latency given"}
    decision = construction.assumed_commit(rise, points, counters, assumed)
    assert decision.rule == construction.ASSUMED_COMMIT and "75 %" in decision.reason
    # A commit delay a study number gives, or WAL waits that are a minority, leave it testable.
    assert not construction.assumed_commit(rise, points, counters, {}).applies
    light = {"db": counters["db"].assign(wait_wal=[10.0, 20.0])}
    assert not construction.assumed_commit(rise, points, light, assumed).applies
    # A maximum over the loads lies where the curve peaks, which the WAL waits shape too.
    value = {**rise, "measure": {"kind": "study_ratio", "family": "db"}}
    assert construction.assumed_commit(value, points, counters, assumed).applies
    # A value at one load is no shape: the fit at that load, not the commit delay, pins it.
    one = {**rise, "measure": {"kind": "study_ratio", "family": "db",
                               "where": {"level_clients": "80"}}}  # fmt: skip
    assert not construction.assumed_commit(one, points, counters, assumed).applies


def test_a_change_that_leaves_the_databases_sessions_as_they_were_is_testable() -> None:
    # 60 -> 141 clients behind 2 x 30 workers: 60 busy sessions at both, the same load on the
    # database, which no commit delay can shape; behind 2 x 50 workers they rise, 60 -> 100.
    fall = {"id": "x", "study_of": "2015", "measure": {"kind": "paired", "family": "mq",
            "factor": "level_clients", "low": "60", "high": "141"}}  # fmt: skip
    counters = {
        "mq": pd.DataFrame(
            {
                "point": ["clients=60", "clients=141"],
                "wait_wal": [80.0, 80.0],
                "wait_samples": [100.0] * 2,
            }
        )
    }
    assumed = {"2015": "assumed"}
    fixed = {"mq": _mq_points(2, 30, (60, 141))}
    assert construction.sessions_fixed(fall["measure"], fixed)
    assert not construction.assumed_commit(fall, fixed, counters, assumed).applies
    rising = {"mq": _mq_points(2, 50, (60, 141))}
    assert not construction.sessions_fixed(fall["measure"], rising)
    assert construction.assumed_commit(fall, rising, counters, assumed).applies
    # Clients straight to the database hold a session each: their sessions follow them.
    assert not construction.sessions_fixed(fall["measure"], {"mq": _mq_points(0, 16, (60, 141))})


def test_a_level_pinned_on_its_plateau_is_judged_at_the_fitted_point() -> None:
    (site,) = construction.fitted_sites([TARGET], {}, SPECS)
    rows = _points()
    rows = rows[(rows["level_setup"] == "one") & (rows["level_workload"] == "write")]
    # The fit was made at 32 clients; 8 clients give 1 % more: the level is the fit's
    # plateau, and what bounds it is read where the fit was made.
    plateau = rows.assign(throughput_ops_mean=lambda t: 2000.0 - t["clients_total"])
    assert construction.best_point(plateau) == "setup=one,workload=write,vc=8"
    assert construction.judged_point("direct", plateau, [site]) == "setup=one,workload=write,vc=32"
    # Well above the fitted value, the best point is no longer the fit's: it is judged itself.
    above = rows.assign(throughput_ops_mean=lambda t: 40_000.0 / t["clients_total"])
    assert construction.judged_point("direct", above, [site]) == "setup=one,workload=write,vc=8"


def test_a_change_outside_the_database_under_an_assumed_middleware_is_not_testable() -> None:
    # 60 -> 141 clients behind 2 x 30 workers: 60 busy sessions at both, so the database sees
    # the same load and the change is the middleware's and the clients'. The middleware's
    # speed is assumed: even far from binding it decides the change, which the model does
    # not hold.
    fall = {"id": "x", "study_of": "2015", "measure": {"kind": "paired", "family": "mq",
            "factor": "level_clients", "low": "60", "high": "141"}}  # fmt: skip
    assumed = construction.assumed_roles(
        {"2015": {"middleware": "no seed number isolates it"}},
        {"2015": {"middleware": 1.0, "server": 0.4}},
        {"2015": {"middleware": "m4", "server": "m4"}},
        0.03,
    )
    idle = {"cpu_util_middleware_mean": 0.05, "servers": 1}
    fixed = {"mq": _mq_points(2, 30, (60, 141)).assign(**idle)}
    decision = construction.assumed_role(fall, fixed, assumed)
    assert decision.rule == construction.ASSUMED_SPEED
    assert "same load" in decision.reason and "no seed number isolates it" in decision.reason
    # Where the sessions rise with the clients the database's load changes: the idle
    # middleware leaves the change as measured.
    rising = {"mq": _mq_points(2, 50, (60, 141)).assign(**idle)}
    assert not construction.assumed_role(fall, rising, assumed).applies
    # Straight to the database, no assumed role serves.
    direct = {"mq": _mq_points(0, 16, (60, 141)).assign(**idle)}
    assert not construction.assumed_role(fall, direct, assumed).applies
    # A study without assumed roles has nothing to hold back.
    assert not construction.assumed_role({**fall, "study_of": "2018"}, fixed, assumed).applies
