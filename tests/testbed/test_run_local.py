"""Points run end to end on local hosts, with real servers and clients."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testbed.point import Point
from testbed.run import RunOptions, run_point
from testbed.services.ports import port_free

from .conftest import REPO, parse_stats, processes_in, processes_matching

pytestmark = pytest.mark.timeout(180)


def options(out: Path, base_port: int, **kw) -> RunOptions:
    return RunOptions(out=out, base_port=base_port, progress=False, linkcap_cache=None, **kw)


def two_servers(**kw) -> Point:
    """The study's second baseline: one client machine, two instances, one per server."""
    spec = {
        "name": "two-servers",
        "hosts": "local",
        "servers": 2,
        "client_machines": 1,
        "instances_per_client": 2,
        "threads": 1,
        "virtual_clients": 4,
        "driver": "builtin",
        "workload": {"ratio": "1:3", "data_size": 1024, "key_maximum": 2000},
        "duration_s": 2,
    }
    spec.update(kw)
    return Point.model_validate(spec)


def client_results(out: Path) -> dict[str, dict]:
    return {
        d.name: json.loads((d / "result.json").read_text())
        for d in sorted((out / "clients").iterdir())
    }


def test_local_point_runs_and_every_server_gets_its_share(tmp_path, base_port, loadgen_jar):
    out = tmp_path / "run"
    manifest = run_point(two_servers(), options(out, base_port))
    assert manifest["status"] == "ok", manifest["error"]
    assert json.loads((out / "run.json").read_text()) == manifest
    assert Point.model_validate(yaml.safe_load((out / "point.yaml").read_text())) == two_servers()
    assert manifest["clients_total"] == 8
    assert manifest["host_kind"] == "local" and manifest["driver"] == "builtin"
    assert all(p["exit_code"] == 0 for p in manifest["processes"])
    # Every stage is timed, and together they account for the run's wall time.
    stages = manifest["stage_s"]
    assert {"servers", "populate", "clients", "stop", "collect", "teardown"} <= set(stages)
    assert all(t >= 0 for t in stages.values())
    assert stages["clients"] >= 0.9 * two_servers().duration_s
    assert sum(stages.values()) <= manifest["duration_s"] + 0.01
    assert sum(stages.values()) >= 0.9 * manifest["duration_s"]
    clients = [p for p in manifest["processes"] if p["role"] == "client"]
    # Instance i targets server i.
    assert [c["command"][c["command"].index("-p") + 1] for c in clients] == [
        str(base_port),
        str(base_port + 1),
    ]
    results = client_results(out)
    assert set(results) == {"client1.0", "client1.1"}
    for i, server in enumerate(("server1", "server2")):
        r = results[f"client1.{i}"]
        assert r["run information"]["Connections per thread"] == 4
        stats = parse_stats((out / "servers" / server / "stats.txt").read_text())
        populated = json.loads((out / "servers" / server / "populate" / "result.json").read_text())
        assert stats["curr_items"] == 2000
        assert populated["ALL STATS"]["Sets"]["Count"] == 2000
        sets = r["ALL STATS"]["Sets"]["Count"]
        keys = r["mwlab"]["counts"]["keys_requested"]
        assert sets > 0 and keys > 0
        # A request still unanswered when the client gives up waiting reaches the server
        # without being counted by the client: at most one per connection (4), however
        # slow the machine, as each connection has one request out at a time.
        assert stats["cmd_set"] - 2000 >= sets and stats["cmd_get"] >= keys
        assert (stats["cmd_set"] - 2000 - sets) + (stats["cmd_get"] - keys) <= 4
        assert stats["get_misses"] == 0
    for name in ("server1", "server2"):
        assert (out / "servers" / name / "stderr.log").exists()


def test_cli_runs_a_point_from_flags(tmp_path, base_port, loadgen_jar):
    out = tmp_path / "cli"
    point = tmp_path / "p.yaml"
    point.write_text(yaml.safe_dump({"name": "cli", "hosts": "local", "driver": "builtin"}))
    cmd = [
        sys.executable, "-m", "mwlab", "run", "--point", str(point), "--out", str(out),
        "--base-port", str(base_port), "--no-progress", "--duration", "1",
        "--virtual-clients", "2", "--ratio", "0:1", "--data-size", "100", "--key-maximum", "50",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["point"]["workload"]["ratio"] == "0:1"
    assert manifest["point"]["virtual_clients"] == 2
    result = client_results(out)["client1.0"]
    assert result["ALL STATS"]["Gets"]["Count"] > 0
    assert result["ALL STATS"]["Sets"]["Count"] == 0


def test_cli_rejects_a_bad_point(tmp_path):
    cmd = [sys.executable, "-m", "mwlab", "run", "--out", str(tmp_path / "x"), "--ratio", "3"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 2
    assert "ratio must be 'S:G'" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_busy_port_fails_before_starting_anything(tmp_path, base_port, memcached):
    # The memcached fixture holds base_port, where server1 would listen.
    out = tmp_path / "busy"
    manifest = run_point(two_servers(), options(out, memcached))
    assert manifest["status"] == "failed"
    assert f"ports already in use on 127.0.0.1: {memcached}" in manifest["error"]
    assert manifest["processes"] == []


@pytest.mark.parametrize(
    ("stage", "started"),
    [
        ("servers", {"server"}),
        ("populate", {"server", "populate"}),
        ("clients", {"server", "populate", "client"}),
        ("stop", {"server", "populate", "client"}),
    ],
)
def test_injected_failure_tears_everything_down(tmp_path, base_port, loadgen_jar, stage, started):
    """The failure comes once the stage's processes run: teardown has something to stop."""
    out = tmp_path / stage
    manifest = run_point(two_servers(duration_s=1), options(out, base_port, fail_at=stage))
    assert manifest["status"] == "failed"
    assert manifest["error"] == f"injected failure at stage {stage}"
    assert json.loads((out / "run.json").read_text())["status"] == "failed"
    assert {p["role"] for p in manifest["processes"]} == started
    for p in manifest["processes"]:
        assert p["exit_code"] is not None, p
    assert processes_in(out) == []
    assert processes_matching(f"-p {base_port} ") == []
    assert processes_matching(f"-p {base_port + 1} ") == []
    assert port_free("127.0.0.1", base_port) and port_free("127.0.0.1", base_port + 1)


def test_memaslap_point_through_the_middleware(tmp_path, base_port, loadgen_jar):
    """The 2016 study's driver: memaslap with many connections starts timing within seconds
    (its key window is bounded) and every request it makes reaches the servers."""
    out = tmp_path / "memaslap"
    point = two_servers(
        name="memaslap",
        driver="memaslap",
        middlewares=1,
        instances_per_client=1,
        virtual_clients=40,
        workload={"ratio": "1:19", "data_size": 128, "key_size": 16, "key_maximum": 10000},
        middleware={"server_timeout_ms": 60000},  # a healthy path on a possibly loaded machine
        duration_s=2,
    )
    manifest = run_point(point, options(out, base_port))
    assert manifest["status"] == "ok", manifest["error"]
    assert manifest["driver"] == "memaslap"
    text = (out / "clients" / "client1.0" / "memaslap.txt").read_text()
    assert "TPS:" in text
    servers = [parse_stats((d / "stats.txt").read_text()) for d in (out / "servers").iterdir()]
    # Sets are replicated to both servers; gets land on one of them.
    assert all(s["cmd_set"] > 0 for s in servers)
    assert sum(s["cmd_get"] for s in servers) > 0


def test_cli_runs_a_simplemq_point_file_on_local_hosts(tmp_path, base_port):
    """`mwlab run --point` with a SimpleMQ point: PostgreSQL and one middleware on loopback;
    `--workers` names the memcached middleware's count and is refused with the field to use."""
    jar = REPO / "build" / "simplemq.jar"
    if not jar.is_file():
        pytest.fail(f"{jar} is missing: run `make build` first")
    point = tmp_path / "mq.yaml"
    spec = {"name": "mq", "hosts": "local", "system": "simplemq", "middlewares": 1,
            "virtual_clients": 3, "queue": {"workers": 2, "message_size": 2000}}  # fmt: skip
    point.write_text(yaml.safe_dump(spec))
    out = tmp_path / "mq"
    cmd = [sys.executable, "-m", "mwlab", "run", "--point", str(point), "--out", str(out),
           "--base-port", str(base_port), "--no-progress", "--duration", "2"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=150, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert processes_in(out) == []
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["point"]["queue"]["message_size"] == 2000
    result = client_results(out)["client1.0"]
    assert result["ALL STATS"]["Sends"]["Count"] > 0
    assert result["mwlab"]["config"]["body_bytes"] == 2000
    counters = json.loads((out / "servers/server1/counters.json").read_text())
    assert counters["delta"]["queue"]["sent"] == result["ALL STATS"]["Sends"]["Count"]
    refused = subprocess.run(
        [*cmd[:6], "--out", str(tmp_path / "refused"), "--workers", "30"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "queue.workers" in refused.stdout + refused.stderr
