"""The chaos soak: a short soak against the real middleware, and proof that its oracle can fail.

Ports: the chaos range, 25700-25999 (`make chaos` starts at 25500).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from soak.chaos import (
    ChaosError,
    FaultEvent,
    MiddlewareProcess,
    Servers,
    SoakConfig,
    pick_ports,
    plan_faults,
    verify_placement,
)
from soak.chaos_client import Client, ClientContext
from soak.chaos_oracle import FaultLog, LatencyBound, StallProbe, Tally
from soak.hashring import HashRing
from testbed.services.middleware import MIDDLEWARE_JAR as JAR

ROOT = Path(__file__).resolve().parents[2]


def soak(*args: str, hang_guard_s: float) -> tuple[int, dict[str, object], str]:
    """Runs `mwlab chaos` as a user does; returns its exit status, JSON line and stderr."""
    if not JAR.exists():
        pytest.fail(f"{JAR} is missing: run `make build` first")
    cmd = [sys.executable, "-m", "mwlab", "chaos", *args]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=hang_guard_s)
    except subprocess.TimeoutExpired:
        p.terminate()  # the soak tears its processes down on SIGTERM
        out, err = p.communicate(timeout=60)
        pytest.fail(f"the soak hung; stderr:\n{err}")
    lines = out.strip().splitlines()
    assert len(lines) == 1, f"expected one JSON line, got:\n{out}\nstderr:\n{err}"
    return p.returncode, json.loads(lines[0]), err


SEED = 20240607


def planned(cfg: SoakConfig, seed: int) -> list[FaultEvent]:
    """The faults a soak with `cfg` and `seed` carries out."""
    end = cfg.seconds - cfg.cooldown_s()
    return plan_faults(
        seed, cfg.servers, cfg.warmup_s(), end, cfg.faults, cfg.fault_gap_s, cfg.max_faulty, 1.0
    )


@pytest.mark.timeout(180)
def test_soak_under_faults_loses_nothing_and_stores_nothing_falsely() -> None:
    assert {e.action for e in planned(SoakConfig(seconds=25), SEED)} == {
        "stop",
        "cont",
        "kill",
        "restart",
    }

    code, r, err = soak(
        "--seconds", "25", "--seed", str(SEED), "--base-port", "25700", hang_guard_s=150
    )

    assert r["seed"] == SEED
    assert r["requests"] > 1000 and r["replies"] == r["requests"], err
    for key in ("lost", "out_of_order", "false_stored", "late", "missing_reads"):
        assert r[key] == 0, (key, r["examples"], err)
    assert r["faults_injected"] > 0
    assert r["kills"] == r["restarts"] > 0 and r["stops"] > 0
    assert r["set_errors"] > 0  # the faults were felt: a SET needs both of its replicas
    assert r["bad_requests"] > 0  # answered by the middleware itself, in their place
    assert r["stored_checked"] > 1000  # STOREDs were checked on the replicas
    assert r["resource_violations"] == [] and r["max_fds"] <= r["fds_cap"]
    assert r["middleware_exit"] == 0
    assert code == 0, r


@pytest.mark.timeout(120)
def test_oracle_fails_a_middleware_that_stores_fewer_replicas_and_answers_late() -> None:
    # The middleware keeps one copy and waits 1000 ms for a stopped server; the oracle is told
    # two copies and 100 ms. Stops of up to 3 s come every 2 s on average.
    cfg = SoakConfig(seconds=10, faults=("stop",), expect_timeout_ms=100, late_margin_ms=50)
    stopped_at: dict[int, float] = {}
    longest = 0.0
    for e in planned(cfg, 3):
        if e.action == "stop":
            stopped_at[e.server] = e.at
        else:
            longest = max(longest, e.at - stopped_at.pop(e.server))
    assert longest > 0.5  # the seed's plan has a stop far longer than 100 ms + 50 ms

    code, r, err = soak(
        *("--seconds", "10", "--seed", "3", "--base-port", "25800", "--faults", "stop"),
        *("--replication", "1", "--expect-replication", "2"),
        *("--expect-timeout-ms", "100", "--late-margin-ms", "50", "--no-sharded"),
        hang_guard_s=100,
    )

    assert r["false_stored"] > 0, err
    assert r["late"] > 0, err
    assert r["lost"] == 0 and r["out_of_order"] == 0  # the middleware itself is still right
    assert r["ok"] is False
    assert code == 1


@pytest.mark.timeout(30)
def test_bad_flags_exit_2_with_a_clear_message() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "mwlab", "chaos", "--replication", "4"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=25,
    )
    assert p.returncode == 2
    assert "--replication must be 1..3, not 4" in p.stderr
    assert p.stdout == ""


def test_fault_plan_follows_the_seed_and_its_limits() -> None:
    a = plan_faults(9, 3, 2.0, 300.0, ("stop", "kill", "stop-kill"), 1.0, 2, 1.0)
    assert a == plan_faults(9, 3, 2.0, 300.0, ("stop", "kill", "stop-kill"), 1.0, 2, 1.0)
    assert a != plan_faults(10, 3, 2.0, 300.0, ("stop", "kill", "stop-kill"), 1.0, 2, 1.0)
    assert all(2.0 <= e.at <= 300.0 for e in a)
    faulty: set[int] = set()
    for e in a:  # replay: each server alternates fault and recovery, at most 2 faulty at once
        if e.action in ("stop", "kill") and e.server not in faulty:
            faulty.add(e.server)
        elif e.action in ("cont", "restart"):
            faulty.remove(e.server)
        else:
            assert e.action == "kill"  # a stopped server killed
        assert len(faulty) <= 2
    assert not faulty


# --- the hash ring against placement on real servers -------------------------------------------


@pytest.fixture
def deploy(tmp_path: Path) -> Iterator[Callable[[int], tuple[list[str], int]]]:
    """Starts 3 memcached servers and a middleware with a given replication."""
    started: list[tuple[Servers, MiddlewareProcess]] = []

    def start(replication: int) -> tuple[list[str], int]:
        if not JAR.exists():
            pytest.fail(f"{JAR} is missing: run `make build` first")
        cfg = SoakConfig(replication=replication, heap_mib=64)
        ports = pick_ports(25900, 4, span=50)
        logs = tmp_path / f"r{replication}"
        logs.mkdir()
        servers = Servers(ports[:3], logs)
        for s in range(3):
            servers.start(s)
        mw = MiddlewareProcess(cfg, ports[3], servers.names(), logs)
        started.append((servers, mw))
        mw.wait_ready()
        return servers.names(), ports[3]

    yield start
    for servers, mw in started:
        mw.stop()
        servers.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("replication", [1, 2])
def test_python_ring_predicts_placement_on_real_servers(deploy, replication: int) -> None:
    names, port = deploy(replication)
    addresses = [("127.0.0.1", int(n.rsplit(":", 1)[1])) for n in names]
    verify_placement(("127.0.0.1", port), addresses, HashRing(names, replication))
    # The check can fail: a ring with other virtual nodes places keys elsewhere.
    with pytest.raises(ChaosError, match="disagrees with the middleware's placement"):
        verify_placement(("127.0.0.1", port), addresses, HashRing(names, replication, 100))


# --- the client's judgement against a front-end that misbehaves --------------------------------


class FakeFrontend:
    """A memcached-speaking server (a dict, and the middleware's answers to bad requests) whose
    `mangle` may drop, swap or delay replies."""

    def __init__(self, mangle: Callable[[int, list[bytes]], None]) -> None:
        self.mangle = mangle
        self.requests = 0
        self.data: dict[bytes, tuple[bytes, bytes]] = {}
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        out: list[bytes] = []  # replies not yet written, in order
        with conn:
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while b"\r\n" in buf:
                    line, rest = buf.split(b"\r\n", 1)
                    parts = line.split()
                    if parts[0] == b"set":
                        n = int(parts[4])
                        if len(rest) < n + 2:
                            break
                        self.data[parts[1]] = (parts[2], rest[:n])
                        buf = rest[n + 2 :]
                        out.append(b"STORED\r\n")
                    elif parts[0] != b"get":
                        buf = rest
                        out.append(b"ERROR\r\n")
                    elif any(len(k) > 250 for k in parts[1:]):
                        buf = rest
                        out.append(b"CLIENT_ERROR key too long\r\n")
                    else:
                        buf = rest
                        reply = b""
                        for k in parts[1:]:
                            if k in self.data:
                                flags, v = self.data[k]
                                reply += b"VALUE %s %s %d\r\n%s\r\n" % (k, flags, len(v), v)
                        out.append(reply + b"END\r\n")
                    self.requests += 1
                    self.mangle(self.requests, out)
                try:
                    conn.sendall(b"".join(out))
                except OSError:
                    return
                out.clear()

    def close(self) -> None:
        self.listener.close()
        for c in self.conns:
            c.close()


def run_client(
    frontend: FakeFrontend,
    depth: int,
    until_requests: int,
    bound: LatencyBound,
    lost_after_s: float,
    stop: threading.Event | None = None,
) -> Tally:
    """One soak client against `frontend` (no servers to check replicas on) until it has sent
    `until_requests` requests or `stop` is set."""
    t0 = time.monotonic()
    faults = FaultLog(3, t0)
    for s in range(3):
        faults.will_kill(s)  # nothing to read replicas from: every STORED check is skipped
    tally = Tally(t0)
    names = ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]
    ctx = ClientContext(
        address=("127.0.0.1", frontend.port),
        servers=[("127.0.0.1", 1), ("127.0.0.1", 2), ("127.0.0.1", 3)],
        ring=HashRing(names, 2),
        faults=faults,
        tally=tally,
        bound=bound,
        lost_after_s=lost_after_s,
        seed=1,
        stop=stop or threading.Event(),
    )
    client = Client(0, ctx, depth)
    client.start()
    deadline = time.monotonic() + 20
    while frontend.requests < until_requests and time.monotonic() < deadline:
        if ctx.stop.wait(0.01):
            break
    ctx.stop.set()
    client.join(timeout=10)
    frontend.close()
    assert not client.is_alive()
    tally.judge_late(ctx.stalls)
    assert tally.counts["client_errors"] == 0, tally.examples
    return tally


@pytest.mark.timeout(60)
def test_a_reply_that_never_comes_is_lost() -> None:
    def drop_30th(n: int, out: list[bytes]) -> None:
        if n == 30:
            out.pop()

    tally = run_client(FakeFrontend(drop_30th), 1, 60, LatencyBound(1.0, 0.5), lost_after_s=3)
    assert tally.counts["lost"] == 1
    assert tally.counts["out_of_order"] == 0 and tally.counts["late"] == 0
    assert tally.counts["reconnects"] == 1


@pytest.mark.timeout(60)
def test_replies_in_the_wrong_order_are_caught() -> None:
    swapped = []

    def swap_once(n: int, out: list[bytes]) -> None:
        if n > 40 and not swapped and len(out) >= 2 and out[-1] != out[-2]:
            out[-1], out[-2] = out[-2], out[-1]
            swapped.append(n)

    tally = run_client(FakeFrontend(swap_once), 16, 200, LatencyBound(1.0, 0.5), lost_after_s=10)
    assert swapped
    assert tally.counts["out_of_order"] == 1
    assert tally.counts["lost"] == 0


@pytest.mark.timeout(60)
def test_a_reply_later_than_the_bound_is_late() -> None:
    def stall_25th(n: int, _out: list[bytes]) -> None:
        if n == 25:
            time.sleep(3)  # the bound: a 1 s timeout + 0.5 s margin (no server was stopped)

    tally = run_client(FakeFrontend(stall_25th), 1, 50, LatencyBound(1.0, 0.5), lost_after_s=10)
    assert tally.counts["late"] == 1
    assert tally.counts["lost"] == 0 and tally.counts["out_of_order"] == 0


@pytest.mark.timeout(60)
def test_a_reply_to_no_request_is_caught() -> None:
    stop = threading.Event()

    def repeat_20th_and_stop(n: int, out: list[bytes]) -> None:
        if n == 20:
            out.append(out[-1])
            stop.set()  # the client's last request: only the check for extra bytes can see it

    frontend = FakeFrontend(repeat_20th_and_stop)
    tally = run_client(frontend, 1, 10**9, LatencyBound(1.0, 0.5), lost_after_s=10, stop=stop)
    assert frontend.requests == 20
    assert tally.counts["out_of_order"] == 1
    assert tally.counts["lost"] == 0


def hold_the_gil(at_least_s: float) -> tuple[float, float]:
    """One call into C that holds the GIL (no Python thread runs meanwhile) for at least
    `at_least_s`, however fast the machine: its size doubles until one call lasts that long.
    Returns when that call started and ended."""
    n = 1_000_000
    while True:
        started = time.monotonic()
        sum(range(n))
        ended = time.monotonic()
        if ended - started >= at_least_s:
            return started, ended
        n *= 2


def test_stall_probe_sees_the_soak_not_running() -> None:
    probe = StallProbe()
    probe.start()
    try:
        time.sleep(0.1)
        started, ended = hold_the_gil(0.15)
        time.sleep(0.1)
    finally:
        probe.stop()
    soak = probe.summary()["soak"]
    assert isinstance(soak, dict) and soak["stalls"] >= 1 and soak["max_ms"] > 50
    assert probe.blind(started, ended) > 0.05
    assert probe.blind(ended + 1, ended + 2) == 0


def test_stall_probe_sees_the_machine_not_running() -> None:
    probe = StallProbe()
    probe.start()
    try:
        time.sleep(0.1)
        assert probe.host_pid is not None
        started = time.monotonic()
        os.kill(probe.host_pid, signal.SIGSTOP)  # as if the machine did not schedule it
        time.sleep(0.3)
        os.kill(probe.host_pid, signal.SIGCONT)
        time.sleep(0.3)
    finally:
        probe.stop()
    host = probe.summary()["host"]
    assert isinstance(host, dict) and host["stalls"] >= 1 and host["max_ms"] >= 250
    assert probe.blind(started, time.monotonic()) >= 0.25
