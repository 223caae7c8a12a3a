"""CPU budgets of emulated hosts: one cgroup per host with a CFS quota and CPU accounting.

Each emulated host of a run gets its own cgroup, `<root>/<controller>/mwlab/<run>/<host>`
(cgroup v1, `cpu` and `cpuacct`, co-mounted or not) or `<root>/mwlab/<run>/<host>` (cgroup
v2, `cpu.max`). Its processes join it before they exec, so their children inherit it. The
quota is budget × period: a budget of 0.5 cores may use 0.5 × period of CPU time per period.
The cgroups are removed at teardown, after their processes are gone.

A budgeted host also gets a sibling cgroup without a quota, `<host>.exempt` (v1 only: v2
moves single threads only within threaded subtrees). When the budget binds, threads whose
names are in `EXEMPT_THREADS` move there: the JVM's JIT compilers and the middleware's
statistics collector. Their cost is per second of wall time, not per request, and the scale
model dilates wall time by 1/s: within the budget, one second of compilation that the
study's machine spent during its warm-up would take 1/s times the share it had there. Their
CPU is still accounted, as the host's `exempt_cpu_s_window`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from common.cfs import PERIOD_US, period_us, quota_us
from testbed.point import Point

ROOT_ENV = "MWLAB_CGROUP_ROOT"
DEFAULT_ROOT = Path("/sys/fs/cgroup")
PARENT = "mwlab"
ROLES = ("server", "middleware", "client")
# Thread names (as /proc/<pid>/task/<tid>/comm shows them: 15 characters at most) that run
# outside their host's budget; see the module's docstring.
EXEMPT_THREADS = ("C1 CompilerThre", "C2 CompilerThre", "stats-collector")
EXEMPT_SUFFIX = ".exempt"
# A budgeted JVM compiles with C1 only. Tiered C2 never settles under a budget of a tenth of a
# core: its profiles fill at the budget's pace, so it went on compiling and deoptimising through
# the measurement, at 0.5-0.8 cores of (exempt) compiler CPU against a 0.1-core budget, and took
# the machine's idle CPU that the links and the other hosts need. C1 code is slower per request;
# the calibrated speed factors absorb that.
BUDGETED_JVM_FLAGS = ("-XX:TieredStopAtLevel=1",)
# The exempt threads get the smallest weight: they run on CPU the budgeted hosts leave idle,
# so a burst of compilation cannot take CPU a budget was promised.
EXEMPT_SHARES_V1 = 2
# What the budgets of a run leave to the harness (this process, the kernel's network work,
# the rest of the machine): at least 0.4 core, and a tenth of the machine on larger ones.
# A quota caps a host but reserves nothing: the runs' cgroups get eight times the default
# weight, so other work on the machine yields to the hosts, not the other way round.
SHARES_V1 = 8192
WEIGHT_V2 = 800
RESERVE_CORES = 0.4
RESERVE_SHARE = 0.10


class CgroupError(RuntimeError):
    """A cgroup could not be created, configured or read."""


# --- planning ------------------------------------------------------------------------------


def reserve_cores(cores: float) -> float:
    """The CPU the budgets of a run leave free on a machine of `cores` cores."""
    return max(RESERVE_CORES, RESERVE_SHARE * cores)


def budget_of(point: Point, role: str) -> float | None:
    return getattr(point.budgets_cores, role)


def host_budgets(point: Point) -> dict[str, float]:
    """The budget of each budgeted emulated host of a point, by host name."""
    counts = {"server": point.servers, "middleware": point.middlewares}
    counts["client"] = point.client_machines
    out = {}
    for role, n in counts.items():
        budget = budget_of(point, role)
        if budget is not None:
            out.update({f"{role}{i + 1}": budget for i in range(n)})
    return out


def check_fits(point: Point, cores: float) -> str | None:
    """None if the point's budgets fit a machine of `cores` cores with the harness's reserve,
    else why not. Budgets apply to emulated hosts only; other points always fit."""
    if point.hosts != "emulated":
        return None
    for role in ("server", "middleware", "client"):
        budget = budget_of(point, role)
        if budget is not None:
            try:
                period_us(budget)
            except ValueError as e:
                return f"budgets_cores.{role}: {e}"
    budgets = host_budgets(point)
    total = sum(budgets.values())
    room = cores - reserve_cores(cores)
    if total <= room + 1e-9:
        return None
    per_role = ", ".join(
        f"{role} {budget_of(point, role)} × {n}"
        for role, n in (
            ("server", point.servers),
            ("middleware", point.middlewares),
            ("client", point.client_machines),
        )
        if budget_of(point, role) is not None and n > 0
    )
    return (
        f"CPU budgets do not fit this machine: {per_role} = {total:g} cores, but {cores:g} cores"
        f" less {reserve_cores(cores):g} for the harness leave {room:g}"
    )


# --- the hierarchy -------------------------------------------------------------------------


@dataclass(frozen=True)
class Hierarchy:
    """Where the cpu controller lives. v1: `cpu` and `cpuacct` directories (the same one when
    co-mounted); v2: one unified directory for both."""

    version: Literal[1, 2]
    cpu: Path
    cpuacct: Path

    @property
    def name(self) -> str:
        return f"cgroup-v{self.version}"

    def controllers(self) -> list[Path]:
        """The hierarchy roots a host's cgroup is created in (one per distinct directory)."""
        return [self.cpu] if self.cpu == self.cpuacct else [self.cpu, self.cpuacct]


def root_from_env() -> Path:
    return Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT)


def _v2_with_cpu(path: Path) -> bool:
    try:
        return "cpu" in (path / "cgroup.controllers").read_text().split()
    except OSError:
        return False


def detect(root: Path) -> Hierarchy | str:
    """The cgroup hierarchy with a cpu controller under `root`, or why there is none usable.
    v1 first: where `cpu` is bound to v1, a v2 hierarchy beside it cannot have it."""
    if not root.is_dir():
        return f"no cgroup file system at {root}"
    found: Hierarchy | None = None
    cpu = root / "cpu"
    if (cpu / "cpu.cfs_quota_us").is_file():
        acct = next(
            (
                d
                for d in (root / "cpuacct", root / "cpu,cpuacct", cpu)
                if (d / "cpuacct.usage").is_file()
            ),
            None,
        )
        if acct is None:
            return f"cgroup v1 at {root} has cpu but no cpuacct controller"
        found = Hierarchy(1, cpu.resolve(), acct.resolve())
    else:
        for v2 in (root, root / "unified"):
            if _v2_with_cpu(v2):
                found = Hierarchy(2, v2.resolve(), v2.resolve())
                break
    if found is None:
        return f"no cgroup cpu controller under {root}"
    for d in found.controllers():
        if os.geteuid() != 0 or not os.access(d, os.W_OK):
            return f"cgroups need root (cannot write {d})"
    return found


# --- one host's cgroup ---------------------------------------------------------------------


@dataclass(frozen=True)
class CgroupSample:
    """Cumulative counters of a cgroup at one moment."""

    cpu_s: float
    nr_periods: int
    nr_throttled: int
    throttled_s: float
    exempt_cpu_s: float = 0.0  # of the host's threads outside its budget


def parse_cpu_stat(text: str) -> dict[str, int]:
    """`key value` lines of cpu.stat (either version) as a mapping."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def cpu_max(budget: float | None, period: int | None = None) -> str:
    """cgroup v2's cpu.max for a budget: `quota period`, or `max period` for none."""
    if budget is None:
        return f"max {period or PERIOD_US}"
    return f"{quota_us(budget)} {period_us(budget)}"


def parse_cpu_max(text: str) -> tuple[int | None, int]:
    """cpu.max as (quota or None for `max`, period), microseconds."""
    parts = text.split()
    if len(parts) != 2:
        raise CgroupError(f"cpu.max must be 'QUOTA PERIOD', got {text!r}")
    return (None if parts[0] == "max" else int(parts[0])), int(parts[1])


def sample_from(version: int, usage: str | None, stat: str) -> CgroupSample:
    """A sample from cpuacct.usage (v1, ns) and cpu.stat (v1 ns or v2 µs)."""
    s = parse_cpu_stat(stat)
    if version == 1:
        if usage is None:
            raise CgroupError("cgroup v1 needs cpuacct.usage")
        return CgroupSample(
            int(usage.strip()) / 1e9,
            s.get("nr_periods", 0),
            s.get("nr_throttled", 0),
            s.get("throttled_time", 0) / 1e9,
        )
    return CgroupSample(
        s.get("usage_usec", 0) / 1e6,
        s.get("nr_periods", 0),
        s.get("nr_throttled", 0),
        s.get("throttled_usec", 0) / 1e6,
    )


@dataclass
class HostCgroup:
    """The cgroup of one emulated host."""

    host: str
    role: str
    budget: float | None
    hierarchy: Hierarchy
    relative: Path  # mwlab/<run>/<host>
    exempt: Path | None = None  # mwlab/<run>/<host>.exempt, where budgeted on cgroup v1
    exempted: set[str] = field(default_factory=set)  # names of the threads moved there

    @property
    def period_us(self) -> int | None:
        return None if self.budget is None else period_us(self.budget)

    @property
    def quota_us(self) -> int | None:
        return None if self.budget is None else quota_us(self.budget)

    def dirs(self) -> list[Path]:
        return [c / self.relative for c in self.hierarchy.controllers()]

    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs()]

    def wrap(self, command: list[str]) -> list[str]:
        """`command` joining this cgroup before it execs (the pid stays the command's own; a
        failure to join stops it with an error instead of running unbudgeted)."""
        joins = " && ".join(f"echo $$ > {shlex.quote(str(p))}" for p in self.procs_files())
        return ["sh", "-c", f'{joins} && exec "$@"', "mwlab-cgroup", *command]

    def configure(self) -> None:
        """Sets the period and leaves the quota open: start-up is harness work (`bind`)."""
        cpu = self.hierarchy.cpu / self.relative
        if self.hierarchy.version == 1:
            # Quota unlimited first: a new period must not meet an old, larger quota.
            _write(cpu / "cpu.cfs_quota_us", "-1")
            if self.budget is not None:
                _write(cpu / "cpu.cfs_period_us", str(period_us(self.budget)))
        else:
            _write(cpu / "cpu.max", cpu_max(None, self.period_us))

    def bind(self) -> None:
        """Puts the host under its budget (nothing for an unbudgeted host), its exempt
        threads outside it first."""
        if self.budget is None:
            return
        self.exempt_threads()
        cpu = self.hierarchy.cpu / self.relative
        if self.hierarchy.version == 1:
            _write(cpu / "cpu.cfs_quota_us", str(quota_us(self.budget)))
        else:
            _write(cpu / "cpu.max", cpu_max(self.budget))

    def release(self) -> None:
        """Lifts the quota again (shut-down and log collection are harness work)."""
        cpu = self.hierarchy.cpu / self.relative
        if self.hierarchy.version == 1:
            _write(cpu / "cpu.cfs_quota_us", "-1")
        else:
            _write(cpu / "cpu.max", cpu_max(None, self.period_us))

    def exempt_threads(self) -> list[str]:
        """Moves the host's threads named in `EXEMPT_THREADS` to its exempt cgroup; returns
        the names moved now. A thread that ends meanwhile is skipped."""
        if self.exempt is None:
            return []
        moved = []
        for pid in self.pids():
            for task in Path(f"/proc/{pid}/task").glob("*"):
                try:
                    name = (task / "comm").read_text().strip()
                except OSError:
                    continue
                if name not in EXEMPT_THREADS:
                    continue
                try:
                    for c in self.hierarchy.controllers():
                        (c / self.exempt / "tasks").write_text(task.name)
                except ProcessLookupError:
                    continue
                except OSError as e:
                    raise CgroupError(f"cannot move thread {name!r} of {self.host}: {e}") from e
                moved.append(name)
        self.exempted.update(moved)
        return moved

    def sample(self) -> CgroupSample:
        try:
            s = self._read(self.relative)
            if self.exempt is not None:
                s = dataclasses.replace(s, exempt_cpu_s=self._read(self.exempt).cpu_s)
        except OSError as e:
            raise CgroupError(f"cannot read the cgroup of {self.host}: {e}") from e
        return s

    def _read(self, relative: Path) -> CgroupSample:
        stat = (self.hierarchy.cpu / relative / "cpu.stat").read_text()
        usage = None
        if self.hierarchy.version == 1:
            usage = (self.hierarchy.cpuacct / relative / "cpuacct.usage").read_text()
        return sample_from(self.hierarchy.version, usage, stat)

    def pids(self) -> list[int]:
        """Processes with a thread in the host's cgroup or its exempt one."""
        found: set[int] = set()
        files = self.procs_files()
        if self.exempt is not None:
            files += [c / self.exempt / "cgroup.procs" for c in self.hierarchy.controllers()]
        for p in files:
            with contextlib.suppress(OSError):
                found.update(int(x) for x in p.read_text().split())
        return sorted(found)


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as e:
        raise CgroupError(f"cannot write {value!r} to {path}: {e}") from e


def _enable_cpu(directory: Path) -> None:
    """cgroup v2: lets the children of `directory` have the cpu controller."""
    control = directory / "cgroup.subtree_control"
    with contextlib.suppress(OSError):
        if "cpu" in control.read_text().split():
            return
    _write(control, "+cpu")


# --- the cgroups of a run ------------------------------------------------------------------


@dataclass
class RunCgroups:
    """The cgroups of one run, `mwlab/<run>/<host>`. Always call `teardown`, even after
    errors: it removes whatever was created."""

    hierarchy: Hierarchy
    run: str
    hosts: list[HostCgroup] = field(default_factory=list)
    _created: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.run or "/" in self.run or self.run in (".", ".."):
            raise CgroupError(f"bad run name for a cgroup: {self.run!r}")

    def bind(self) -> None:
        """Every host under its budget: the measurement begins."""
        for cg in self.hosts:
            cg.bind()

    def release(self) -> None:
        """Every quota lifted: the measurement is over."""
        for cg in self.hosts:
            cg.release()

    def add(self, host: str, role: str, budget: float | None) -> HostCgroup:
        """Creates and configures the cgroup of one host."""
        if "/" in host or not host:
            raise CgroupError(f"bad host name for a cgroup: {host!r}")
        cg = HostCgroup(host, role, budget, self.hierarchy, Path(PARENT, self.run, host))
        if budget is not None and self.hierarchy.version == 1:
            cg.exempt = Path(PARENT, self.run, host + EXEMPT_SUFFIX)
        for controller in self.hierarchy.controllers():
            # Another run's teardown may remove the shared parent between two mkdirs.
            for attempt in range(5):
                try:
                    self._mkdir(controller, Path(PARENT))
                    self._mkdir(controller, Path(PARENT, self.run))
                    self._mkdir(controller, cg.relative)
                    if cg.exempt is not None:
                        self._mkdir(controller, cg.exempt)
                    break
                except FileNotFoundError:
                    if attempt == 4:
                        raise CgroupError(f"cannot create cgroup {cg.relative}") from None
        self.hosts.append(cg)
        cg.configure()
        if cg.exempt is not None:
            _write(self.hierarchy.cpu / cg.exempt / "cpu.shares", str(EXEMPT_SHARES_V1))
        return cg

    def _mkdir(self, controller: Path, relative: Path) -> None:
        path = controller / relative
        if self.hierarchy.version == 2:
            _enable_cpu(path.parent)
        if path.is_dir():
            return
        try:
            path.mkdir()
        except FileExistsError:
            return  # another run made the shared parent meanwhile
        except FileNotFoundError:
            raise
        except OSError as e:
            raise CgroupError(f"cannot create cgroup {path}: {e}") from e
        if controller == self.hierarchy.cpu:
            name, weight = ("cpu.shares", SHARES_V1)
            if self.hierarchy.version == 2:
                name, weight = ("cpu.weight", WEIGHT_V2)
            with contextlib.suppress(CgroupError):  # a weight is a preference, not a budget
                _write(path / name, str(weight))
        # The shared parent is left to the teardown of whichever run finds it empty.
        if relative != Path(PARENT):
            self._created.append(path)

    def teardown(self, grace_s: float = 5.0) -> list[str]:
        """Kills what is left in the cgroups, removes them (children first) and the shared
        parent if no other run uses it; returns problems."""
        problems: list[str] = []
        for cg in self.hosts:
            for pid in cg.pids():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        for path in sorted(self._created, key=lambda p: len(p.parts), reverse=True):
            problem = _rmdir(path, grace_s)
            if problem:
                problems.append(problem)
        self._created.clear()
        self.hosts.clear()
        for controller in self.hierarchy.controllers():
            with contextlib.suppress(OSError):
                (controller / PARENT).rmdir()  # busy while another run has cgroups there
        return problems


def _rmdir(path: Path, grace_s: float) -> str | None:
    """Removes a cgroup; a killed process leaves it a moment after SIGKILL, so busy is retried."""
    deadline = time.monotonic() + grace_s
    while True:
        try:
            path.rmdir()
            return None
        except FileNotFoundError:
            return None
        except OSError as e:
            if time.monotonic() >= deadline:
                return f"cannot remove cgroup {path}: {e}"
        time.sleep(0.05)


def run_names(hierarchy: Hierarchy) -> list[str]:
    """The runs that have cgroups, `mwlab/<run>`, in any of the hierarchy's roots."""
    names: set[str] = set()
    for controller in hierarchy.controllers():
        with contextlib.suppress(OSError):
            names.update(d.name for d in (controller / PARENT).iterdir() if d.is_dir())
    return sorted(names)


def _groups(hierarchy: Hierarchy, run: str) -> list[Path]:
    """`mwlab/<run>` and its hosts' cgroups (exempt ones too), children first."""
    found = []
    for controller in hierarchy.controllers():
        top = controller / PARENT / run
        with contextlib.suppress(OSError):
            found += [d for d in top.iterdir() if d.is_dir()] + [top]
    return found


def run_pids(hierarchy: Hierarchy, run: str) -> list[int]:
    """Processes with a thread in a cgroup of run `run`."""
    pids: set[int] = set()
    for group in _groups(hierarchy, run):
        with contextlib.suppress(OSError):
            pids.update(int(x) for x in (group / "cgroup.procs").read_text().split())
    return sorted(pids)


def remove_run(hierarchy: Hierarchy, run: str, grace_s: float = 5.0) -> list[str]:
    """Kills what is in the cgroups of run `run` and removes them, children first: for a run
    whose process died before its teardown (a `kill -9`). Returns problems."""
    for pid in run_pids(hierarchy, run):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    problems = [p for g in _groups(hierarchy, run) if (p := _rmdir(g, grace_s))]
    for controller in hierarchy.controllers():
        with contextlib.suppress(OSError):
            (controller / PARENT).rmdir()  # busy while another run has cgroups there
    return problems


def leftovers(root: Path, run: str) -> list[Path]:
    """Cgroups of run `run` still present under `root` (for checks after teardown)."""
    found = detect(root)
    if isinstance(found, str):
        return []
    return [c / PARENT / run for c in found.controllers() if (c / PARENT / run).exists()]
