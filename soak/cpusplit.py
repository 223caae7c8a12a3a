"""`mwlab mq bench --database-cores X`: the database under a CPU budget of its own, as if on
a machine of its own, and everything else (clients, middleware, the harness) under the rest.

On one machine, the middleware's CPU is taken from the database it serves, while seed 003
measured them on separate machines. Two cgroups (testbed/cpubudget.py, the scale model's CPU
budgets: a CFS quota each) give the database X cores and the rest of the machine's cores to
every other process, so that a system's rate shows what it costs the database and not what
its client costs beside it. The harness moves itself into the second cgroup before it starts
anything, so every process it starts is in it; the database's processes are moved into the
first once the server runs, and the backends it forks later start there.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from testbed.cpubudget import (
    CgroupError,
    Hierarchy,
    HostCgroup,
    RunCgroups,
    detect,
    root_from_env,
)


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields from the third (state) on, or None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name, in parentheses, may hold spaces: fields start after its ')'.
    return text[text.rindex(")") + 2 :].split()


def _children(pid: int) -> list[int]:
    """`pid` and every process below it, from /proc."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        f = stat_fields(int(entry.name)) if entry.name.isdigit() else None
        if f is not None:
            parents[int(entry.name)] = int(f[1])
    found, frontier = [pid], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        frontier += kids
    return found


@dataclass
class CpuSplit:
    """The two budgets of one bench run. Always `close` it: it moves the harness back out and
    removes the cgroups."""

    hierarchy: Hierarchy
    cgroups: RunCgroups
    database: HostCgroup
    others: HostCgroup
    _moved: bool = field(default=False)

    @classmethod
    def open(cls, database_cores: float, cores: int | None = None) -> CpuSplit:
        cores = cores or os.cpu_count() or 1
        if not 0 < database_cores < cores:
            raise CgroupError(
                f"--database-cores {database_cores:g}: the machine has {cores} cores; the"
                " database takes more than 0 and leaves some for the rest"
            )
        found = detect(root_from_env())
        if isinstance(found, str):
            raise CgroupError(f"--database-cores needs the cgroup cpu controller: {found}")
        run = RunCgroups(found, f"mqbench-{os.getpid()}")
        try:
            database = run.add("database", "server", database_cores)
            others = run.add("clients", "client", cores - database_cores)
        except Exception:
            run.teardown()
            raise
        split = cls(found, run, database, others)
        split._join(others, [os.getpid()])
        split._moved = True
        run.bind()
        return split

    def take_database(self, postmaster: int) -> None:
        """Moves the running server (postmaster and its processes) under the database's
        budget; its later backends are forked there."""
        self._join(self.database, _children(postmaster))

    def _join(self, cg: HostCgroup, pids: list[int]) -> None:
        for pid in pids:
            for procs in cg.procs_files():
                try:
                    procs.write_text(str(pid))
                except ProcessLookupError:
                    break  # ended meanwhile
                except OSError as e:
                    raise CgroupError(f"cannot move pid {pid} to {procs}: {e}") from e

    def describe(self) -> dict[str, object]:
        return {
            "database_cores": self.database.budget,
            "other_cores": self.others.budget,
            "cgroup": self.hierarchy.name,
        }

    def close(self) -> list[str]:
        """The harness back in the root cgroup, the quotas lifted and the cgroups removed
        (whatever is still in them is killed); returns problems."""
        if self._moved:
            for controller in self.hierarchy.controllers():
                with contextlib.suppress(OSError):
                    (controller / "cgroup.procs").write_text(str(os.getpid()))
            self._moved = False
        self.cgroups.release()
        return self.cgroups.teardown()
