"""Runs one experiment point end to end and writes its run directory and manifest."""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
import subprocess
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from common.paths import BUILD
from common.stages import RUN_STAGES, TIMED_STAGES
from testbed import (
    cpuaccount,
    cpubudget,
    drivers,
    emulation,
    linkdelay,
    netcounters,
    speedprobe,
)
from testbed.drivers import Target
from testbed.hosts import Host, HostError, LocalHost, NamespaceHost, Proc, SshHost
from testbed.manifest import build_manifest, now, write_manifest
from testbed.point import Point
from testbed.services.memcached import stats_on, wait_ready
from testbed.services.middleware import middleware_command, middleware_flags
from testbed.signals import Interrupted, SignalRecorder, exit_code
from testbed.stages import (
    BudgetStage,
    ClientStage,
    CollectStage,
    Layout,
    LayoutStage,
    LinkCapStage,
    LinkDelayStage,
    MiddlewareStage,
    PopulateStage,
    RunError,
    ServerStage,
    SpeedProbeStage,
    Stage,
    Stages,
    StopStage,
)
from testbed.stages.simplemq import (
    Database,
    DatabaseStage,
    PreloadStage,
    QueueClientStage,
    QueueMiddlewareStage,
    QueueStopStage,
)
from testbed.tools import TOOLS, tool_version

# Exit codes that mean "stopped by our SIGTERM": 0 (clean), 143 (JVM), -15 (signal).
TERMINATED_OK = {0, 143, -signal.SIGTERM}
# Where a run can be failed or paused on purpose (`fail_at`, `pause_at`), in run order:
# after the stage's processes have started, before the run waits for them.
# A paused run goes on by itself after this long (a guard against a test that never signals).
PAUSE_LIMIT_S = 300.0
# The built-in generator's start gate (a file in its working directory), and how long its
# JVM may take to start and connect.
START_GATE = "start-gate"
GATE_TIMEOUT_S = 120.0
# A JVM compiles its hot code once invocation counters cross their thresholds. Under a budget
# of a few hundredths of a core that takes minutes of wall time, while the study's JVMs ran
# warm: a middleware first serves an unmeasured warm-up launch this long, without budgets.
WARMUP_LAUNCH_S = 3.0
# The stages of every run up to its measurement, and those of one measurement of its point.
SETUP_STAGES: tuple[Stage, ...] = (
    LayoutStage(),
    LinkCapStage(),
    BudgetStage(),
    SpeedProbeStage(),
    LinkDelayStage(),
    ServerStage(),
    PopulateStage(),
)
MEASURE_STAGES: tuple[Stage, ...] = (MiddlewareStage(), ClientStage(), StopStage())
# A SimpleMQ point (system: simplemq) runs PostgreSQL and SimpleMQ in the services' places.
QUEUE_SETUP_STAGES: tuple[Stage, ...] = (*SETUP_STAGES[:5], DatabaseStage(), PreloadStage())
QUEUE_MEASURE_STAGES: tuple[Stage, ...] = (
    QueueMiddlewareStage(),
    QueueClientStage(),
    QueueStopStage(),
)
# Load generators that run in a JVM: they wait at a start gate while their budgets are bound.
GATED_DRIVERS = {"builtin", "simplemq"}
# The command of one client process, given its host, its instance there and the point it runs
# (a driver's own command when a run's stages give none).
ClientCommand = Callable[[Host, int, Point], list[str]]


@dataclass
class RunOptions:
    out: Path
    base_port: int = 21000
    build_dir: Path = BUILD
    linkcap_cache: Path | None = Path.home() / ".cache" / "mwlab" / "linkcap.json"
    netns_prefix: str | None = None
    progress: bool = True
    # Test hooks, at a stage of RUN_STAGES: fail there, or wait there until a signal arrives.
    fail_at: str | None = None
    pause_at: tuple[str, ...] = ()
    client_timeout_s: float = 60.0
    # Where the cgroup file systems are (None: $MWLAB_CGROUP_ROOT, else /sys/fs/cgroup).
    cgroup_root: Path | None = None

    def __post_init__(self) -> None:
        for stage in (self.fail_at, *self.pause_at):
            if stage is not None and stage not in RUN_STAGES:
                raise ValueError(f"unknown stage {stage!r}; stages are {', '.join(RUN_STAGES)}")
        if self.fail_at == "teardown":
            raise ValueError("a run cannot fail at teardown; pause there instead")


class Runner:
    """One run of one point. `run()` always tears down and always writes run.json.

    The run's stages (testbed.stages) set it up and tear it down; the Runner is their
    context: the layout, options, processes, marks and what run.json records.

    SIGINT, SIGTERM and SIGHUP are recorded by `signals` (a recorder of the run's own when
    none is given); the run stops at its next check, tears down and fails with the reason.
    """

    def __init__(
        self,
        point: Point,
        options: RunOptions,
        console: Console | None = None,
        signals: SignalRecorder | None = None,
        measure: Sequence[Stage] | None = None,
    ) -> None:
        """`measure`: the stages once the servers are up and populated (default: one
        measurement of `point`, MEASURE_STAGES)."""
        self.point = point
        self.opt = options
        self.out = options.out.resolve()
        self.console = console or Console(stderr=True)
        self.layout: Layout | None = None
        queue = point.system == "simplemq"
        self.driver = "simplemq" if queue else drivers.resolve_driver(point.driver)
        self.processes: list[Proc] = []
        self.link_capacity: dict[str, float] = {}
        self.link_delay: linkdelay.LinkDelay | None = None
        self.warnings: list[str] = []
        self.run_id = f"{int(time.time())}-{secrets.token_hex(3)}"
        self._own_signals = signals is None
        self.signals = signals if signals is not None else SignalRecorder()
        self.stage_s: dict[str, float] = {}
        # CPU budgets (emulated hosts' cgroups) and the accounting marks of the run.
        self.cgroups: cpubudget.RunCgroups | None = None
        self.host_cgroups: list[cpubudget.HostCgroup] = []  # kept after teardown
        self.cpu_accounting = "none"
        self.cpu_marks: dict[str, cpuaccount.Mark] = {}
        self.speed_probes: list[subprocess.Popen[bytes]] = []  # testbed.speedprobe, while up
        self.net_marks: dict[str, dict[str, dict[str, int]]] = {}
        self._stage_since: tuple[str, float] | None = None
        self._exited: dict[int, float] = {}  # client process -> when it was seen to exit
        self.epoch: dict[str, float] = {}  # mark -> when it was taken (epoch s)
        self.servers: list[Target] = []  # memcached, once up
        self.frontends: list[Target] = []  # what the clients load: middlewares or servers
        self.database: Database | None = None  # SimpleMQ's, once up
        setup, default = (
            (QUEUE_SETUP_STAGES, QUEUE_MEASURE_STAGES) if queue else (SETUP_STAGES, MEASURE_STAGES)
        )
        self.stages = Stages([*setup, *(default if measure is None else measure)])
        self.collect = CollectStage()
        self.manifest: dict[str, Any] | None = None  # once written

    # --- stages ---------------------------------------------------------------------------

    def enter(self, name: str) -> None:
        """Enters a stage: logged, timed, and the run stops here if a signal has arrived."""
        self.time_stage(name)
        self.signals.stage = name
        self.log(f"stage {name}")
        self.signals.check()

    def time_stage(self, name: str | None) -> None:
        """Closes the timing of the current stage and opens `name`'s (None: just closes)."""
        if name is not None and name not in TIMED_STAGES:
            raise ValueError(f"stage {name!r} is not one of common.stages.TIMED_STAGES")
        t = time.monotonic()
        if self._stage_since is not None:
            prev, since = self._stage_since
            self.stage_s[prev] = self.stage_s.get(prev, 0.0) + t - since
        self._stage_since = (name, t) if name is not None else None

    def hook(self, name: str) -> None:
        """The test hooks of a stage, once its processes have started."""
        if self.opt.fail_at == name:
            raise RunError(f"injected failure at stage {name}")
        if name in self.opt.pause_at:
            self._pause(name)
            self.signals.check()

    def _pause(self, name: str) -> None:
        """Waits until a further signal arrives (or PAUSE_LIMIT_S passes)."""
        seen = len(self.signals.received)
        self.log(f"paused at {name}")
        deadline = time.monotonic() + PAUSE_LIMIT_S
        while len(self.signals.received) == seen and time.monotonic() < deadline:
            time.sleep(0.05)

    def wait(self, proc: Proc, timeout: float) -> int | None:
        """Like `proc.wait`, checking for signals meanwhile."""
        deadline = time.monotonic() + timeout
        while True:
            self.signals.check()
            self.check_link_delay()
            code = proc.wait(min(0.2, max(0.0, deadline - time.monotonic())))
            if code is not None or time.monotonic() >= deadline:
                return code

    def sleep(self, seconds: float) -> None:
        """Waits `seconds`, checking for signals and the link delays meanwhile."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.signals.check()
            self.check_link_delay()
            time.sleep(min(0.2, left))

    def log(self, msg: str) -> None:
        self.console.print(f"[dim]{self.point.name}[/dim] {msg}")

    def server_port(self, i: int) -> int:
        return self.opt.base_port + i

    def middleware_port(self, i: int) -> int:
        return self.opt.base_port + 100 + i

    def jar(self, name: str) -> Path:
        jar = self.opt.build_dir / name
        if not jar.is_file():
            raise RunError(f"{jar} is missing: run `make build` first")
        return jar

    def start(self, host: Host, command: list[str], rel: str, role: str, instance: int = 0) -> Proc:
        proc = host.start(command, rel, role, instance)
        self.processes.append(proc)
        return proc

    def start_middlewares(
        self, layout: Layout, servers: list[Target], point: Point | None = None, prefix: str = ""
    ) -> list[Target]:
        m = (point or self.point).middleware
        budgeted = (point or self.point).budgets_cores.middleware is not None
        jvm = list(cpubudget.BUDGETED_JVM_FLAGS) if budgeted else []
        jar_path = self.jar("middleware.jar")
        procs, targets = [], []
        for i, host in enumerate(layout.middlewares):
            port = self.middleware_port(i)
            flags = middleware_flags(m, [f"{s.address}:{s.port}" for s in servers])
            cmd = middleware_command(host.stage(jar_path), host.address, port, flags, jvm)
            procs.append(self.start(host, cmd, f"{prefix}middlewares/{host.name}", "middleware", i))
            targets.append(Target(host.address, port))
        self.hook("middlewares")
        for host, proc, t in zip(layout.middlewares, procs, targets, strict=True):
            wait_ready(host, t.address, t.port, 60.0, proc, self.signals.check)
        return targets

    def run_clients(
        self,
        layout: Layout,
        frontends: list[Target],
        point: Point | None = None,
        prefix: str = "",
        steps: tuple[int, ...] = (),
        marks: tuple[str, ...] = ("window_start", "window_end"),
        budgets: bool = True,
        command: ClientCommand | None = None,
        ready: Callable[[], None] | None = None,
    ) -> list[Proc]:
        """One launch of the clients. With `steps` (built-in generator only), one launch
        steps through those virtual-client levels, `point.duration_s` each; `marks` names
        the CPU marks at the launch's boundaries (one more than its steps). Without
        `budgets`, the hosts' quotas stay open (a warm-up). `command`: each process's
        command line (default: the driver's, to `frontends` in turn). `ready` runs once
        every client is connected (at its start gate, when gated), before the quotas bind."""
        p = point or self.point
        # Budgets bind over the measurement only. The built-in generator's JVM starts
        # outside them: it connects, waits at its start gate, and the quotas apply before
        # the gate opens. memtier and memaslap start in milliseconds and need no gate.
        budgeted = budgets and self.cgroups is not None
        # Gated where quotas bind at the start, or where something must happen between the
        # clients' connecting and their start (`ready`).
        gated = self.driver in GATED_DRIVERS and (
            budgeted
            or (ready is not None and all(isinstance(h, LocalHost) for h in layout.clients))
        )
        if ready is not None and not gated:
            ready()
        if budgeted and not gated:
            assert self.cgroups is not None
            self.cgroups.bind()
        procs = []
        launched = time.time()
        for host in layout.clients:
            jar = host.stage(self.jar("loadgen.jar")) if self.driver == "builtin" else ""
            for i in range(p.instances_per_client):
                rel = f"{prefix}clients/{host.name}.{i}"
                if command is not None:
                    cmd = command(host, i, p)
                else:
                    cfg = ""
                    if self.driver == "memaslap":
                        cfg = host.put_text(rel, "memaslap.cfg", drivers.memaslap_config(p))
                    target = frontends[i % len(frontends)]
                    cmd = drivers.client_command(self.driver, p, target, jar, cfg)
                if steps:
                    cmd = drivers.stepped(cmd, steps, p.duration_s)
                if gated:
                    cmd += ["--start-gate", START_GATE]
                procs.append(self.start(host, cmd, rel, "client", i))
        write_launch(procs, launched)
        if gated:
            self._await_gates(procs)
            if ready is not None:
                ready()
            if budgeted:
                assert self.cgroups is not None
                self.cgroups.bind()
            self.mark(marks[0])
            for q in procs:
                assert isinstance(q.host, LocalHost)
                (q.host.base / q.rel / START_GATE).touch()
        else:
            self.mark(marks[0])
        self.hook("clients")
        self._wait_clients(procs, p.duration_s, marks[1:-1])
        self.mark(marks[-1])
        record_exits(procs, self._exited)
        if budgeted:
            assert self.cgroups is not None
            self.cgroups.release()
        bad = [q for q in procs if q.exit_code != 0]
        if bad:
            q = bad[0]
            raise RunError(
                f"client {q.host.name}.{q.instance} exited with {q.exit_code}"
                f" (see {q.rel}/stderr.log)"
            )
        return procs

    def warm_up(
        self,
        layout: Layout,
        frontends: list[Target],
        point: Point,
        prefix: str = "",
        command: ClientCommand | None = None,
    ) -> None:
        """An unmeasured launch of `point`'s clients, WARMUP_LAUNCH_S long and without
        budgets, so that a middleware that has just started runs compiled code when it is
        measured. Its output stays under `<prefix>warmup/`, outside what is parsed."""
        short = point.model_copy(update={"duration_s": min(point.duration_s, WARMUP_LAUNCH_S)})
        self.log(f"warm-up: {point.virtual_clients} virtual clients per thread,"
                  f" {short.duration_s:g} s without budgets")  # fmt: skip
        marks = (f"{prefix}warmup:0", f"{prefix}warmup:1")
        self.run_clients(
            layout, frontends, short, f"{prefix}warmup/", (), marks, budgets=False, command=command
        )

    def _await_gates(self, procs: list[Proc]) -> None:
        """Waits until every gated client is connected and waiting at its gate."""
        deadline = time.monotonic() + GATE_TIMEOUT_S
        for q in procs:
            assert isinstance(q.host, LocalHost)
            ready = q.host.base / q.rel / f"{START_GATE}.ready"
            while not ready.exists():
                self.signals.check()
                self.check_link_delay()  # without it, no client could ever connect
                if q.poll() is not None:
                    raise RunError(
                        f"client {q.host.name}.{q.instance} exited with {q.exit_code} before"
                        f" it was ready (see {q.rel}/stderr.log)"
                    )
                if time.monotonic() > deadline:
                    raise RunError(
                        f"client {q.host.name}.{q.instance} not connected after"
                        f" {GATE_TIMEOUT_S:.0f} s"
                    )
                time.sleep(0.02)

    def _wait_clients(
        self, procs: list[Proc], step_s: float, inner_marks: tuple[str, ...] = ()
    ) -> None:
        """Waits for the clients of a launch of `len(inner_marks) + 1` steps of `step_s`
        each, taking the inner marks at the step boundaries."""
        steps = len(inner_marks) + 1
        length = max(1, int(-(-step_s // 1))) * steps
        deadline = time.monotonic() + length + self.opt.client_timeout_s
        start = time.monotonic()
        boundaries = [(start + (k + 1) * length / steps, m) for k, m in enumerate(inner_marks)]
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
            disable=not self.opt.progress,
        )
        with progress:
            task = progress.add_task(f"{self.point.name}: clients", total=length)
            while any(q.poll() is None for q in procs):
                for q in procs:
                    if q.exit_code is not None:
                        self._exited.setdefault(id(q), time.time())
                self.signals.check()
                self.check_link_delay()
                now_ = time.monotonic()
                while boundaries and now_ >= boundaries[0][0]:
                    self.mark(boundaries.pop(0)[1])
                if now_ > deadline:
                    raise RunError(
                        f"clients still running {self.opt.client_timeout_s:.0f} s after the"
                        f" {length} s run length"
                    )
                progress.update(task, completed=min(length, now_ - start))
                wait = 0.05 if not boundaries else min(0.05, max(0.005, boundaries[0][0] - now_))
                time.sleep(wait)
        for _, name in boundaries:  # clients that ended early: the marks still exist
            self.mark(name)

    def stop_middlewares(self, layout: Layout) -> None:
        procs = [q for q in self.processes if q.role == "middleware"]
        for q in procs:
            q.signal(signal.SIGTERM)
        for q in procs:
            if self.wait(q, 20.0) is None:
                q.signal(signal.SIGKILL)
                q.wait(5.0)
                raise RunError(f"middleware on {q.host.name} ignored SIGTERM for 20 s")
            if q.exit_code not in TERMINATED_OK:
                raise RunError(
                    f"middleware on {q.host.name} exited with {q.exit_code} on SIGTERM"
                    f" (see middlewares/{q.host.name}/stderr.log)"
                )

    def server_stats(self, layout: Layout, targets: list[Target]) -> None:
        for host, t in zip(layout.servers, targets, strict=True):
            d = self.out / "servers" / host.name
            d.mkdir(parents=True, exist_ok=True)
            try:
                (d / "stats.txt").write_text(stats_on(host, t.address, t.port))
            except (OSError, HostError) as e:
                self.warnings.append(f"no memcached stats from {host.name}: {e}")

    def check_link_delay(self) -> None:
        """Fails the run once the delay process is gone (its queues then drop packets)."""
        if self.link_delay is not None:
            try:
                self.link_delay.check()
            except linkdelay.LinkDelayError as e:
                raise RunError(str(e)) from e

    def stop_link_delay(self) -> None:
        self.check_link_delay()
        if self.link_delay is not None:
            self.link_delay.stop()

    def _link_delay_record(self) -> dict[str, Any] | None:
        if not linkdelay.wanted(self.point.delays_ms):
            return None
        delays = self.point.delays_ms.model_dump()
        if self.link_delay is None:
            return {"applied": False, "delays_ms": delays}
        if self.link_delay.record is None:
            # Still delaying (a series' provisional step record): the full record comes once
            # the delays stop; stopping them here would leave every later step undelayed.
            return {"applied": True, "running": True, "delays_ms": delays}
        return self.link_delay.record

    def _teardown(self) -> list[str]:
        """Stops and removes everything the run started: every process and its output first,
        then the stages entered, in reverse. Never checks for signals: one that arrives now
        is recorded and teardown goes on."""
        self.signals.stage = "teardown"
        if self.layout is None:
            return []
        if "teardown" in self.opt.pause_at:
            self._pause("teardown")
        return self.collect.teardown(self) + self.stages.teardown(self)

    # --- the run --------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Runs the point; returns the manifest (also written to run.json)."""
        if (self.out / "run.json").exists():
            raise RunError(f"{self.out} already holds a run (run.json); use another directory")
        unfit = cpubudget.check_fits(self.point, cpuaccount.cores())
        if unfit is not None:
            raise RunError(unfit)
        scope = self.signals if self._own_signals else contextlib.nullcontext()
        with scope:
            started, t0 = now(), time.monotonic()
            error: str | None = None
            try:
                self._stages()
            except Interrupted:
                pass  # _finish says why
            except (
                RunError,
                HostError,
                emulation.EmulationError,
                cpubudget.CgroupError,
                OSError,
            ) as e:
                error = str(e)
            except Exception as e:  # whatever it is, the run is torn down and recorded
                self.console.print(traceback.format_exc(), markup=False, highlight=False)
                error = f"{type(e).__name__}: {e}"
            except BaseException as e:  # e.g. SystemExit: recorded, torn down, passed on
                self._finish(started, t0, f"{type(e).__name__}: {e}")
                raise
            return self._finish(started, t0, error)

    def _stages(self) -> None:
        self.signals.check()
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "point.yaml").write_text(
            yaml.safe_dump(self.point.model_dump(mode="json"), sort_keys=False)
        )
        self.stages.setup(self)

    def _finish(self, started: str, t0: float, error: str | None) -> dict[str, Any]:
        """Teardown, then run.json; signals arriving meanwhile are recorded, not obeyed."""
        self.time_stage("teardown")
        problems = self._teardown()
        self.time_stage(None)
        first = self.signals.first
        if first is not None:
            # Also when the run had finished its stages: a signal during teardown fails it.
            why = f"interrupted by {first.signal} during {first.stage}"
            error = f"{error}; {why}" if error else why
        if problems:
            error = (error + "; " if error else "") + "teardown: " + "; ".join(problems)
        self.signals.stage = "manifest"
        manifest = self._manifest(started, time.monotonic() - t0, error)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            write_manifest(self.out / "run.json", manifest)
        except OSError as e:
            raise RunError(f"cannot write {self.out / 'run.json'}: {e} (the run: {error})") from e
        self.manifest = manifest
        return manifest

    def _manifest(self, started: str, elapsed: float, error: str | None) -> dict[str, Any]:
        layout = self.layout
        cpu = self._cpu_section()
        saturated = cpuaccount.saturation_warning(cpu)
        if saturated is not None:
            self.warnings.append(saturated)
        tools: dict[str, str | None] = {}
        for t in TOOLS:
            if t.name in _RUN_TOOLS:
                try:
                    tools[t.name] = tool_version(t)
                except Exception as e:  # a broken tool must not cost the manifest
                    tools[t.name] = f"unknown ({e})"
        return build_manifest(
            point=self.point.model_dump(mode="json"),
            error=error,
            started_at=started,
            finished_at=now(),
            duration_s=elapsed,
            host_kind=layout.kind if layout else self.point.hosts,
            driver=self.driver,
            clients_total=self.point.clients_total,
            hosts=self._host_records(),
            link_capacity_mbit=self.link_capacity,
            tools=tools,
            processes=self._process_records(self.processes),
            warnings=self.warnings,
            # Copied: signals may still arrive while the manifest is written.
            signals=[r.as_json() for r in list(self.signals.received)],
            link_delay=self._link_delay_record(),
            stage_s=self.stage_s,
            cpu=cpu,
            network=self._network_section("window_start", "window_end"),
            link_settings=self._link_settings(),
        )

    def _host_records(self) -> list[dict[str, Any]]:
        """The layout's hosts as run.json lists them (none before the layout is up)."""
        hosts = self.layout.all if self.layout else []
        return [{"name": h.name, "role": h.role, "address": h.address} for h in hosts]

    @staticmethod
    def _process_records(procs: Sequence[Proc]) -> list[dict[str, Any]]:
        """The processes as run.json lists them."""
        return [
            {
                "role": q.role,
                "host": q.host.name,
                "instance": q.instance,
                "command": q.command,
                "exit_code": q.exit_code,
                "dir": q.rel,
            }
            for q in procs
        ]

    def _link_settings(self) -> dict[str, Any] | None:
        """The emulated hosts' route and cap settings (run.json `link_settings`); None: not
        emulated."""
        emu = self.layout.emulation if self.layout else None
        return emu.settings if emu is not None else None

    # --- CPU budgets and accounting -------------------------------------------------------

    def warn(self, warning: str) -> None:
        self.console.print(f"[yellow]warning:[/yellow] {warning}")
        self.warnings.append(warning)

    def mark(self, name: str) -> None:
        """Samples every CPU counter, then the network counters of emulated hosts (which take
        a few subprocesses, so the CPU's mark stays at the step's boundary); a counter that
        cannot be read costs a warning, never the run."""
        self.epoch[name] = time.time()
        layout = self.layout
        if layout is None:
            return
        if self.cpu_accounting != "none":
            try:
                remote = {}
                if layout.kind == "ssh" and name.startswith("window"):
                    for host in layout.all:
                        assert isinstance(host, SshHost)
                        remote[host.name] = cpuaccount.parse_proc_stat(
                            host.run("cat /proc/stat", timeout=20).stdout
                        )
                cgroups = {cg.host: cg.sample() for cg in self.host_cgroups}
                self.cpu_marks[name] = cpuaccount.Mark(
                    time.monotonic(), cpuaccount.machine_sample(), cgroups, remote
                )
            except Exception as e:  # accounting must not cost the run
                self.warnings.append(f"CPU accounting at {name}: {e}")
        if layout.kind == "emulated":
            spaces = {h.name: h.netns for h in layout.all if isinstance(h, NamespaceHost)}
            try:
                self.net_marks[name] = netcounters.sample(spaces)
            except (netcounters.CountersError, OSError) as e:
                self.warnings.append(f"network counters at {name}: {e}")

    def _network_section(self, start: str, end: str) -> dict[str, Any] | None:
        """run.json's `network` between two marks."""
        layout = self.layout
        roles = {h.name: h.role for h in layout.all} if layout is not None else {}
        return netcounters.section(self.net_marks.get(start), self.net_marks.get(end), roles)

    def _cpu_section(self) -> dict[str, Any]:
        layout = self.layout
        remote = (
            {h.name: h.role for h in layout.all} if layout is not None and layout.kind == "ssh"
            else None
        )  # fmt: skip
        out = cpuaccount.section(self.cpu_accounting, self.host_cgroups, self.cpu_marks, remote)
        t0, t1 = self.epoch.get("window_start"), self.epoch.get("window_end")
        out["machine_speed"] = None
        if t0 is not None and t1 is not None and (self.out / speedprobe.DIR).is_dir():
            try:
                out["machine_speed"] = speedprobe.summary(speedprobe.read(self.out), t0, t1)
            except (OSError, ValueError) as e:  # the probe must not cost the run
                self.warnings.append(f"machine speed: {e}")
        return out


_RUN_TOOLS = {"java", "memcached", "memcaslap", "memtier_benchmark", "iperf3", "ip", "tc"}


def write_launch(procs: list[Proc], started: float) -> None:
    """`launch.json` in each client's directory: when its process started (epoch ms), so that
    clients whose output has no clock (memaslap) can be placed on the middleware's time line."""
    for q in procs:
        if isinstance(q.host, LocalHost):
            d = q.host.base / q.rel
            d.mkdir(parents=True, exist_ok=True)
            (d / "launch.json").write_text(json.dumps({"start_ms": int(started * 1000)}) + "\n")


def record_exits(procs: list[Proc], exited: dict[int, float]) -> None:
    """Adds `exit_ms` (when the process was seen to exit, within the 0.05 s of a poll) to
    each client's launch.json: memaslap's timing ends a fixed time before it exits."""
    for q in procs:
        if not isinstance(q.host, LocalHost):
            continue
        path = q.host.base / q.rel / "launch.json"
        if path.exists():
            data = json.loads(path.read_text())
            data["exit_ms"] = int(exited.get(id(q), time.time()) * 1000)
            path.write_text(json.dumps(data) + "\n")


def run_exit_code(manifest: dict[str, Any]) -> int:
    """The exit code of `mwlab run`: 0 ok, 128 + the first signal's number if one arrived
    (130 SIGINT, 143 SIGTERM, 129 SIGHUP), else 1 for a failed run."""
    signals = manifest.get("signals") or []
    if signals:
        return exit_code(signals[0]["signal"])
    return 0 if manifest["status"] == "ok" else 1


def run_point(
    point: Point,
    options: RunOptions,
    console: Console | None = None,
    signals: SignalRecorder | None = None,
) -> dict[str, Any]:
    """Runs one point; see `Runner`."""
    return Runner(point, options, console, signals).run()
