"""The chaos soak: a mixed load through the middleware while its servers fail, every reply judged.

`mwlab chaos` (or `make chaos CHAOS_SECONDS=N`) starts S real memcached servers and the
middleware (`build/middleware.jar`, replication R), then runs client connections against it:
some send one request at a time, some pipeline batches of up to `--max-depth` requests; the
requests are SETs, GETs and multi-GETs. After a warm-up, a fault plan drawn from the seed kills,
restarts, SIGSTOPs and SIGCONTs servers, at most `--max-faulty` at once, and every fault ends
before a quiet cool-down. Each connection is a `soak.chaos_client.Client`, and
`soak.chaos_oracle` judges every reply (one reply per request, in order; no false STORED; no
missing read; none late); a monitor samples the middleware's RSS, threads and file descriptors.

The fault plan and each client's choice of requests follow from the seed alone (`--seed`
replays them); the interleaving of threads and processes does not.

It ends with one JSON line on stdout and exits 0 if nothing was violated, 1 if something was,
2 on bad flags, 3 if the soak could not be set up, 128 + n after signal n (SIGINT, SIGTERM,
SIGHUP: the JSON line still comes).
Whatever happens, every process it started is killed, stopped ones are continued first.
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import click
from rich.console import Console

from soak.chaos_client import Client, ClientContext
from soak.chaos_oracle import (
    VIOLATIONS,
    FaultLog,
    LatencyBound,
    Probe,
    ReplyStream,
    ResourceBounds,
    ResourceMonitor,
    StallProbe,
    Tally,
    cpu_pressure_total_us,
    set_key,
    set_request,
)
from soak.hashring import HashRing
from testbed.hosts import HostError
from testbed.point import DEFAULT_WORKERS
from testbed.services.local import spawn, terminate
from testbed.services.memcached import memcached_command, memcached_stats
from testbed.services.middleware import MIDDLEWARE_JAR, command_flags, middleware_command
from testbed.services.ports import LOOPBACK, free_ports, wait_for_port

HOST = LOOPBACK
FAULT_KINDS = ("stop", "kill", "stop-kill")
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class ChaosError(RuntimeError):
    """The soak cannot be set up or cannot go on; the message says why."""


@dataclass
class SoakConfig:
    seconds: float = 120.0
    seed: int | None = None
    servers: int = 3
    replication: int = 2
    # What the oracle assumes; different from the middleware's only to show the oracle fails.
    expect_replication: int | None = None
    server_timeout_ms: int = 1000
    expect_timeout_ms: int | None = None
    late_margin_ms: int = 500
    workers: int = DEFAULT_WORKERS
    clients: int = 3
    pipelined_clients: int = 3
    max_depth: int = 16
    sharded: bool = True
    faults: tuple[str, ...] = FAULT_KINDS
    fault_gap_s: float = 2.0
    max_faulty: int = 2
    base_port: int = 25500
    jar: Path = MIDDLEWARE_JAR
    heap_mib: int = 256
    virtual_nodes: int = 160
    log_dir: Path | None = None

    def validate(self) -> None:
        """Raises ValueError naming the first bad setting."""
        checks = [
            (self.seconds >= 5, f"--seconds must be at least 5, not {self.seconds}"),
            (1 <= self.servers <= 16, f"--servers must be 1..16, not {self.servers}"),
            (
                1 <= self.replication <= self.servers,
                f"--replication must be 1..{self.servers}, not {self.replication}",
            ),
            (
                1 <= self.expected_replication <= self.servers,
                f"--expect-replication must be 1..{self.servers}, not {self.expect_replication}",
            ),
            (self.server_timeout_ms >= 10, "--server-timeout-ms must be at least 10"),
            (self.expected_timeout_ms >= 1, "--expect-timeout-ms must be at least 1"),
            (self.late_margin_ms >= 0, "--late-margin-ms must not be negative"),
            (self.workers >= 1, "--workers must be at least 1"),
            (self.clients >= 0 and self.pipelined_clients >= 0, "client counts must be >= 0"),
            (self.clients + self.pipelined_clients >= 1, "the soak needs at least one client"),
            (
                self.clients + self.pipelined_clients <= self.workers,
                f"{self.clients + self.pipelined_clients} client connections need at least as"
                f" many --workers (got {self.workers}): the latency bound assumes no request"
                " waits for a worker held by another connection",
            ),
            (2 <= self.max_depth <= 512, "--max-depth must be 2..512"),
            (self.fault_gap_s > 0, "--fault-gap must be positive"),
            (
                0 <= self.max_faulty <= self.servers,
                f"--max-faulty must be 0..{self.servers}, not {self.max_faulty}",
            ),
            (1024 <= self.base_port <= 65000, "--base-port must be 1024..65000"),
            (self.heap_mib >= 32, "--heap-mib must be at least 32"),
            (self.virtual_nodes >= 1, "--virtual-nodes must be at least 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        unknown = set(self.faults) - set(FAULT_KINDS)
        if unknown:
            known = ", ".join(FAULT_KINDS)
            raise ValueError(f"unknown fault kind(s) {', '.join(sorted(unknown))}; known: {known}")
        if not self.jar.is_file():
            raise ValueError(f"{self.jar} does not exist: run `make build` first")

    @property
    def expected_replication(self) -> int:
        return self.replication if self.expect_replication is None else self.expect_replication

    @property
    def expected_timeout_ms(self) -> int:
        return self.server_timeout_ms if self.expect_timeout_ms is None else self.expect_timeout_ms

    def bound(self) -> LatencyBound:
        return LatencyBound(self.expected_timeout_ms / 1000, self.late_margin_ms / 1000)

    def lost_after_s(self) -> float:
        """How long a reply may take before it counts as lost: far beyond any legitimate wait."""
        return max(self.bound()(self.servers), self.server_timeout_ms / 1000 * self.servers) + 10

    def warmup_s(self) -> float:
        return min(30.0, max(2.0, self.seconds / 10))

    def cooldown_s(self) -> float:
        return max(2.0, self.bound()(self.servers))


# --- fault plan --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultEvent:
    at: float  # seconds after the load started
    server: int
    action: Literal["stop", "cont", "kill", "restart"]


def plan_faults(
    seed: int,
    servers: int,
    start: float,
    end: float,
    kinds: tuple[str, ...],
    mean_gap_s: float,
    max_faulty: int,
    timeout_s: float,
) -> list[FaultEvent]:
    """The faults of a soak, from the seed alone: each on an idle server, at most `max_faulty`
    servers faulty at once, every one over by `end`.

    Stops last from a twentieth of a timeout to three timeouts, so some end before the
    middleware gives up on the server and some after; kills keep the server down 0.05-3 s.
    """
    rng = random.Random(f"faults-{seed}")
    events: list[FaultEvent] = []
    busy_until = [start] * servers
    t = start
    while kinds and max_faulty > 0:
        t += rng.expovariate(1 / mean_gap_s)
        if t >= end:
            break
        idle = [s for s in range(servers) if busy_until[s] <= t]
        if servers - len(idle) >= max_faulty or not idle:
            continue
        s = rng.choice(idle)
        kind = rng.choice(kinds)
        stop_s = rng.uniform(0.05 * timeout_s, 3 * timeout_s)
        down_s = rng.uniform(0.05, 3.0)
        if kind == "stop":
            steps = [(t, "stop"), (t + stop_s, "cont")]
        elif kind == "kill":
            steps = [(t, "kill"), (t + down_s, "restart")]
        else:
            steps = [(t, "stop"), (t + stop_s, "kill"), (t + stop_s + down_s, "restart")]
        if steps[-1][0] > end:
            continue
        busy_until[s] = steps[-1][0]
        events += [FaultEvent(round(at, 3), s, action) for at, action in steps]
    return sorted(events, key=lambda e: (e.at, e.server))


# --- processes ---------------------------------------------------------------------------------


def pick_ports(base: int, n: int, span: int = 100) -> list[int]:
    """`n` free ports from [base, base + span)."""
    try:
        return free_ports(base, n, span, HOST)
    except HostError as e:
        raise ChaosError(str(e)) from None


class Servers:
    """The memcached processes, each restartable on its port."""

    def __init__(self, ports: list[int], log_dir: Path) -> None:
        self.ports = ports
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * len(ports)
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        return [f"{HOST}:{p}" for p in self.ports]

    def start(self, s: int) -> None:
        port = self.ports[s]
        # Appended to: a restarted server's log follows the one it replaces.
        proc = spawn(
            memcached_command(HOST, port),
            self.log_dir / f"memcached-{s}.log",
            append=True,
            new_session=True,
        )
        with self._lock:
            self.procs[s] = proc
        try:
            wait_for_port(HOST, port, 10.0, proc)
        except HostError as e:
            raise ChaosError(str(e)) from None

    def signal(self, s: int, sig: int) -> None:
        proc = self.procs[s]
        if proc is not None and proc.poll() is None:
            proc.send_signal(sig)

    def kill(self, s: int) -> None:
        proc = self.procs[s]
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()

    def evictions(self) -> int:
        """Items the running servers evicted for room (a missing read could be one)."""
        total = 0
        for port in self.ports:
            stats = memcached_stats(HOST, port, timeout=5)
            if not stats.endswith("END\r\n"):
                raise ConnectionError(f"memcached on port {port} closed before its stats' END")
            for line in stats.splitlines():
                if line.startswith("STAT evictions "):
                    total += int(line.split()[2])
        return total

    def close(self) -> None:
        """Continues and kills every server (SIGKILL works on stopped ones; SIGCONT first anyway,
        so nothing is left stopped if the kill is refused)."""
        for s, proc in enumerate(self.procs):
            if proc is not None and proc.poll() is None:
                self.signal(s, signal.SIGCONT)
                proc.kill()
            if proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)


TRIM_FLAGS = ("-XX:+UnlockExperimentalVMOptions", "-XX:TrimNativeHeapInterval=1000")


@functools.cache
def native_trim_supported() -> bool:
    """Whether this JVM can give freed native memory back periodically (JDK 17.0.9 and later)."""
    p = subprocess.run(["java", *TRIM_FLAGS, "-version"], capture_output=True, check=False)
    return p.returncode == 0


class MiddlewareProcess:
    """build/middleware.jar with a fixed, pre-touched heap (see ResourceBounds)."""

    def __init__(self, cfg: SoakConfig, port: int, servers: list[str], log_dir: Path) -> None:
        self.port = port
        self.cfg = cfg
        # GC and safepoint pauses, to tell a slow middleware from a stalled machine.
        jvm = [f'-Xlog:gc,safepoint:file="{log_dir / "jvm.log"}":time,uptime,tags']
        jvm += [f"-Xms{cfg.heap_mib}m", f"-Xmx{cfg.heap_mib}m", "-XX:+AlwaysPreTouch"]
        if native_trim_supported():
            jvm += [*TRIM_FLAGS]
        flags = command_flags(
            servers,
            workers=cfg.workers,
            sharded=cfg.sharded,
            stats_dir=str(log_dir / "stats"),
            replication=cfg.replication,
            server_timeout_ms=cfg.server_timeout_ms,
            virtual_nodes=cfg.virtual_nodes,
        )
        self.proc = spawn(
            middleware_command(cfg.jar, HOST, port, flags, jvm),
            log_dir / "middleware.log",
            append=True,
            new_session=True,
        )

    def wait_ready(self) -> None:
        try:
            wait_for_port(HOST, self.port, 60.0, self.proc, name="the middleware")
        except HostError as e:
            raise ChaosError(str(e)) from None

    def stop(self) -> int:
        """SIGTERM, as a user stops it; SIGKILL if it does not exit. Returns its exit status."""
        return terminate(self.proc, 2 * self.cfg.server_timeout_ms / 1000 + 20)


class Chaos(threading.Thread):
    """Carries out the fault plan against the servers, recording each change in the FaultLog."""

    def __init__(
        self,
        plan: list[FaultEvent],
        servers: Servers,
        faults: FaultLog,
        t0: float,
        halt: threading.Event,
        log: Path,
    ) -> None:
        super().__init__(name="chaos", daemon=True)
        self.plan = plan
        self.servers = servers
        self.faults = faults
        self.t0 = t0
        self.halt = halt
        self.log = log
        self.done = {"stop": 0, "cont": 0, "kill": 0, "restart": 0}
        self.errors: list[str] = []

    def run(self) -> None:
        with self.log.open("a") as log:
            for ev in self.plan:
                if self.halt.wait(max(0.0, self.t0 + ev.at - time.monotonic())):
                    return
                at = time.monotonic() - self.t0
                try:
                    self.apply(ev)
                except ChaosError as e:
                    self.errors.append(f"{ev.action} of server {ev.server} at {at:.3f} s: {e}")
                self.done[ev.action] += 1
                record = {"at": round(at, 3), "planned": ev.at, "server": ev.server}
                record |= {"action": ev.action, "state": self.faults.state()}
                log.write(json.dumps(record) + "\n")
                log.flush()

    def apply(self, ev: FaultEvent) -> None:
        s = ev.server
        if ev.action == "stop":
            self.faults.will_stop(s)
            self.servers.signal(s, signal.SIGSTOP)
        elif ev.action == "cont":
            self.servers.signal(s, signal.SIGCONT)
            self.faults.continued(s)
        elif ev.action == "kill":
            self.faults.will_kill(s)
            self.servers.kill(s)
            self.faults.killed(s)
        else:
            for attempt in range(3):
                try:
                    self.servers.start(s)
                    break
                except ChaosError:
                    if attempt == 2:
                        raise
                    time.sleep(0.5)
            self.faults.restarted(s)


# --- placement check ---------------------------------------------------------------------------


def verify_placement(
    middleware: tuple[str, int], servers: list[tuple[str, int]], ring: HashRing, keys: int = 300
) -> None:
    """Writes `keys` keys through the middleware (all servers up) and checks that each is on
    exactly the servers `ring` predicts. Raises ChaosError if not."""
    written = [set_key(9999, i, 16) for i in range(keys)]
    deadline = time.monotonic() + 60
    with socket.create_connection(middleware, timeout=10) as sock:
        stream = ReplyStream(sock)
        for key in written:
            sock.sendall(set_request(key))
            line = stream.line(deadline)
            if line != b"STORED":
                raise ChaosError(f"placement check: the middleware answered {line[:200]!r}")
    probe = Probe(servers, timeout_s=10)
    try:
        holders = [probe.get(s, 0, written) for s in range(len(servers))]
    finally:
        probe.close()
    wrong = []
    for key in written:
        found = {s for s in range(len(servers)) if key in holders[s]}
        if found != set(ring.replicas(key)):
            wrong.append((key.decode(), sorted(ring.replicas(key)), sorted(found)))
    if wrong:
        key, predicted, found = wrong[0]
        raise ChaosError(
            f"soak/hashring.py disagrees with the middleware's placement on {len(wrong)} of"
            f" {keys} keys, e.g. {key}: predicted on servers {predicted}, found on {found}"
        )


# --- the soak ----------------------------------------------------------------------------------


@dataclass
class Interrupt:
    """Set by SIGINT, SIGTERM or SIGHUP: the first ends the load early (the soak still tears
    down and reports), a second stops waiting for the clients' last batches."""

    halt: threading.Event = field(default_factory=threading.Event)
    signum: int | None = None
    hurry: bool = False

    def __call__(self, signum: int, _frame: object) -> None:
        if self.signum is not None:
            self.hurry = True
        self.signum = self.signum or signum
        self.halt.set()


_FIRST = ("requests", "replies", "lost", "out_of_order", "false_stored", "late")


def run_soak(cfg: SoakConfig, interrupt: Interrupt, console: Console) -> dict[str, object]:
    """Runs the soak; returns the result (the JSON line's fields). Raises ChaosError if it
    cannot be set up. Every process it starts is gone when it returns."""
    seed = cfg.seed if cfg.seed is not None else random.SystemRandom().randrange(1, 2**31)
    console.print(f"chaos: seed {seed} (replay with --seed {seed})", soft_wrap=True)
    explicit_logs = cfg.log_dir is not None
    log_dir = cfg.log_dir or Path(tempfile.mkdtemp(prefix="mwlab-chaos-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    console.print(f"chaos: logs in {log_dir}", soft_wrap=True)
    ports = pick_ports(cfg.base_port, cfg.servers + 1)
    servers = Servers(ports[: cfg.servers], log_dir)
    addresses = [(HOST, p) for p in servers.ports]
    middleware: MiddlewareProcess | None = None
    monitor: ResourceMonitor | None = None
    chaos: Chaos | None = None
    clients: list[Client] = []
    middleware_exit: int | None = None
    evictions: int | None = None
    stalls = StallProbe()
    pressure_at_start = pressure_at_end = None
    tally: Tally | None = None
    bounds: ResourceBounds | None = None
    t0 = time.monotonic()
    try:
        for s in range(cfg.servers):
            servers.start(s)
        middleware = MiddlewareProcess(cfg, ports[-1], servers.names(), log_dir)
        middleware.wait_ready()
        monitor = ResourceMonitor(middleware.proc.pid)
        monitor.start()
        verify_placement(
            (HOST, ports[-1]),
            addresses,
            HashRing(servers.names(), cfg.replication, cfg.virtual_nodes),
        )
        t0 = time.monotonic()
        faults = FaultLog(cfg.servers, t0)
        tally = Tally(t0, log_dir / "violations.jsonl")
        ctx = ClientContext(
            address=(HOST, ports[-1]),
            servers=addresses,
            ring=HashRing(servers.names(), cfg.expected_replication, cfg.virtual_nodes),
            faults=faults,
            tally=tally,
            bound=cfg.bound(),
            lost_after_s=cfg.lost_after_s(),
            seed=seed,
            stop=threading.Event(),
            stalls=stalls,
        )
        (log_dir / "timeline.json").write_text(json.dumps({"t0_unix_s": time.time()}) + "\n")
        stalls.start()
        pressure_at_start = cpu_pressure_total_us()
        clients = [Client(i, ctx, 1) for i in range(cfg.clients)]
        clients += [
            Client(cfg.clients + i, ctx, cfg.max_depth) for i in range(cfg.pipelined_clients)
        ]
        plan = plan_faults(
            seed,
            cfg.servers,
            cfg.warmup_s(),
            cfg.seconds - cfg.cooldown_s(),
            cfg.faults,
            cfg.fault_gap_s,
            cfg.max_faulty,
            cfg.server_timeout_ms / 1000,
        )
        chaos = Chaos(plan, servers, faults, t0, interrupt.halt, log_dir / "faults.jsonl")
        for c in clients:
            c.start()
        chaos.start()
        _watch(cfg, t0, plan, middleware, monitor, tally, faults, interrupt, console)
        ctx.stop.set()
        interrupt.halt.set()  # ends the fault plan early if the soak did not run its course
        _join(clients, cfg.lost_after_s() + 10, interrupt)
        chaos.join(timeout=15)
        if monitor.baseline is not None:
            bounds = ResourceBounds(
                rss_cap_mib=cfg.heap_mib + 384,
                threads_cap=monitor.baseline.threads + 8,
                fds_cap=monitor.baseline.fds + len(clients) + 16,
                # Without trimming, glibc keeps a compilation burst's arenas (see ResourceBounds).
                rss_growth_mib=64 if native_trim_supported() else 192,
            )
        monitor.stop()
        stalls.stop()
        tally.judge_late(stalls)
        stalls.write_csv(log_dir / "stalls.csv", t0)
        pressure_at_end = cpu_pressure_total_us()
        monitor.write_csv(log_dir / "resources.csv")
        with contextlib.suppress(OSError):
            evictions = servers.evictions()
    finally:
        interrupt.halt.set()
        if monitor is not None:
            monitor.stop()
        stalls.stop()
        if middleware is not None:
            middleware_exit = middleware.stop()
        servers.close()
        if tally is not None:
            tally.close()
    assert tally is not None and monitor is not None and chaos is not None
    counts = tally.snapshot()
    elapsed = time.monotonic() - t0
    rss, threads, fds = monitor.maxima()
    resource_problems = monitor.judge(bounds) if bounds else ["no samples after warm-up"]
    violated = any(counts[k] for k in VIOLATIONS)
    ok = (
        not violated
        and not resource_problems
        and not chaos.errors
        and middleware_exit == 0
        and interrupt.signum is None
    )
    result: dict[str, object] = {
        "requests": counts["requests"],
        "replies": counts["replies"],
        "lost": counts["lost"],
        "out_of_order": counts["out_of_order"],
        "false_stored": counts["false_stored"],
        "late": counts["late"],
        "faults_injected": chaos.done["stop"] + chaos.done["kill"],
        "max_rss_mib": round(rss, 1),
        "max_threads": threads,
        "max_fds": fds,
        "seed": seed,
        "ok": ok,
        "seconds": round(elapsed, 1),
        **{k: v for k, v in counts.items() if k not in _FIRST},
        "stops": chaos.done["stop"],
        "continues": chaos.done["cont"],
        "kills": chaos.done["kill"],
        "restarts": chaos.done["restart"],
        "max_latency_ms": round(tally.max_latency_s * 1000, 1),
        "stalls": stalls.summary(),
        "cpu_pressure": (
            round((pressure_at_end - pressure_at_start) / 1e6 / elapsed, 2)
            if pressure_at_start is not None and pressure_at_end is not None
            else None
        ),
        "late_bound_ms": round(cfg.bound()(1) * 1000, 1),
        "rss_cap_mib": bounds.rss_cap_mib if bounds else None,
        "threads_cap": bounds.threads_cap if bounds else None,
        "fds_cap": bounds.fds_cap if bounds else None,
        "resource_violations": resource_problems,
        "chaos_errors": chaos.errors,
        "evictions": evictions,
        "native_trim": native_trim_supported(),
        "rss_q1_first_last_quarter_mib": (
            [round(x, 1) for x in growth] if (growth := monitor.rss_growth()) else None
        ),
        "middleware_exit": middleware_exit,
        "interrupted": signal.Signals(interrupt.signum).name if interrupt.signum else None,
        "examples": tally.examples,
        "log_dir": str(log_dir),
    }
    if ok and not explicit_logs:
        shutil.rmtree(log_dir, ignore_errors=True)
        result["log_dir"] = None
    return result


def _watch(
    cfg: SoakConfig,
    t0: float,
    plan: list[FaultEvent],
    middleware: MiddlewareProcess,
    monitor: ResourceMonitor,
    tally: Tally,
    faults: FaultLog,
    interrupt: Interrupt,
    console: Console,
) -> None:
    """Waits out the soak, showing progress; ends early on a signal or if the middleware dies."""
    end = t0 + cfg.seconds
    baseline_at = t0 + cfg.warmup_s()
    next_line = t0 + 30

    def status() -> str:
        c = tally.snapshot()
        bad = sum(c[k] for k in VIOLATIONS)
        return (
            f"{c['requests']} requests, {c['set_errors'] + c['get_errors']} SERVER_ERROR,"
            f" {bad} violations, servers {faults.state()}"
        )

    if console.is_terminal:
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        progress = Progress(
            TextColumn("chaos"),
            BarColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=True,
        )
        task = progress.add_task(status(), total=cfg.seconds)
        progress.start()
    while not interrupt.halt.is_set():
        now = time.monotonic()
        if now >= end:
            break
        if monitor.baseline is None and now >= baseline_at:
            monitor.mark_baseline()
        if middleware.proc.poll() is not None:
            tally.violation(
                "client_errors",
                at=tally.rel(now),
                what=f"the middleware exited with status {middleware.proc.returncode}",
            )
            break
        if console.is_terminal:
            progress.update(task, completed=now - t0, description=status())
        elif now >= next_line:
            console.print(f"chaos: {now - t0:.0f}/{cfg.seconds:.0f} s, {status()}", soft_wrap=True)
            next_line += 30
        interrupt.halt.wait(0.25)
    if console.is_terminal:
        progress.stop()
    console.print(
        f"chaos: load stopped after {time.monotonic() - t0:.1f} s, {status()}", soft_wrap=True
    )


def _join(threads: list[Client], timeout_s: float, interrupt: Interrupt) -> None:
    deadline = time.monotonic() + timeout_s
    for t in threads:
        while t.is_alive() and time.monotonic() < deadline and not interrupt.hurry:
            t.join(timeout=0.2)


# --- command -----------------------------------------------------------------------------------


@click.command("chaos")
@click.option("--seconds", type=float, default=120.0, show_default=True, help="Soak length.")
@click.option("--seed", type=int, default=None, help="Replay a soak (default: a random seed).")
@click.option("--servers", type=int, default=3, show_default=True, help="memcached servers.")
@click.option("--replication", type=int, default=2, show_default=True)
@click.option(
    "--expect-replication",
    type=int,
    default=None,
    help="Replication the oracle assumes (default: --replication; differ only to test the oracle).",
)
@click.option("--server-timeout-ms", type=int, default=1000, show_default=True)
@click.option(
    "--expect-timeout-ms",
    type=int,
    default=None,
    help="Server timeout the oracle assumes (default: --server-timeout-ms).",
)
@click.option(
    "--late-margin-ms",
    type=int,
    default=500,
    show_default=True,
    help="Slack on top of the timeouts before a reply counts as late.",
)
@click.option(
    "--workers", type=int, default=DEFAULT_WORKERS, show_default=True, help="Middleware workers."
)
@click.option("--clients", type=int, default=3, show_default=True, help="One-at-a-time clients.")
@click.option("--pipelined-clients", type=int, default=3, show_default=True)
@click.option(
    "--max-depth", type=int, default=16, show_default=True, help="Longest pipelined batch."
)
@click.option("--sharded/--no-sharded", default=True, show_default=True)
@click.option(
    "--faults",
    default=",".join(FAULT_KINDS),
    show_default=True,
    help="Fault kinds, comma-separated (stop, kill, stop-kill), or 'none'.",
)
@click.option("--fault-gap", type=float, default=2.0, show_default=True, help="Mean s between.")
@click.option("--max-faulty", type=int, default=2, show_default=True)
@click.option("--base-port", type=int, default=25500, show_default=True)
@click.option(
    "--jar",
    type=click.Path(path_type=Path),
    default=MIDDLEWARE_JAR,
    show_default=True,
)
@click.option("--heap-mib", type=int, default=256, show_default=True, help="Middleware heap.")
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the logs here (default: a temporary directory, kept only if the soak fails).",
)
@click.option("--quiet", is_flag=True, help="No progress on stderr.")
def chaos_command(
    seconds: float,
    seed: int | None,
    servers: int,
    replication: int,
    expect_replication: int | None,
    server_timeout_ms: int,
    expect_timeout_ms: int | None,
    late_margin_ms: int,
    workers: int,
    clients: int,
    pipelined_clients: int,
    max_depth: int,
    sharded: bool,
    faults: str,
    fault_gap: float,
    max_faulty: int,
    base_port: int,
    jar: Path,
    heap_mib: int,
    log_dir: Path | None,
    quiet: bool,
) -> None:
    """Soak the middleware under server kills, restarts and stops, checking every reply.

    Prints one JSON line; exits 1 if a reply was lost, out of order, late, a false STORED or a
    missing read, or the middleware's resources grew past their bounds.
    """
    kinds = () if faults.strip() == "none" else tuple(k.strip() for k in faults.split(","))
    cfg = SoakConfig(
        seconds=seconds,
        seed=seed,
        servers=servers,
        replication=replication,
        expect_replication=expect_replication,
        server_timeout_ms=server_timeout_ms,
        expect_timeout_ms=expect_timeout_ms,
        late_margin_ms=late_margin_ms,
        workers=workers,
        clients=clients,
        pipelined_clients=pipelined_clients,
        max_depth=max_depth,
        sharded=sharded,
        faults=kinds,
        fault_gap_s=fault_gap,
        max_faulty=max_faulty,
        base_port=base_port,
        jar=jar,
        heap_mib=heap_mib,
        log_dir=log_dir,
    )
    try:
        cfg.validate()
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    for tool in ("memcached", "java"):
        if shutil.which(tool) is None:
            raise click.UsageError(f"{tool} is not installed")
    console = Console(stderr=True, quiet=quiet)
    interrupt = Interrupt()
    # Installed whatever was inherited (SIGINT may come ignored); restored afterwards.
    previous = {s: signal.signal(s, interrupt) for s in HANDLED_SIGNALS}
    try:
        result = run_soak(cfg, interrupt, console)
    except ChaosError as e:
        click.echo(f"chaos: {e}", err=True)
        sys.exit(128 + interrupt.signum if interrupt.signum else 3)
    finally:
        for s, handler in previous.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
    click.echo(json.dumps(result, default=str))
    if interrupt.signum is not None:
        sys.exit(128 + interrupt.signum)
    sys.exit(0 if result["ok"] else 1)
