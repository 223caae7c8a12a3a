"""The links: their capacities measured (linkcap) and their one-way delays (linkdelay)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from testbed import linkcap, linkdelay
from testbed.stages.base import RunError, Stage

if TYPE_CHECKING:
    from testbed.run import Runner


class LinkCapStage(Stage):
    name = "linkcap"

    def applies(self, ctx: Runner) -> bool:
        assert ctx.layout is not None
        return ctx.layout.kind != "local"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        ctx.hook("linkcap")
        ctx.link_capacity = linkcap.measure(
            layout.kind,
            layout.all,
            ctx.point.caps_mbit.model_dump(),
            ctx.opt.base_port + 200,
            ctx.out,
            ctx.opt.linkcap_cache,
            ctx.signals.check,
        )


class LinkDelayStage(Stage):
    """The delay process runs until the run stops it (`Runner.stop_link_delay`) or teardown."""

    name = "linkdelay"

    def setup(self, ctx: Runner) -> None:
        _start_link_delay(ctx)
        ctx.hook("linkdelay")

    def teardown(self, ctx: Runner) -> list[str]:
        if ctx.link_delay is None:
            return []
        try:
            ctx.link_delay.stop()
        except Exception as e:
            return [f"link delay: {e}"]
        return []


def _start_link_delay(ctx: Runner) -> None:
    layout = ctx.layout
    assert layout is not None
    delays = ctx.point.delays_ms
    if not linkdelay.wanted(delays):
        return
    if layout.emulation is None:
        ctx.warnings.append(f"delays_ms ignored: {layout.kind} hosts have no emulated links")
        return
    ctx.link_delay = linkdelay.LinkDelay(
        list(layout.emulation.hosts), delays, ctx.opt.build_dir, ctx.out / "linkdelay"
    )
    try:
        ctx.link_delay.start(ctx.signals.check)
    except linkdelay.LinkDelayError as e:
        raise RunError(str(e)) from e
