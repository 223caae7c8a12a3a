"""SimpleMQ points (system: simplemq) over ssh, as the azure profile runs the 2015 study on
VMs: sshd inside emulated hosts, a real PostgreSQL started over ssh on the server machine
(as `mwlab-pg`, since ssh logs in as root), the real SimpleMQ middleware and clients shipped
as a jar. What a user relies on: every message sent is in the database or was popped once,
the database's counters and logs come back into the run directory, and nothing of the run
stays on the machines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testbed.point import Point
from testbed.run import RunOptions, run_point
from testbed.services.middleware import SIMPLEMQ_JAR

from . import sshd
from .conftest import processes_in, processes_matching
from .test_run_simplemq import check_counters, check_tidy, replies

pytestmark = [pytest.mark.netns, pytest.mark.timeout(400)]

ROLES = [
    ("server1", "server"),
    ("middleware1", "middleware"),
    ("client1", "client"),
    ("client2", "client"),
]
PRELOAD = 40


@pytest.fixture
def ssh_machines(tmp_path: Path, netns_prefix: str) -> Iterator[tuple[Path, Path]]:
    if not SIMPLEMQ_JAR.is_file():
        pytest.fail(f"{SIMPLEMQ_JAR} is missing: run `make build` first")
    with sshd.ssh_machines(tmp_path, netns_prefix, ROLES) as machines:
        yield machines


def run_over_ssh(
    tmp_path: Path, base_port: int, remote: Path, inventory: Path, **kw: Any
) -> tuple[Path, dict[str, Any]]:
    spec: dict[str, Any] = {
        "hosts": "ssh",
        "inventory": str(inventory),
        "system": "simplemq",
        "servers": 1,
        "client_machines": 2,
        "virtual_clients": 3,
        "duration_s": 3,
        "client_window_ms": 500,
        "middleware": {"window_ms": 500},
        **kw,
    }
    point = Point.model_validate(spec)
    out = tmp_path / point.name
    opts = RunOptions(
        out=out, base_port=base_port, progress=False, linkcap_cache=tmp_path / "linkcap.json"
    )
    manifest = run_point(point, opts)
    # Nothing of the run stays on the machines: no process (PostgreSQL's included: its
    # cluster was in a scratch directory), no file, and no harness process here.
    assert processes_in(remote) == []
    assert processes_matching(f"-p {base_port}") == [], "PostgreSQL or its psql outlived the run"
    for machine in remote.iterdir():  # those the run used
        assert list(machine.iterdir()) == [], machine.name
    assert manifest["status"] == "ok", manifest["error"]
    assert manifest["host_kind"] == "ssh"
    return out, manifest


def check_database_logs(out: Path, manifest: dict[str, Any]) -> None:
    """PostgreSQL ran on the server machine, as its own user, listening on the machine's
    address and on no socket; its log and statistics are in the run directory."""
    server = next(h for h in manifest["hosts"] if h["role"] == "server")
    postgres = next(p for p in manifest["processes"] if p["role"] == "postgres")
    assert postgres["host"] == "server1"
    assert postgres["command"][0] == "setpriv"  # ssh logs in as root: run as mwlab-pg
    d = out / "servers/server1"
    assert "database system is ready to accept connections" in (d / "stderr.log").read_text()
    settings = dict(
        line.split("\t")[:2] for line in (d / "stats/settings.tsv").read_text().splitlines()
    )
    assert settings["listen_addresses"] == server["address"]
    assert settings["unix_socket_directories"].strip('"') == ""  # CSV quotes an empty string
    assert not (d / "pid").exists()


def test_a_simplemq_point_through_a_middleware_over_ssh(tmp_path, base_port, ssh_machines):
    """Shared-receiver clients on two machines over a preloaded queue, through a middleware
    on its own machine: the load under which a pop could hand a message out twice."""
    inventory, remote = ssh_machines
    out, manifest = run_over_ssh(
        tmp_path, base_port, remote, inventory,
        name="through-middleware", middlewares=1,
        queue={"workers": 3, "mix": "shared_receiver", "preload": PRELOAD},
    )  # fmt: skip
    assert {p["role"] for p in manifest["processes"]} == {"postgres", "middleware", "client"}
    got = replies(out)
    assert got["send"]["ok"] > 0
    assert got["pop_queue"].get("ok", 0) <= got["send"]["ok"] + PRELOAD
    counters = check_counters(out, got)
    # The database's backends were sampled from the server machine while the clients ran.
    assert sum(counters["waits"].values()) > 0
    check_database_logs(out, manifest)
    # The middleware's statistics came back from its machine (written on SIGTERM).
    assert (out / "middlewares/middleware1/stats/summary.json").is_file()
    check_tidy(out, {"client", "middleware"})
    # Each machine's CPU over the clients' window, from its own /proc/stat.
    assert {h["name"] for h in manifest["cpu"]["hosts"]} == {name for name, _ in ROLES}


def test_the_database_baseline_over_ssh(tmp_path, base_port, ssh_machines):
    """No middleware: the clients of both client machines hold their own connections to the
    database on the server machine, which admits the run's machines."""
    inventory, remote = ssh_machines
    out, manifest = run_over_ssh(
        tmp_path, base_port, remote, inventory, name="db-baseline", middlewares=0
    )
    got = replies(out)
    assert set(got) == {"send", "peek_queue", "pop_queue"}
    assert all((out / f"clients/client{i}.0/result.json").is_file() for i in (1, 2))
    check_counters(out, got)
    check_database_logs(out, manifest)
    check_tidy(out, {"client"})
