"""Points on emulated hosts: network namespaces on a bridge with tc tbf caps."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed.point import Point
from testbed.run import RunOptions, run_point

from .conftest import REPO, no_leftovers, processes_matching

pytestmark = [pytest.mark.netns, pytest.mark.timeout(240)]


def read_only_point(**kw) -> Point:
    spec = {
        "name": "cap",
        "hosts": "emulated",
        "servers": 1,
        "client_machines": 1,
        "instances_per_client": 1,
        "threads": 2,
        "virtual_clients": 8,
        "driver": "builtin",
        "workload": {"ratio": "0:1", "data_size": 4096, "key_maximum": 10000},
        "duration_s": 5,
    }
    spec.update(kw)
    return Point.model_validate(spec)


def test_server_cap_bounds_read_only_throughput(tmp_path, base_port, netns_prefix, loadgen_jar):
    out = tmp_path / "cap"
    opts = RunOptions(
        out=out,
        base_port=base_port,
        progress=False,
        netns_prefix=netns_prefix,
        linkcap_cache=tmp_path / "linkcap.json",
    )
    manifest = run_point(read_only_point(), opts)
    no_leftovers(netns_prefix)
    assert manifest["status"] == "ok", manifest["error"]
    assert manifest["host_kind"] == "emulated"
    assert all(h["address"].startswith("198.1") for h in manifest["hosts"])
    assert 80 <= manifest["link_capacity_mbit"]["server"] <= 100
    assert 160 <= manifest["link_capacity_mbit"]["client"] <= 200
    gets = json.loads((out / "clients/client1.0/result.json").read_text())["ALL STATS"]["Gets"]
    # Every reply carries the value plus its VALUE line and the END marker.
    reply = len(b"VALUE memtier-10000 0 4096\r\n") + 4096 + len(b"\r\nEND\r\n")
    bound = 100e6 / 8 / reply
    assert gets["Misses/sec"] == 0
    # The stable seconds (the first, with connection set-up, and the partial last one cut):
    # the link caps them, so they stay under the bound and, once it binds, close to it.
    seconds = sorted(gets["Time-Serie"].items(), key=lambda kv: int(kv[0]))[1:-1]
    rates = [float(s["Count"]) for _, s in seconds]
    assert rates, gets["Time-Serie"]
    assert max(rates) <= bound * 1.02  # a window boundary may shift a few replies
    assert 0.8 * bound <= sorted(rates)[len(rates) // 2]
    # The second run of the same topology takes the capacities from the cache.
    cached = json.loads((tmp_path / "linkcap.json").read_text())
    assert list(cached.values()) == [manifest["link_capacity_mbit"]]


def test_injected_failure_leaves_no_namespace_or_process(
    tmp_path, base_port, netns_prefix, loadgen_jar
):
    opts = RunOptions(
        out=tmp_path / "fail",
        base_port=base_port,
        progress=False,
        netns_prefix=netns_prefix,
        linkcap_cache=tmp_path / "linkcap.json",
        fail_at="clients",
    )
    manifest = run_point(read_only_point(servers=2, instances_per_client=2), opts)
    assert manifest["status"] == "failed"
    assert "injected failure" in manifest["error"]
    no_leftovers(netns_prefix)
    assert processes_matching(netns_prefix) == []
    assert processes_matching(f"-p {base_port} ") == []


def test_ctrl_c_tears_down_and_records_why(tmp_path, base_port, netns_prefix, loadgen_jar):
    out = tmp_path / "int"
    cmd = [
        sys.executable, "-m", "mwlab", "run", "--out", str(out), "--hosts", "emulated",
        "--driver", "builtin", "--duration", "30", "--ratio", "1:0", "--data-size", "64",
        "--base-port", str(base_port), "--netns-prefix", netns_prefix, "--no-progress",
        "--linkcap-cache", str(tmp_path / "linkcap.json"),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client_log = out / "clients" / "client1.0" / "stdout.log"
    deadline = time.monotonic() + 60
    while not client_log.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err.decode()
    manifest = json.loads(Path(out / "run.json").read_text())
    assert manifest["status"] == "failed"
    assert "interrupted" in manifest["error"]
    no_leftovers(netns_prefix)
    assert processes_matching(netns_prefix) == []
