"""A point over ssh: sshd runs inside emulated hosts, reached with a generated key."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed.inventory import load_inventory
from testbed.point import Point
from testbed.run import RunOptions, run_point
from testbed.services.memcached import memcached_answers

from . import sshd

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

ROLES = [("server1", "server"), ("server2", "server"), ("client1", "client")]


@pytest.fixture
def ssh_machines(tmp_path, netns_prefix) -> Iterator[tuple[Path, Path]]:
    """(inventory, the root of the machines' scratch directories): see `sshd.ssh_machines`."""
    with sshd.ssh_machines(tmp_path, netns_prefix, ROLES) as machines:
        yield machines


def test_point_over_ssh(tmp_path, base_port, ssh_machines, loadgen_jar):
    inventory, remote = ssh_machines
    point = Point.model_validate(
        {
            "name": "ssh",
            "hosts": "ssh",
            "inventory": str(inventory),
            "servers": 2,
            "client_machines": 1,
            "instances_per_client": 2,
            "threads": 1,
            "virtual_clients": 2,
            "driver": "builtin",
            "workload": {"ratio": "1:1", "data_size": 512, "key_maximum": 500},
            "duration_s": 2,
        }
    )
    out = tmp_path / "run"
    opts = RunOptions(
        out=out, base_port=base_port, progress=False, linkcap_cache=tmp_path / "lc.json"
    )
    manifest = run_point(point, opts)
    assert manifest["status"] == "ok", manifest["error"]
    assert manifest["host_kind"] == "ssh"
    assert {h["name"] for h in manifest["hosts"]} == {"server1", "server2", "client1"}
    # Measured over the emulated links underneath the ssh hosts: never above the cap (how
    # close it comes depends on the CPU the machine has to spare).
    assert 0 < manifest["link_capacity_mbit"]["server"] <= 100
    # Each machine's CPU over the clients' window, from its own /proc/stat.
    cpu = manifest["cpu"]
    assert cpu["accounting"] == "ssh"
    assert {h["name"]: h["role"] for h in cpu["hosts"]} == {
        "server1": "server",
        "server2": "server",
        "client1": "client",
    }
    assert all(h["cores"] >= 1 and 0 < h["util"] <= 1 for h in cpu["hosts"])
    for i, server in enumerate(("server1", "server2")):
        result = json.loads((out / f"clients/client1.{i}/result.json").read_text())
        sets = result["ALL STATS"]["Sets"]["Count"]
        assert sets > 0 and result["mwlab"]["counts"]["misses"] == 0
        stats = (out / "servers" / server / "stats.txt").read_text()
        cmd_set = int(next(ln.split()[2] for ln in stats.splitlines() if " cmd_set " in ln))
        # Requests in flight when the client stopped: at most one per connection (2).
        assert 0 <= cmd_set - 500 - sets <= 2
        assert (out / "servers" / server / "populate" / "result.json").exists()
    # Each machine's run directory is gone, and nothing answers there any more.
    assert remote.is_dir()
    for name, _ in ROLES:
        assert list((remote / name).iterdir()) == [], name
    for i, host in enumerate(h for h in manifest["hosts"] if h["role"] == "server"):
        assert not memcached_answers(host["address"], base_port + i)


def test_cleanup_of_one_machine_leaves_the_others_running(tmp_path, ssh_machines):
    inventory, remote = ssh_machines
    inv = load_inventory(inventory)
    first, second = (inv.ssh_host(m, "run-1") for m in inv.of_role("server"))
    procs = [h.start(["sleep", "600"], "job", "job") for h in (first, second)]
    remote_pid = [
        (remote / h.name / "run-1" / "job" / "pid") for h in (first, second)
    ]  # written by the remote shell once the job runs
    for pid_file in remote_pid:
        wait_for_file(pid_file)
    first.cleanup()
    assert procs[0].poll() is not None
    assert not (remote / first.name / "run-1").exists()
    # The other machine's job and files are untouched.
    assert procs[1].poll() is None
    assert pid_alive(int(remote_pid[1].read_text()))
    second.cleanup()
    assert procs[1].poll() is not None
    assert not (remote / second.name / "run-1").exists()


def wait_for_file(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
