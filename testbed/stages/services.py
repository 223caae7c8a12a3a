"""The services of a run, in the order they start: memcached servers, their population,
middlewares, clients, and the stop that ends the measurement. Their processes run on the
hosts, which stop them all at teardown (`CollectStage`); none has a teardown of its own."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from testbed import cpubudget, drivers
from testbed.drivers import Target
from testbed.hosts import Host, NamespaceHost
from testbed.services.memcached import memcached_command, wait_ready
from testbed.stages.base import RunError, Stage

if TYPE_CHECKING:
    from testbed.run import Runner


class ServerStage(Stage):
    name = "servers"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        targets = []
        procs = []
        for i, host in enumerate(layout.servers):
            port = ctx.server_port(i)
            cmd = memcached_command(host.address, port)
            procs.append(ctx.start(host, cmd, f"servers/{host.name}", "server", i))
            targets.append(Target(host.address, port))
        ctx.hook("servers")
        for host, proc, t in zip(layout.servers, procs, targets, strict=True):
            wait_ready(host, t.address, t.port, 30.0, proc, ctx.signals.check)
        ctx.servers = targets


class PopulateStage(Stage):
    name = "populate"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        w = ctx.point.workload
        if not w.populate or w.gets == 0 or ctx.driver == "memaslap":
            ctx.hook("populate")
            return
        procs = []
        for i, (host, t) in enumerate(zip(layout.servers, ctx.servers, strict=True)):
            jar = host.stage(ctx.jar("loadgen.jar"))
            cmd = drivers.loadgen_command(jar, drivers.populate_flags(ctx.point, t, "result.json"))
            # Harness work, not the server machine's: outside its CPU budget.
            with _outside_budget(host):
                procs.append(ctx.start(host, cmd, f"servers/{host.name}/populate", "populate", i))
        ctx.hook("populate")
        for proc in procs:
            if ctx.wait(proc, 180.0) is None:
                raise RunError(f"populating {proc.host.name} did not finish in 180 s")
            if proc.exit_code != 0:
                raise RunError(
                    f"populating {proc.host.name} failed with exit code {proc.exit_code}"
                    f" (see servers/{proc.host.name}/populate/stderr.log)"
                )


class MiddlewareStage(Stage):
    name = "middlewares"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        ctx.frontends = ctx.servers
        if layout.middlewares:
            ctx.frontends = ctx.start_middlewares(layout, ctx.servers)
        else:
            ctx.hook("middlewares")


class ClientStage(Stage):
    name = "clients"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        if layout.middlewares and cpubudget.budget_of(ctx.point, "middleware") is not None:
            ctx.warm_up(layout, ctx.frontends, ctx.point)
        ctx.log(f"{ctx.point.clients_total} virtual clients for {ctx.point.duration_s} s")
        ctx.run_clients(layout, ctx.frontends)


class StopStage(Stage):
    name = "stop"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        ctx.hook("stop")
        ctx.stop_middlewares(layout)
        ctx.server_stats(layout, ctx.servers)
        ctx.stop_link_delay()


@contextlib.contextmanager
def _outside_budget(host: Host) -> Iterator[None]:
    """Processes started meanwhile on `host` stay out of its cgroup (in the testbed's own)."""
    cgroup = host.cgroup if isinstance(host, NamespaceHost) else None
    if isinstance(host, NamespaceHost):
        host.cgroup = None
    try:
        yield
    finally:
        if isinstance(host, NamespaceHost):
            host.cgroup = cgroup
