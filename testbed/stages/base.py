"""The unit of a run (`Stage`) and the driver that runs a sequence of them (`Stages`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from testbed.hosts import Host
    from testbed.run import Runner
    from testbed.stages.layout import Layout


class RunError(RuntimeError):
    """The run cannot go on; the message says why."""


def on_every_host(layout: Layout, action: Callable[[Host], None]) -> list[str]:
    """`action` on each of the layout's hosts, going on past a host that fails (teardown must
    go on); the failures, one problem each."""
    problems: list[str] = []
    for host in layout.all:
        try:
            action(host)
        except Exception as e:
            problems.append(f"{host.name}: {e}")
    return problems


class Stage(Protocol):
    """One unit of a run. `name` is its common.stages name: the driver enters it (logged,
    timed, a signal check) before `setup`. None: the stage is timed with the one before it,
    or enters its stages itself (a series enters middlewares, clients and stop per segment).
    """

    name: str | None

    def applies(self, ctx: Runner) -> bool:
        """Whether the run passes this stage at all (skipped: neither entered nor torn down)."""
        return True

    def setup(self, ctx: Runner) -> None: ...

    def teardown(self, ctx: Runner) -> list[str]:
        """Releases what `setup` made, also after a partial setup; never raises, never checks
        for signals: returns the problems met."""
        return []


class Stages:
    """Sets stages up in order; tears down in reverse those it entered, whether the run ended
    well, failed or was interrupted."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        self.stages = tuple(stages)
        self.entered: list[Stage] = []

    def setup(self, ctx: Runner) -> None:
        for stage in self.stages:
            if not stage.applies(ctx):
                continue
            # Entered before its setup starts: a setup that fails halfway is torn down too.
            self.entered.append(stage)
            if stage.name is not None:
                ctx.enter(stage.name)
            stage.setup(ctx)

    def teardown(self, ctx: Runner) -> list[str]:
        problems: list[str] = []
        for stage in reversed(self.entered):
            problems += stage.teardown(ctx)
        return problems
