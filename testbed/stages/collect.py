"""Collection: every process stopped on its host, and its output fetched into the run
directory."""

from __future__ import annotations

import contextlib
import shutil
from typing import TYPE_CHECKING

from testbed.hosts import HostError
from testbed.stages.base import Stage, on_every_host

if TYPE_CHECKING:
    from testbed.run import Runner


class CollectStage(Stage):
    """The first teardown of every run that has hosts, whichever stage it reached: each
    host stops all it runs before the links, delays, budgets and hosts go. Timed as
    `collect` while it fetches, then the rest of teardown as `teardown`."""

    name = None

    def setup(self, ctx: Runner) -> None:
        pass  # the services' stages start the processes

    def teardown(self, ctx: Runner) -> list[str]:
        layout = ctx.layout
        if layout is None:
            return []
        problems = on_every_host(layout, lambda host: host.stop_all())
        ctx.mark("end")
        ctx.time_stage("collect")
        try:
            _collect(ctx)
        except Exception as e:
            problems.append(f"collecting logs: {e}")
        ctx.time_stage("teardown")
        return problems


def _collect(ctx: Runner) -> None:
    for q in ctx.processes:
        with contextlib.suppress(HostError, OSError):
            q.host.fetch(q.rel, ctx.out / q.rel)
    if ctx.driver == "memaslap":
        for d in (ctx.out / "clients").glob("*"):
            if (d / "stdout.log").exists():
                shutil.copyfile(d / "stdout.log", d / "memaslap.txt")
