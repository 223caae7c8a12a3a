"""The machine's speed through the run (testbed.speedprobe): one probe per CPU."""

from __future__ import annotations

from typing import TYPE_CHECKING

from testbed import speedprobe
from testbed.stages.base import Stage

if TYPE_CHECKING:
    from testbed.run import Runner


class SpeedProbeStage(Stage):
    """Timed with the stage before it. On ssh hosts the run is measured on other machines,
    whose speed this one cannot see: no probes there."""

    name = None

    def applies(self, ctx: Runner) -> bool:
        return ctx.layout is not None and ctx.layout.kind != "ssh"

    def setup(self, ctx: Runner) -> None:
        ctx.speed_probes = speedprobe.start(ctx.out)

    def teardown(self, ctx: Runner) -> list[str]:
        problems = speedprobe.stop(ctx.speed_probes)
        ctx.speed_probes = []
        return problems
