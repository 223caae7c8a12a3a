"""One-way link delays between emulated roles (build/nfdelay, NFQUEUE in each namespace).

Real namespaces, real memcached, the real delay process. Timing is only asserted as "a round
trip takes at least its delays" plus bounds generous enough for a loaded two-core machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.parse.manifest import read_manifest
from testbed import emulation, linkdelay
from testbed.delaycheck import summarize
from testbed.hosts import NamespaceHost
from testbed.point import Caps, Delays, Point
from testbed.run import RunOptions, run_point
from testbed.services.memcached import memcached_command, wait_for_memcached
from tests.capabilities import provided

from .conftest import REPO, no_leftovers, processes_matching

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

BUILD = REPO / "build"


@pytest.fixture
def delay_ready(netns_prefix: str) -> str:
    """The namespace prefix, once nfdelay and iptables are known to be there."""
    why = linkdelay.missing(BUILD)
    provided(why is None, f"link delays: {why}", "make setup build")
    return netns_prefix


def nfdelay_of(prefix: str) -> list[str]:
    """Running nfdelay processes serving namespaces of `prefix`."""
    return [p for p in processes_matching(f"{prefix}-") if "nfdelay" in p]


def queue_rules(netns: str) -> list[str]:
    ipt = linkdelay.iptables()
    assert ipt is not None
    out = subprocess.run(
        ["ip", "netns", "exec", netns, ipt, "-t", "raw", "-S", "PREROUTING"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if "NFQUEUE" in line]


def memcached_rtts_ms(host: NamespaceHost, address: str, port: int, n: int) -> list[float]:
    """Round trips of `version` from inside `host`, in ms."""
    probe = ["memcached", address, str(n), "0.001", str(port)]
    proc = subprocess.run(
        ["ip", "netns", "exec", host.netns, sys.executable, "-m", "testbed.delayprobe", *probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert proc.returncode == 0, proc.stderr
    return [us / 1e3 for us in json.loads(proc.stdout)]


# --- the plan -------------------------------------------------------------------------------


def hosts_of(*roles: str) -> list[NamespaceHost]:
    return [
        NamespaceHost(name=f"{r}{i}", role=r, address=f"198.18.0.{10 + i}", netns=f"ns-{r}{i}")
        for i, r in enumerate(roles)
    ]


def test_plan_has_a_queue_per_receiving_namespace_and_source_role_with_a_delay():
    hosts = hosts_of("server", "middleware", "client", "client")
    queues = linkdelay.plan(hosts, Delays(client_middleware=1.0, middleware_server=2.5))
    got = {(q.netns, q.src_role, q.delay_ms, q.sources) for q in queues}
    clients = ("198.18.0.12", "198.18.0.13")
    assert got == {
        ("ns-server0", "middleware", 2.5, ("198.18.0.11",)),
        ("ns-middleware1", "server", 2.5, ("198.18.0.10",)),
        ("ns-middleware1", "client", 1.0, clients),
        ("ns-client2", "middleware", 1.0, ("198.18.0.11",)),
        ("ns-client3", "middleware", 1.0, ("198.18.0.11",)),
    }
    # No queue for the zero-delay pair (client <-> server), nor within a role.
    assert not linkdelay.plan(hosts, Delays())
    # Queue numbers name the source role, the same in every namespace.
    assert {(q.src_role, q.number) for q in queues} == {
        ("middleware", 2),
        ("server", 3),
        ("client", 1),
    }


# --- the delay itself -----------------------------------------------------------------------


def test_round_trips_take_at_least_each_pairs_delay_and_pairs_differ(
    tmp_path: Path, base_port: int, delay_ready: str
):
    emu = emulation.Emulation(delay_ready, Caps().model_dump())
    delay: linkdelay.LinkDelay | None = None
    try:
        client = emu.add_host("client1", "client", tmp_path)
        middleware = emu.add_host("middleware1", "middleware", tmp_path)
        server = emu.add_host("server1", "server", tmp_path)
        for host, port in ((server, base_port), (middleware, base_port + 1)):
            cmd = memcached_command(
                host.address, port, memory_mib=None, disable_udp=False, connections=None
            )
            wait_for_memcached(host.address, port, 30.0, host.start(cmd, host.name, "mc"))
        delays = Delays(client_middleware=1.0, middleware_server=5.0, client_server=0.5)
        delay = linkdelay.LinkDelay(emu.hosts, delays, BUILD, tmp_path / "linkdelay")
        delay.start()
        assert nfdelay_of(delay_ready)
        cm = memcached_rtts_ms(client, middleware.address, base_port + 1, 100)
        ms = memcached_rtts_ms(middleware, server.address, base_port, 100)
        cs = memcached_rtts_ms(client, server.address, base_port, 100)
        # Never faster than the two one-way delays of the pair.
        assert min(cm) >= 2.0
        assert min(ms) >= 10.0
        assert min(cs) >= 1.0
        # Each pair has its own delay: the fastest round trip of a short pair stays far
        # below the long pair's (bounds generous for a loaded machine).
        assert min(cm) < 10.0
        assert min(cs) < 10.0
        record = delay.stop()
        assert record["applied"] and record["exit_code"] == 0
        assert record["died_during_run"] is False
        pairs = record["pairs"]
        assert pairs["client->middleware"]["delay_ms"] == 1.0
        assert pairs["middleware->server"]["delay_ms"] == 5.0
        for name in ("client->middleware", "middleware->client", "middleware->server"):
            assert pairs[name]["packets"] >= 100, name
            assert pairs[name]["dropped"] == 0, name
        assert record["cpu_s"] is not None and record["cpu_s"] > 0
        assert not nfdelay_of(delay_ready)
        # Rules removed before the listener went: nothing is queued any more.
        assert queue_rules(server.netns) == []
    finally:
        if delay is not None:
            delay.stop()
        for host in emu.hosts:
            host.stop_all(grace_s=1.0)
        emu.teardown()
    no_leftovers(delay_ready)


def test_nfdelay_reports_a_bad_queue_spec_clearly():
    provided(linkdelay.binary(BUILD).is_file(), str(linkdelay.binary(BUILD)), "make build")
    proc = subprocess.run(
        [str(linkdelay.binary(BUILD)), "somewhere:notanumber:1000"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1
    assert "bad queue number" in proc.stderr


# --- runs -----------------------------------------------------------------------------------


def delayed_point(**kw) -> Point:
    spec = {
        "name": "delay",
        "hosts": "emulated",
        "middlewares": 1,
        "driver": "builtin",
        "duration_s": 3,
        "workload": {"ratio": "1:1", "data_size": 64, "key_maximum": 200},
        "delays_ms": {"client_middleware": 1.0, "middleware_server": 2.0},
    }
    spec.update(kw)
    return Point.model_validate(spec)


def options(tmp_path: Path, base_port: int, prefix: str, **kw) -> RunOptions:
    return RunOptions(
        out=tmp_path / "run",
        base_port=base_port,
        progress=False,
        netns_prefix=prefix,
        linkcap_cache=tmp_path / "linkcap.json",
        **kw,
    )


DELAY_FLAGS = ("--delay-client-middleware", "1", "--delay-middleware-server", "2")


def cli_args(tmp_path: Path, base_port: int, prefix: str, *extra: str) -> list[str]:
    """`mwlab run` of one server, one middleware and one client for 60 s (stopped early)."""
    return [
        "--out", str(tmp_path / "run"), "--hosts", "emulated", "--driver", "builtin",
        "--middlewares", "1", "--duration", "60", "--ratio", "1:1", "--data-size", "64",
        "--key-maximum", "200", "--base-port", str(base_port), "--netns-prefix", prefix,
        "--linkcap-cache", str(tmp_path / "linkcap.json"), *extra,
    ]  # fmt: skip


def test_a_delayed_run_records_the_delays_and_leaves_nothing(
    tmp_path: Path, base_port: int, delay_ready: str, loadgen_jar: Path
):
    manifest = run_point(delayed_point(), options(tmp_path, base_port, delay_ready))
    assert manifest["status"] == "ok", manifest["error"]
    record = manifest["link_delay"]
    assert record["applied"] is True and record["exit_code"] == 0
    assert record["delays_ms"]["middleware_server"] == 2.0
    assert set(record["pairs"]) == {
        "client->middleware",
        "middleware->client",
        "middleware->server",
        "server->middleware",
    }
    assert all(p["packets"] > 0 and p["dropped"] == 0 for p in record["pairs"].values())
    assert record["cpu_us_per_packet"] is not None
    # Every request crossed both links twice: client -> middleware -> server and back.
    result = json.loads((tmp_path / "run" / "clients" / "client1.0" / "result.json").read_text())
    assert result["ALL STATS"]["Totals"]["Min Latency"] >= 2 * (1.0 + 2.0)
    assert not nfdelay_of(delay_ready)
    no_leftovers(delay_ready)


def test_without_delays_there_is_no_delay_process_and_no_queue_rule(
    tmp_path: Path, base_port: int, delay_ready: str, loadgen_jar: Path, mwlab_run
):
    out = tmp_path / "run"
    run = mwlab_run(cli_args(tmp_path, base_port, delay_ready, "--pause-at", "clients"))
    run.wait_for("paused at clients")
    assert not nfdelay_of(delay_ready)
    for host in ("server1", "middleware1", "client1"):
        assert queue_rules(f"{delay_ready}-{host}") == []
    run.send("SIGTERM")
    run.finish()
    assert read_manifest(out / "run.json")["link_delay"] is None
    assert not (out / "linkdelay").exists()
    no_leftovers(delay_ready)


def test_sigterm_during_a_delayed_run_stops_the_delay_process(
    tmp_path: Path, base_port: int, delay_ready: str, loadgen_jar: Path, mwlab_run
):
    out = tmp_path / "run"
    run = mwlab_run(
        cli_args(tmp_path, base_port, delay_ready, "--pause-at", "clients", *DELAY_FLAGS)
    )
    run.wait_for("paused at clients")
    assert len(nfdelay_of(delay_ready)) == 1
    assert queue_rules(f"{delay_ready}-middleware1") != []
    run.send("SIGTERM")
    assert run.finish() == 143
    manifest = read_manifest(out / "run.json")
    assert manifest["status"] == "failed"
    assert manifest["link_delay"]["exit_code"] == 0
    assert not nfdelay_of(delay_ready)
    no_leftovers(delay_ready)


def test_a_failed_run_stops_the_delay_process(
    tmp_path: Path, base_port: int, delay_ready: str, loadgen_jar: Path
):
    opts = options(tmp_path, base_port, delay_ready, fail_at="servers")
    manifest = run_point(delayed_point(), opts)
    assert manifest["status"] == "failed"
    assert "injected failure at stage servers" in manifest["error"]
    assert manifest["link_delay"]["applied"] is True
    assert not nfdelay_of(delay_ready)
    no_leftovers(delay_ready)


def test_the_run_fails_clearly_when_the_delay_process_dies(
    tmp_path: Path, base_port: int, delay_ready: str, loadgen_jar: Path, mwlab_run
):
    out = tmp_path / "run"
    run = mwlab_run(cli_args(tmp_path, base_port, delay_ready, *DELAY_FLAGS))
    run.wait_for("virtual clients for")
    (pid,) = [int(p.split()[0]) for p in nfdelay_of(delay_ready)]
    os.kill(pid, signal.SIGKILL)
    code = run.finish()
    assert code == 1, "\n".join(run.lines)
    manifest = read_manifest(out / "run.json")
    assert manifest["status"] == "failed"
    assert "nfdelay" in manifest["error"] and "dropped" in manifest["error"]
    assert manifest["link_delay"]["died_during_run"] is True
    # The run stopped its clients rather than waiting out their 60 s.
    clients = [p for p in manifest["processes"] if p["role"] == "client"]
    assert clients and all(p["exit_code"] != 0 for p in clients)
    assert not nfdelay_of(delay_ready)
    no_leftovers(delay_ready)


def test_delays_on_local_hosts_are_ignored_with_a_warning(
    tmp_path: Path, base_port: int, loadgen_jar: Path
):
    opts = RunOptions(out=tmp_path / "run", base_port=base_port, progress=False)
    manifest = run_point(delayed_point(hosts="local"), opts)
    assert manifest["status"] == "ok", manifest["error"]
    assert any("delays_ms ignored" in w for w in manifest["warnings"])
    assert manifest["link_delay"] == {
        "applied": False,
        "delays_ms": Delays(client_middleware=1.0, middleware_server=2.0).model_dump(),
    }


def test_delay_check_summary_measures_against_the_target():
    s = summarize([2100.0, 2050.0, 1990.0, 2300.0], target_ms=2.0)
    assert s["n"] == 4
    assert s["rtt_ms"]["min"] == 1.99
    assert s["excess_ms"]["median"] == round((2.05 + 2.1) / 2 - 2.0, 4)
    assert s["below_target"] == 1
