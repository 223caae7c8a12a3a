"""A series: the points of one topology measured in one run of it, one step per point.

Hosts, links, delays, servers and their population are set up once. Points that share a
middleware configuration share one middleware (a segment); within a segment, the built-in
generator steps through the virtual-client levels of one workload in a single launch
(`--steps`), other drivers launch once per point. Each point still gets a run directory of
its own, as `mwlab run` writes it: run.json, its clients' outputs, and the middleware's
statistics windows that overlap the point's step. A step whose measurement fails the
stability check or whose clients fail is measured again on its own, a bounded number of
times; earlier attempts are kept in the series directory. The check is the caller's (the
front end passes the analysis' `analysis.stability.check_run_dir`); its precision bound and
how much longer a rerun must be come from the criteria themselves (common.stability).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import shutil
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from common.stability import MAX_REL_HALF_WIDTH, Stability, length_factor
from testbed import cpuaccount
from testbed.drivers import Target
from testbed.hosts import Proc
from testbed.manifest import build_manifest, now, write_manifest
from testbed.point import Point
from testbed.run import Layout, RunError, Runner, RunOptions
from testbed.signals import SignalRecorder
from testbed.stages import Stage

# The stability check of a step's run directory, after its warm-up and cool-down (seconds).
StabilityCheck = Callable[[Path, float, float], Stability]
# Fields a series' points may differ in; every other field fixes the topology.
VARYING = (
    "name",
    "virtual_clients",
    "middleware",
    "workload.ratio",
    "workload.multiget",
    "duration_s",
)
# Middleware statistics files cut to a step's windows (all start with the window index).
STATS_FILES = (
    "windows.csv",
    "queue.csv",
    "servers.csv",
    "workers.csv",
    "histogram.csv",
    "pools.csv",
    "pool_requests.csv",
)


class SeriesError(ValueError):
    """The points cannot form one series; the message says which field differs."""


def topology_of(point: Point) -> dict[str, Any]:
    """The fields that must be equal across a series."""
    if point.system != "memcached":
        # A series swaps memcached's measurement stages in; SimpleMQ has its own.
        raise SeriesError(f"{point.name}: a series runs memcached points, not {point.system}")
    d = point.model_dump(mode="json")
    d.pop("name")
    d.pop("virtual_clients")
    d.pop("middleware")
    d.pop("duration_s")
    d["workload"] = {k: v for k, v in d["workload"].items() if k not in ("ratio", "multiget")}
    return d


def check_series(points: Sequence[Point]) -> None:
    if not points:
        raise SeriesError("a series needs at least one point")
    first = topology_of(points[0])
    for p in points[1:]:
        other = topology_of(p)
        diff = sorted(k for k in first if first[k] != other[k])
        if diff:
            raise SeriesError(
                f"{p.name} differs from {points[0].name} in {', '.join(diff)}: a series only"
                f" varies {', '.join(VARYING[1:])}"
            )
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        raise SeriesError("the points of a series need distinct names")


@dataclass(frozen=True)
class Launch:
    """Steps (indices into the series' points) measured by one launch of the clients."""

    steps: tuple[int, ...]
    stepped: bool  # one built-in generator stepping through the steps' levels


@dataclass(frozen=True)
class Segment:
    """Steps served by one start of the middlewares."""

    middleware: dict[str, Any]
    launches: tuple[Launch, ...]


def plan(points: Sequence[Point], driver: str) -> list[Segment]:
    """Orders a series: by middleware configuration, then workload, then virtual clients."""

    def mw(i: int) -> str:
        return json.dumps(points[i].middleware.model_dump(mode="json"), sort_keys=True)

    def wl(i: int) -> str:
        workload = points[i].workload.model_dump(mode="json")
        return json.dumps({**workload, "duration_s": points[i].duration_s}, sort_keys=True)

    order = sorted(range(len(points)), key=lambda i: (mw(i), wl(i), points[i].virtual_clients))
    segments: list[Segment] = []
    for key in dict.fromkeys(mw(i) for i in order):
        steps = [i for i in order if mw(i) == key]
        launches: list[Launch] = []
        for w in dict.fromkeys(wl(i) for i in steps):
            same = tuple(i for i in steps if wl(i) == w)
            levels = [points[i].virtual_clients for i in same]
            if driver == "builtin" and len(same) > 1 and len(set(levels)) == len(levels):
                launches.append(Launch(same, stepped=True))
            else:
                launches.extend(Launch((i,), stepped=False) for i in same)
        segments.append(Segment(json.loads(key), tuple(launches)))
    return segments


def lengthened(point: Point, factor: float) -> Point:
    """`point` with its measured interval (between warm-up and cool-down) `factor` times as
    long, in whole seconds (memaslap and memtier count seconds)."""
    cut = point.warmup_s + point.cooldown_s
    duration = math.ceil(cut + (point.duration_s - cut) * factor)
    return point.model_copy(update={"duration_s": float(max(duration, point.duration_s))})


@dataclass
class Step:
    """One point of the series and what became of it."""

    point: Point
    out: Path
    error: str | None = "not measured"  # why its clients failed; None once measured
    unstable: str | None = None  # why its last measurement failed the stability check
    attempts: list[dict[str, Any]] = field(default_factory=list)
    marks: tuple[str, str] | None = None
    window_ms: tuple[int, int] | None = None  # epoch ms of the step's measurement
    middleware_dir: str | None = None  # the segment's middleware directories' prefix
    stage_s: dict[str, float] = field(default_factory=dict)
    processes: list[Proc] = field(default_factory=list)
    longer: float = 1.0  # how much longer than planned its next measured interval is to be
    # Why no rerun can help: its only failure is precision, and even the longest rerun
    # would leave the half-width above the bound.
    beyond_reach: str | None = None
    planned: Point = field(init=False)  # the point as the plan gave it

    def __post_init__(self) -> None:
        self.planned = self.point


@dataclass
class SeriesOptions(RunOptions):
    # Further measurements of a step that failed or was unstable (0: none).
    reruns: int = 2
    # A step whose mean was too imprecise is measured again for longer: the CI half-width
    # shrinks as 1/sqrt(n), so by (half-width / bound)^2 with a fifth more as margin (Jain
    # 1991 §25.5), at most this many times its planned measured interval.
    longest_rerun: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.longest_rerun >= 1:
            raise ValueError(f"longest_rerun must be at least 1, not {self.longest_rerun}")


class SeriesStage(Stage):
    """The measurement of a series, once the servers are up and populated: per segment, its
    middlewares (stage `middlewares`), its launches and reruns (`clients`), their stop
    (`stop`) and the steps' middleware windows (`split`); then the servers' statistics."""

    name = None  # it enters its stages, once per segment or launch

    def setup(self, ctx: Runner) -> None:
        assert isinstance(ctx, SeriesRunner)
        layout, servers = ctx.layout, ctx.servers
        assert layout is not None
        for j, seg in enumerate(ctx.segments):
            seg_point = ctx.steps[seg.launches[0].steps[0]].point
            prefix = f"seg{j + 1}/"
            ctx.enter("middlewares")
            frontends = servers
            if layout.middlewares:
                frontends = ctx.start_middlewares(layout, servers, seg_point, prefix)
            else:
                ctx.hook("middlewares")
            try:
                for n, launch in enumerate(seg.launches):
                    if n == 0 and layout.middlewares:
                        ctx.warm_up(layout, frontends, ctx.steps[launch.steps[0]].point, prefix)
                    ctx._launch(layout, frontends, launch, prefix)
                    for i in launch.steps:
                        ctx._remeasure(layout, frontends, i, prefix)
            except RunError as e:
                for launch in seg.launches:
                    for i in launch.steps:
                        if ctx.steps[i].marks is None:
                            ctx.steps[i].error = f"segment {j + 1}: {e}"
                ctx.warn(f"segment {j + 1} ended early: {e}")
            ctx.enter("stop")
            ctx.hook("stop")
            try:
                ctx.stop_middlewares(layout)
            except RunError as e:
                ctx.warn(f"segment {j + 1}: {e}")
            ctx.time_stage("split")
            for launch in seg.launches:
                for i in launch.steps:
                    if ctx.steps[i].error is None:
                        ctx._split_middlewares(layout, ctx.steps[i])
        ctx.enter("stop")
        ctx.server_stats(layout, servers)
        ctx.stop_link_delay()


class SeriesRunner(Runner):
    """Runs a series; `run()` writes the series' own run.json in `options.out` and one
    run.json per point in its directory."""

    def __init__(
        self,
        points: Sequence[tuple[Point, Path]],
        options: SeriesOptions,
        console: Console | None = None,
        signals: SignalRecorder | None = None,
        stability: StabilityCheck | None = None,
    ) -> None:
        pts = [p for p, _ in points]
        check_series(pts)
        # The topology's point: populate whenever any step reads.
        base = max(pts, key=lambda p: (p.workload.gets > 0, -pts.index(p)))
        super().__init__(base.model_copy(update={"name": f"series:{base.name}"}), options,
                         console, signals, measure=(SeriesStage(),))  # fmt: skip
        self.sopt = options
        self.steps = [Step(p, out.resolve()) for p, out in points]
        self.segments = plan(pts, self.driver)
        self._launches = 0
        self._stability = stability

    def run(self) -> dict[str, Any]:
        """The series' run.json, then each step's; a failure to write the series' leaves the
        steps' unwritten."""
        try:
            return super().run()
        finally:
            if self.manifest is not None:
                for step in self.steps:
                    # A step still unstable after its reruns stands: validation flags it.
                    why = self.manifest["error"] or step.error if step.marks is None else step.error
                    self._write_step(step, error=why)

    # --- measuring ------------------------------------------------------------------------

    def _launch(
        self,
        layout: Layout,
        frontends: list[Target],
        launch: Launch,
        seg: str,
    ) -> None:
        """One launch of the clients for `launch.steps`; each step's outcome is recorded."""
        self._launches += 1
        label = f"L{self._launches}"
        prefix = f"{seg}launch{self._launches}/"
        first = self.steps[launch.steps[0]].point
        levels = tuple(self.steps[i].point.virtual_clients for i in launch.steps)
        marks = tuple(f"{label}:{k}" for k in range(len(levels) + 1))
        self.enter("clients")
        names = ", ".join(str(v) for v in levels)
        self.log(f"launch {label}: {names} virtual clients per thread, {first.duration_s:g} s each")
        t0 = time.monotonic()
        procs: list[Proc] = []
        error: str | None = None
        try:
            procs = self.run_clients(
                layout, frontends, first, prefix, levels if launch.stepped else (), marks
            )
        except RunError as e:
            error = str(e)
            procs = [q for q in self.processes if q.role == "client" and q.rel.startswith(prefix)]
            for q in procs:  # e.g. a gate that timed out: no client outlives its launch
                q.signal(signal.SIGKILL)
                q.wait(5.0)
        wall = time.monotonic() - t0
        self.time_stage("split")
        for k, i in enumerate(launch.steps):
            step = self.steps[i]
            step.marks = (marks[k], marks[k + 1])
            step.window_ms = (
                int(self.epoch.get(marks[k], time.time()) * 1000),
                int(self.epoch.get(marks[k + 1], time.time()) * 1000),
            )
            step.middleware_dir = seg
            step.processes = procs
            step.stage_s = {"clients": wall / len(launch.steps)}
            self._place_clients(step, procs, k + 1 if launch.stepped else None)
            self._record_attempt(step, label, error)
        self.time_stage("clients")

    def _remeasure(self, layout: Layout, frontends: list[Target], i: int, seg: str) -> None:
        """Measures step `i` again on its own while it failed or was unstable."""
        step = self.steps[i]
        while (step.error or step.unstable) and len(step.attempts) <= self.sopt.reruns:
            if step.error is None and step.beyond_reach:
                self.log(f"{step.point.name}: not measured again ({step.beyond_reach})")
                break
            dead = [q for q in self.processes if q.role == "middleware" and q.poll() is not None]
            dead = [q for q in dead if q.rel.startswith(seg)]
            if dead:
                raise RunError(f"middleware on {dead[0].host.name} exited with {dead[0].exit_code}")
            self.log(f"{step.point.name}: measuring again ({step.error or step.unstable})")
            self._keep_attempt(step)
            if step.longer > 1:
                step.point = lengthened(step.planned, step.longer)
                self.log(f"{step.point.name}: {step.point.duration_s:g} s this time")
            self._launch(layout, frontends, Launch((i,), stepped=False), seg)

    def _record_attempt(self, step: Step, label: str, error: str | None) -> None:
        """Writes the step's provisional run.json and checks its stability."""
        step.error = error
        step.unstable = None
        step.beyond_reach = None
        reason = None
        if error is None:
            layout = self.layout
            if self._stability is not None and layout is not None and self._local_stats(step):
                # The check may need the middlewares' finer windows (memaslap prints once a
                # second); they are cut again from the complete files after the segment.
                self._split_middlewares(layout, step)
            else:
                self._write_step(step, provisional=True)
            if self._stability is not None:
                p = step.point
                verdict = self._stability(step.out, p.warmup_s, p.cooldown_s)
                if not verdict.stable:
                    reason = f"unstable: {verdict.reason}"
                    half = verdict.rel_half_width
                    step.beyond_reach = self._beyond_reach(step, verdict.reason, half)
                    step.longer = self._longer(step, half)
        attempt = {
            "launch": label,
            "duration_s": step.point.duration_s,
            "error": error,
            "unstable": reason,
        }
        if step.beyond_reach:
            attempt["not_rerun"] = step.beyond_reach
        step.attempts.append(attempt)
        step.unstable = reason

    def _longer(self, step: Step, rel_half_width: float | None) -> float:
        """How much longer than planned the step's next measured interval is to be, after a
        measurement with this CI half-width (over its mean); unchanged when its precision
        was not what failed."""
        if rel_half_width is None or not rel_half_width > MAX_REL_HALF_WIDTH:
            return step.longer
        needed = 1.2 * length_factor(rel_half_width)
        return min(step.longer * needed, self.sopt.longest_rerun)

    def _beyond_reach(self, step: Step, reason: str, rel_half_width: float | None) -> str | None:
        """Why a rerun cannot close the interval, or None: when precision is the only
        criterion failed and the longest rerun, at the half-width's 1/sqrt(n), would still
        leave it above the bound. Such a rerun only spends time; the step stands as
        imprecise, and the validation appendix gives the length its family needs."""
        if rel_half_width is None or not rel_half_width > MAX_REL_HALF_WIDTH:
            return None
        if any(not part.startswith("imprecise") for part in reason.split("; ")):
            return None
        needed = step.longer * length_factor(rel_half_width)
        if needed <= self.sopt.longest_rerun:
            return None
        return (
            f"a {rel_half_width:.0%} half-width needs {needed:.1f} times the planned interval,"
            f" the longest rerun is {self.sopt.longest_rerun:g} times"
        )

    def _keep_attempt(self, step: Step) -> None:
        """Moves the step's directory aside, into the series directory."""
        if step.out.exists():
            where = f"step{self.steps.index(step) + 1}"
            kept = self.out / "attempts" / where / f"attempt-{len(step.attempts)}"
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(kept, ignore_errors=True)
            shutil.move(str(step.out), kept)

    # --- a step's run directory ----------------------------------------------------------

    def _place_clients(self, step: Step, procs: list[Proc], stepped: int | None) -> None:
        """Copies the launch's client outputs of this step into the step's directory."""
        shutil.rmtree(step.out / "clients", ignore_errors=True)
        for q in procs:
            src = self.out / q.rel
            if not src.exists():  # ssh hosts: their outputs come over first
                q.host.fetch(q.rel, src)
            dst = step.out / "clients" / Path(q.rel).name
            dst.mkdir(parents=True, exist_ok=True)
            for name in ("stdout.log", "stderr.log", "launch.json"):
                if (src / name).exists():
                    shutil.copyfile(src / name, dst / name)
            if stepped is not None:
                one = src / f"result.step{stepped}.json"
                if one.exists():
                    shutil.copyfile(one, dst / "result.json")
            elif (src / "result.json").exists():
                shutil.copyfile(src / "result.json", dst / "result.json")
            if self.driver == "memaslap" and (src / "stdout.log").exists():
                shutil.copyfile(src / "stdout.log", dst / "memaslap.txt")

    def _local_stats(self, step: Step) -> bool:
        """Whether the middlewares of the step's segment write their statistics here, so
        that the windows written so far can be read while they run."""
        layout = self.layout
        if layout is None or not layout.middlewares or layout.kind == "ssh":
            return False
        return (self.out / f"{step.middleware_dir}middlewares").is_dir()

    def _split_middlewares(self, layout: Layout, step: Step) -> None:
        """The middleware statistics windows that overlap the step, in the step's directory."""
        assert step.window_ms is not None and step.middleware_dir is not None
        lo, hi = step.window_ms
        for host in layout.middlewares:
            rel = f"{step.middleware_dir}middlewares/{host.name}"
            src = self.out / rel
            if not src.exists():
                host.fetch(rel, src)
            dst = step.out / "middlewares" / host.name
            shutil.rmtree(dst, ignore_errors=True)
            (dst / "stats").mkdir(parents=True)
            for name in ("stdout.log", "stderr.log"):
                if (src / name).exists():
                    shutil.copyfile(src / name, dst / name)
            stats = src / "stats"
            if (stats / "summary.json").exists():
                shutil.copyfile(stats / "summary.json", dst / "stats" / "summary.json")
            keep = _windows_within(stats / "queue.csv", lo, hi)
            for name in STATS_FILES:
                if (stats / name).exists():
                    _filter_windows(stats / name, dst / "stats" / name, keep)
        self._write_step(step, provisional=True)

    def _step_manifest(self, step: Step, error: str | None) -> dict[str, Any]:
        layout = self.layout
        marks = {}
        if step.marks is not None:
            for key, name in zip(("window_start", "window_end"), step.marks, strict=True):
                if name in self.cpu_marks:
                    marks[key] = self.cpu_marks[name]
        for key in ("start", "end"):
            if key in self.cpu_marks:
                marks[key] = self.cpu_marks[key]
        cpu = cpuaccount.section(self.cpu_accounting, self.host_cgroups, marks, None)
        warnings = list(self.warnings)
        saturated = cpuaccount.saturation_warning(cpu)
        if saturated is not None:
            warnings.append(saturated)
        lo, hi = step.window_ms or (0, 0)
        shared = {k: v / len(self.steps) for k, v in self.stage_s.items() if k != "clients"}
        procs = [q for q in self.processes if q.role in ("server", "populate")]
        procs += [
            q
            for q in self.processes
            if q.role == "middleware"
            and step.middleware_dir
            and q.rel.startswith(step.middleware_dir)
        ]
        procs += step.processes
        manifest = build_manifest(
            point=step.point.model_dump(mode="json"),
            error=error,
            started_at=_iso(lo) if lo else now(),
            finished_at=_iso(hi) if hi else now(),
            duration_s=(hi - lo) / 1000,
            host_kind=layout.kind if layout else self.point.hosts,
            driver=self.driver,
            clients_total=step.point.clients_total,
            hosts=self._host_records(),
            link_capacity_mbit=self.link_capacity,
            processes=self._process_records(procs),
            warnings=warnings,
            signals=[r.as_json() for r in list(self.signals.received)],
            link_delay=self._link_delay_record(),
            stage_s={**shared, **step.stage_s},
            cpu=cpu,
            network=self._network_section(*step.marks) if step.marks else None,
            link_settings=self._link_settings(),
        )
        manifest["series"] = {
            "dir": str(self.out),
            "points": len(self.steps),
            "step": self.steps.index(step) + 1,
            "attempts": step.attempts,
        }
        return manifest

    def _write_step(self, step: Step, provisional: bool = False, error: str | None = None) -> None:
        step.out.mkdir(parents=True, exist_ok=True)
        (step.out / "point.yaml").write_text(json.dumps(step.point.model_dump(mode="json")))
        why = error if not provisional else None
        write_manifest(step.out / "run.json", self._step_manifest(step, why))


def _iso(epoch_ms: int) -> str:
    return dt.datetime.fromtimestamp(epoch_ms / 1000, dt.UTC).isoformat(timespec="milliseconds")


def _windows_within(queue_csv: Path, lo: int, hi: int) -> set[str]:
    """Window indices of the middleware whose interval overlaps [lo, hi] (epoch ms)."""
    keep: set[str] = set()
    if not queue_csv.exists():
        return keep
    with queue_csv.open() as f:
        for row in csv.DictReader(f):
            if int(row["end_ms"]) > lo and int(row["start_ms"]) < hi:
                keep.add(row["window"])
    return keep


def _filter_windows(src: Path, dst: Path, keep: set[str]) -> None:
    with src.open() as f, dst.open("w") as out:
        header = f.readline()
        out.write(header)
        for line in f:
            if line.split(",", 1)[0] in keep:
                out.write(line)


def run_series(
    points: Sequence[tuple[Point, Path]],
    options: SeriesOptions,
    console: Console | None = None,
    signals: SignalRecorder | None = None,
    stability: StabilityCheck | None = None,
) -> dict[str, Any]:
    """Runs a series; see `SeriesRunner`."""
    return SeriesRunner(points, options, console, signals, stability).run()
