"""Points on emulated hosts: network namespaces on a bridge with tc tbf caps."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testbed import emulation
from testbed.point import Point
from testbed.run import RunOptions, run_point

from .conftest import assert_interrupted, no_leftovers, processes_in, processes_matching

pytestmark = [pytest.mark.netns, pytest.mark.timeout(240)]

SERVER_CAP_MBIT = 100
# Large values: without the cap these replies leave far faster than the cap allows (several
# times its bound, also on a loaded two-core machine), so a cap that did not hold would show.
VALUE_BYTES = 16384
KEYS = 2000


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
        "workload": {"ratio": "0:1", "data_size": VALUE_BYTES, "key_maximum": KEYS},
        "duration_s": 5,
        "caps_mbit": {"server": SERVER_CAP_MBIT, "client": 200, "middleware": 800},
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
    # The machine's speed over the clients' window, from a probe on every CPU (testbed.
    # speedprobe), and no probe outlives the run.
    speed = manifest["cpu"]["machine_speed"]
    assert speed["pieces"] >= 2 and speed["piece_us_median"] > 0
    probes = [
        p for p in Path("/proc").glob("[0-9]*/cmdline")
        if str(out).encode() in _read(p) and b"testbed.speedprobe" in _read(p)
    ]  # fmt: skip
    assert probes == []
    # Measured through the caps: never above them. How close they come depends on how much
    # CPU the machine has to spare, so that is no assertion here.
    capacity = manifest["link_capacity_mbit"]
    assert 0 < capacity["server"] <= SERVER_CAP_MBIT
    assert 0 < capacity["client"] <= 200
    gets = json.loads((out / "clients/client1.0/result.json").read_text())["ALL STATS"]["Gets"]
    # Every reply carries the value plus its VALUE line and the END marker.
    reply = len(f"VALUE memtier-{KEYS} 0 {VALUE_BYTES}\r\n") + VALUE_BYTES + len("\r\nEND\r\n")
    bound = SERVER_CAP_MBIT * 1e6 / 8 / reply
    assert gets["Misses/sec"] == 0
    # The stable seconds (the first, with connection set-up, and the partial last one cut):
    # the link caps them, so they stay under the bound.
    seconds = sorted(gets["Time-Serie"].items(), key=lambda kv: int(kv[0]))[1:-1]
    rates = [float(s["Count"]) for _, s in seconds]
    assert rates and min(rates) > 0, gets["Time-Serie"]
    assert max(rates) <= bound * 1.02  # a window boundary may shift a few replies
    # The capacities are cached per topology...
    cache = tmp_path / "linkcap.json"
    cached = json.loads(cache.read_text())
    assert list(cached.values()) == [manifest["link_capacity_mbit"]]
    # ...and the next run of the same topology takes them from there instead of measuring:
    # marked values in the cache come back in its manifest, and iperf3 never ran.
    marked = {role: value + 0.25 for role, value in manifest["link_capacity_mbit"].items()}
    cache.write_text(json.dumps({key: marked for key in cached}))
    again = run_point(
        read_only_point(duration_s=1),
        RunOptions(
            out=tmp_path / "again",
            base_port=base_port,
            progress=False,
            netns_prefix=netns_prefix,
            linkcap_cache=cache,
        ),
    )
    no_leftovers(netns_prefix)
    assert again["status"] == "ok", again["error"]
    assert again["link_capacity_mbit"] == marked
    assert not (tmp_path / "again" / "linkcap").exists()


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


def test_signals_tear_down_namespaces_even_with_a_second_signal(
    tmp_path, base_port, mwlab_run, netns_prefix, loadgen_jar
):
    """Ctrl-C with SIGINT inherited as ignored, then SIGTERM while the run tears down."""
    out = tmp_path / "int"
    args = [
        "--out", str(out), "--hosts", "emulated", "--driver", "builtin", "--duration", "30",
        "--ratio", "1:0", "--data-size", "64", "--base-port", str(base_port),
        "--netns-prefix", netns_prefix, "--linkcap-cache", str(tmp_path / "linkcap.json"),
        "--pause-at", "clients", "--pause-at", "teardown",
    ]  # fmt: skip
    run = mwlab_run(args)
    run.wait_for("paused at clients")
    run.send("SIGINT")
    run.wait_for("paused at teardown")
    assert emulation.leftovers(netns_prefix) != []
    run.send("SIGTERM")
    code = run.finish()
    assert_interrupted(
        out, code, "\n".join(run.lines), [("SIGINT", "clients"), ("SIGTERM", "teardown")]
    )
    no_leftovers(netns_prefix)
    assert processes_matching(netns_prefix) == []
    assert processes_in(out) == []


def test_rto_min_and_tbf_queue_are_dilated_by_the_scale():
    assert emulation.rto_min_ms(0.05) == 4000  # the study's 200 ms, 20 times slower
    assert emulation.rto_min_ms(0.1) == 2000
    assert emulation.rto_min_ms(0.001) == emulation.RTO_MIN_CAP_MS
    assert emulation.rto_min_ms(1.0) is None  # the kernel's default is the study's
    latency = emulation.tbf_args(5.05, 0.05)
    assert latency[latency.index("latency") + 1] == "1000ms"
    assert "50ms" in emulation.tbf_args(100)
    with pytest.raises(emulation.EmulationError):
        emulation.rto_min_ms(0)


def _route_and_qdisc(netns: str) -> tuple[str, str]:
    route = emulation._ip("-n", netns, "route", "show").stdout
    qdisc = subprocess.run(
        ["ip", "netns", "exec", netns, "tc", "qdisc", "show"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return route, qdisc


def test_a_scaled_hosts_route_carries_the_dilated_rto_min(tmp_path, netns_prefix):
    scaled = emulation.Emulation(netns_prefix, {"server": 5.05}, scale=0.05)
    try:
        host = scaled.add_host("server1", "server", tmp_path)
        route, qdisc = _route_and_qdisc(host.netns)
        assert "lat 1s" in qdisc, qdisc  # the cap's queue: 50 ms of the study's time
        assert scaled.subnet is not None
        line = next(x for x in route.splitlines() if x.startswith(str(scaled.subnet)))
        # iproute2 prints the metric in seconds once it is whole ones (`4s`).
        assert "rto_min lock 4s" in line, route
        assert "quickack" not in line  # delayed ACKs stay on, as on the study's machines
        assert f"src {host.address}" in line
        assert scaled.settings["rto_min_ms"] == 4000
        assert scaled.settings["tbf_latency_ms"] == 1000
    finally:
        assert scaled.teardown() == []
    no_leftovers(netns_prefix)
    # At s = 1 the route stays the kernel's, without a minimum RTO of its own.
    plain = emulation.Emulation(netns_prefix, {"server": 100.0})
    try:
        host = plain.add_host("server1", "server", tmp_path)
        route, _ = _route_and_qdisc(host.netns)
        assert "rto_min" not in route, route
        assert plain.settings["rto_min_ms"] is None
    finally:
        assert plain.teardown() == []
    no_leftovers(netns_prefix)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # the process is gone
        return b""
