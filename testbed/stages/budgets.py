"""The CPU budgets: every emulated host in a cgroup of its own, with its role's budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from testbed import cpubudget
from testbed.hosts import NamespaceHost
from testbed.stages.base import RunError, Stage

if TYPE_CHECKING:
    from testbed.run import Runner


class BudgetStage(Stage):
    """Timed with the stage before it (linkcap, or layout on local hosts): it comes after the
    link capacities, which are the links', not what a host's budget lets iperf3 send. Its
    cgroups are the hosts': the layout's teardown removes them (`remove_cgroups`)."""

    name = None

    def setup(self, ctx: Runner) -> None:
        _apply_budgets(ctx)
        ctx.mark("start")


def remove_cgroups(ctx: Runner) -> list[str]:
    if ctx.cgroups is None:
        return []
    try:
        return ctx.cgroups.teardown()
    except Exception as e:
        return [f"cgroups: {e}"]


def _apply_budgets(ctx: Runner) -> None:
    layout = ctx.layout
    assert layout is not None
    budgets = {r: cpubudget.budget_of(ctx.point, r) for r in cpubudget.ROLES}
    if layout.emulation is None:
        if any(b is not None for b in budgets.values()):
            ctx.warn(
                f"CPU budgets apply to emulated hosts only; these {layout.kind} hosts run"
                " without them"
            )
        ctx.cpu_accounting = "ssh" if layout.kind == "ssh" else "machine"
        return
    found = cpubudget.detect(ctx.opt.cgroup_root or cpubudget.root_from_env())
    if isinstance(found, str):
        ctx.warn(
            f"no CPU budgets nor per-host CPU accounting ({found}); the emulated hosts run"
            " without them"
        )
        ctx.cpu_accounting = "machine"
        return
    ctx.cgroups = cpubudget.RunCgroups(found, layout.emulation.prefix)
    try:
        for host in layout.all:
            assert isinstance(host, NamespaceHost)
            host.cgroup = ctx.cgroups.add(host.name, host.role, budgets[host.role])
            ctx.host_cgroups.append(host.cgroup)
    except cpubudget.CgroupError as e:
        # Like having no cgroups at all: what was made goes, the hosts run without.
        for host in layout.all:
            if isinstance(host, NamespaceHost):
                host.cgroup = None
        ctx.host_cgroups.clear()
        problems = ctx.cgroups.teardown()
        ctx.cgroups = None
        if problems:
            raise RunError("; ".join(problems)) from e
        ctx.warn(f"no CPU budgets nor per-host CPU accounting ({e}); the emulated hosts"
                 " run without them")  # fmt: skip
        ctx.cpu_accounting = "machine"
        return
    ctx.cpu_accounting = found.name
