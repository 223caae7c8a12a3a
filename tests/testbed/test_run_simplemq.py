"""SimpleMQ points (system: simplemq) run end to end on emulated hosts: a real PostgreSQL on
the server host, the real SimpleMQ middleware and clients (build/simplemq.jar), network
namespaces in 198.18.0.0/15. What a user relies on: every message sent is in the database or
was popped once, the run directory parses into the tidy tables, and the database's counters
account for every operation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from analysis.parse import load_run
from testbed import cpubudget
from testbed.point import Point
from testbed.run import RunOptions, run_point
from testbed.services.middleware import SIMPLEMQ_JAR
from testbed.services.simplemq import PRIME_ROUNDS
from tests.capabilities import need

from .conftest import no_leftovers, processes_in

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

PRELOAD = 40


@pytest.fixture(scope="module")
def simplemq_jar() -> Path:
    if not SIMPLEMQ_JAR.is_file():
        pytest.fail(f"{SIMPLEMQ_JAR} is missing: run `make build` first")
    return SIMPLEMQ_JAR


def mq_point(**kw: Any) -> Point:
    spec: dict[str, Any] = {
        "name": "mq",
        "hosts": "emulated",
        "system": "simplemq",
        "servers": 1,
        "client_machines": 1,
        "virtual_clients": 4,
        "duration_s": 3,
        "client_window_ms": 500,
        "middleware": {"window_ms": 500},
    }
    spec.update(kw)
    return Point.model_validate(spec)


def run(tmp_path: Path, base_port: int, prefix: str, point: Point) -> tuple[Path, dict]:
    out = tmp_path / point.name
    opts = RunOptions(
        out=out,
        base_port=base_port,
        progress=False,
        netns_prefix=prefix,
        linkcap_cache=tmp_path / "linkcap.json",
    )
    manifest = run_point(point, opts)
    no_leftovers(prefix)
    assert processes_in(out) == [], "processes of the run outlived it"
    assert manifest["status"] == "ok", manifest["error"]
    return out, manifest


def replies(out: Path) -> dict[str, dict[str, int]]:
    """The clients' replies by operation and status, over every client process."""
    total: dict[str, dict[str, int]] = {}
    for result in sorted((out / "clients").glob("*/result.json")):
        doc = json.loads(result.read_text())
        assert doc["mwlab"]["mismatches"] == 0
        assert doc["mwlab"]["connection_losses"] == 0
        for op, by_status in doc["mwlab"]["replies"].items():
            for status, n in by_status.items():
                total.setdefault(op, {}).setdefault(status, 0)
                total[op][status] += n
    return total


def check_counters(out: Path, got: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The database's counters account for the clients' operations: each send added one
    message and each delivered pop removed one (so none was popped twice), and every
    operation committed a transaction of its own."""
    counters = json.loads((out / "servers/server1/counters.json").read_text())
    delta = counters["delta"]
    sent, popped = got["send"]["ok"], got["pop_queue"].get("ok", 0)
    assert delta["queue"]["sent"] == sent
    assert delta["queue"]["messages"] == sent - popped
    # The statistics agree: none of a warm-up's inserts or deletes is counted.
    assert delta["messages"]["n_tup_ins"] == sent
    assert delta["messages"]["n_tup_del"] == popped
    ops = sum(n for by_status in got.values() for n in by_status.values())
    assert delta["database"]["xact_commit"] >= ops
    assert delta["database"]["deadlocks"] == 0
    assert (
        counters["after"]["database"]["xact_commit"] > counters["before"]["database"]["xact_commit"]
    )
    # Debian's defaults, recorded: commits wait for their WAL flush.
    settings = (out / "servers/server1/stats/settings.tsv").read_text().splitlines()
    assert any(line.startswith("synchronous_commit\ton") for line in settings)
    return counters


def check_tidy(out: Path, sides: set[str]) -> None:
    tables = load_run(out)
    tidy = tables.tidy()
    assert set(tidy["side"]) == sides
    client = tidy[tidy["side"] == "client"]
    assert {"send", "pop_queue"} <= set(client["type"])
    assert client[client["type"] == "send"]["count"].sum() > 0
    assert tables.runs.loc[0, "system"] == "simplemq"


def test_a_simplemq_point_through_one_middleware(tmp_path, base_port, netns_prefix, simplemq_jar):
    """Shared-receiver clients (every client pops one receiver's messages) over a preloaded
    queue: the load under which a pop could hand a message out twice."""
    point = mq_point(
        name="through-middleware",
        middlewares=1,
        queue={"workers": 3, "mix": "shared_receiver", "preload": PRELOAD},
    )
    out, manifest = run(tmp_path, base_port, netns_prefix, point)
    assert manifest["driver"] == "simplemq"
    assert {p["role"] for p in manifest["processes"]} == {"postgres", "middleware", "client"}
    assert yaml.safe_load((out / "point.yaml").read_text())["queue"]["preload"] == PRELOAD
    got = replies(out)
    assert got["send"]["ok"] > 0
    # A pop finds a message or reports empty; only sent or preloaded messages come back.
    assert got["pop_queue"].get("ok", 0) <= got["send"]["ok"] + PRELOAD
    check_counters(out, got)
    # Written on SIGTERM: the middleware answered every send the clients counted, and lost
    # no reply of a pop.
    summary = json.loads((out / "middlewares/middleware1/stats/summary.json").read_text())
    operations = summary["operations"]
    assert operations["send"]["replies"]["ok"] == got["send"]["ok"]
    assert all(op["lost_replies"] == 0 for op in operations.values())
    check_tidy(out, {"client", "middleware"})


def test_the_database_baseline_point(tmp_path, base_port, netns_prefix, simplemq_jar):
    """No middleware: each client holds its own database connection (seed 003's baseline),
    here with the naive pop of 2015's PostgreSQL and a commit delay, which the database's
    recorded settings carry."""
    point = mq_point(
        name="db-baseline", middlewares=0, queue={"pop": "naive", "commit_delay_ms": 2.5}
    )
    out, _ = run(tmp_path, base_port, netns_prefix, point)
    assert not (out / "middlewares").exists()
    got = replies(out)
    # staticsmall: send, peek, pop in turn, so each client sent about a third of its turns.
    assert got["send"]["ok"] > 0
    assert set(got) == {"send", "peek_queue", "pop_queue"}
    counters = check_counters(out, got)
    # Each client primed its own connection before the counters started: the priming's
    # messages are all in `before`, and its queues are gone again.
    assert counters["before"]["messages"]["n_tup_ins"] == point.clients_total * PRIME_ROUNDS
    assert counters["before"]["messages"]["n_tup_del"] == point.clients_total * PRIME_ROUNDS
    assert counters["after"]["queues"]["n_live_tup"] == 1
    assert counters["pop"] == "naive"
    assert counters["max_connections"] == point.db_max_connections
    settings = (out / "servers" / "server1" / "stats" / "settings.tsv").read_text().splitlines()
    # The queue's database vacuums at 500 dead rows, looking every second (common.pgsettings).
    assert {
        "commit_delay\t2500",
        "commit_siblings\t0",
        "autovacuum_naptime\t1",
        "autovacuum_vacuum_threshold\t500",
        "autovacuum_vacuum_scale_factor\t0",
    } <= {"\t".join(line.split("\t")[:2]) for line in settings}
    # Vacuum never truncates the queue's table (its lock would stall every pop).
    options = (out / "servers" / "server1" / "stats" / "table_options.tsv").read_text()
    assert "messages\t{vacuum_truncate=off}" in options.splitlines()
    check_tidy(out, {"client"})


def test_budgeted_hosts_warm_the_middleware_and_gate_the_clients(
    tmp_path, base_port, netns_prefix, simplemq_jar
):
    """With CPU budgets, the middleware first serves an unmeasured warm-up, and the clients'
    JVMs wait at their start gate until the budgets bind; two client processes split the ids
    of the run, the last client sending to client 1."""
    # Without cgroups there is nothing to test: skipped, but a failure under `make test`.
    hierarchy = cpubudget.detect(cpubudget.root_from_env())
    need(not isinstance(hierarchy, str), f"no usable cgroups: {hierarchy}")
    assert not isinstance(hierarchy, str)
    point = mq_point(
        name="budgeted",
        middlewares=1,
        instances_per_client=2,
        virtual_clients=2,
        queue={"workers": 2},
        budgets_cores={"server": 0.4, "middleware": 0.3, "client": 0.4},
    )
    out, manifest = run(tmp_path, base_port, netns_prefix, point)
    # The machine has cgroups: a run that fell back to none ran without its budgets.
    assert manifest["cpu"]["accounting"] == hierarchy.name, manifest["warnings"]
    assert (out / "warmup/clients/client1.0/result.json").exists()
    for i in (0, 1):
        assert (out / f"clients/client1.{i}/start-gate.ready").exists()
    got = replies(out)
    # Every send named a registered receiver: none refused, across both processes.
    assert set(got["send"]) == {"ok"}
    check_counters(out, got)
    check_tidy(out, {"client", "middleware"})


def test_a_failed_simplemq_run_leaves_nothing_behind(
    tmp_path, base_port, netns_prefix, simplemq_jar
):
    clusters = set(Path("/tmp").glob("mwlab-pg-*"))
    out = tmp_path / "failed"
    opts = RunOptions(
        out=out,
        base_port=base_port,
        progress=False,
        netns_prefix=netns_prefix,
        linkcap_cache=tmp_path / "linkcap.json",
        fail_at="clients",
    )
    manifest = run_point(mq_point(name="failed", middlewares=1, queue={"workers": 2}), opts)
    assert manifest["status"] == "failed"
    assert "injected failure at stage clients" in manifest["error"]
    no_leftovers(netns_prefix)
    assert processes_in(out) == []
    # PostgreSQL's cluster (a temporary directory of its own) is gone too.
    assert set(Path("/tmp").glob("mwlab-pg-*")) <= clusters
