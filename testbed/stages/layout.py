"""The layout stage: the run's hosts (emulated, local or ssh), checked for what it needs."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from testbed import drivers, emulation
from testbed.hosts import Host, LocalHost
from testbed.inventory import load_inventory
from testbed.services.pghost import PostgresError, pg_host
from testbed.services.ports import LOOPBACK, port_free
from testbed.stages.base import RunError, Stage, on_every_host
from testbed.stages.budgets import remove_cgroups

if TYPE_CHECKING:
    from testbed.run import Runner


@dataclass
class Layout:
    kind: str
    servers: list[Host]
    middlewares: list[Host]
    clients: list[Host]
    emulation: emulation.Emulation | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def all(self) -> list[Host]:
        return [*self.servers, *self.middlewares, *self.clients]


class LayoutStage(Stage):
    name = "layout"

    def setup(self, ctx: Runner) -> None:
        ctx.layout = _layout(ctx)
        layout = ctx.layout
        ctx.log(f"{layout.kind} hosts, driver {ctx.driver}")
        ctx.hook("layout")
        _check(ctx, layout)

    def teardown(self, ctx: Runner) -> list[str]:
        layout = ctx.layout
        if layout is None:
            return []
        problems = (
            on_every_host(layout, lambda host: host.cleanup()) if layout.kind == "ssh" else []
        )
        if layout.emulation is not None:
            try:
                problems += layout.emulation.teardown()
            except Exception as e:
                problems.append(f"emulation: {e}")
        # The hosts' cgroups go after the namespaces, whose teardown kills what ran in them.
        return problems + remove_cgroups(ctx)


def _layout(ctx: Runner) -> Layout:
    p = ctx.point
    kind = p.hosts
    if kind == "emulated":
        reason = emulation.available()
        if reason is not None:
            warning = f"emulated hosts unavailable ({reason}); running on local hosts instead"
            ctx.console.print(f"[yellow]warning:[/yellow] {warning}")
            ctx.warnings.append(warning)
            kind = "local"
    if kind == "ssh":
        assert p.inventory is not None
        inv = load_inventory(p.inventory)
        need = {"server": p.servers, "middleware": p.middlewares, "client": p.client_machines}
        picked: dict[str, list[Host]] = {}
        for role, n in need.items():
            machines = inv.of_role(role)
            if len(machines) < n:
                raise RunError(
                    f"inventory {p.inventory} has {len(machines)} {role} machines,"
                    f" the point needs {n}"
                )
            picked[role] = [inv.ssh_host(m, ctx.run_id) for m in machines[:n]]
        return Layout(kind, picked["server"], picked["middleware"], picked["client"])
    names = (
        [(f"server{i + 1}", "server") for i in range(p.servers)]
        + [(f"middleware{i + 1}", "middleware") for i in range(p.middlewares)]
        + [(f"client{i + 1}", "client") for i in range(p.client_machines)]
    )
    if kind == "emulated":
        prefix = ctx.opt.netns_prefix or f"mw{secrets.token_hex(2)}"
        emu = emulation.Emulation(prefix, p.caps_mbit.model_dump(), scale=p.scale)
        layout = Layout(kind, [], [], [], emulation=emu)
        # Registered before anything is created, so teardown sees partial setups too.
        ctx.layout = layout
        for name, role in names:
            host = emu.add_host(name, role, ctx.out)
            getattr(layout, role + "s").append(host)
        return layout
    hosts = [LocalHost(name=n, role=r, address="127.0.0.1", base=ctx.out) for n, r in names]
    return Layout(
        kind,
        [h for h in hosts if h.role == "server"],
        [h for h in hosts if h.role == "middleware"],
        [h for h in hosts if h.role == "client"],
    )


def _check(ctx: Runner, layout: Layout) -> None:
    needed, jars = (
        _simplemq_needs(layout) if ctx.point.system == "simplemq" else _memcached_needs(ctx, layout)
    )
    if layout.kind != "local":
        needed["iperf3"] = layout.all
    missing = [
        f"{tool} on {h.name}" for tool, hosts in needed.items() for h in hosts if not h.has(tool)
    ]
    if missing:
        raise RunError("missing tools: " + ", ".join(missing))
    for jar in jars:
        ctx.jar(jar)
    if layout.kind == "local":
        ports = [ctx.server_port(i) for i in range(len(layout.servers))]
        ports += [ctx.middleware_port(i) for i in range(len(layout.middlewares))]
        busy = [str(port) for port in ports if not port_free(LOOPBACK, port)]
        if busy:
            raise RunError(f"ports already in use on {LOOPBACK}: {', '.join(busy)}")


def _memcached_needs(ctx: Runner, layout: Layout) -> tuple[dict[str, list[Host]], list[str]]:
    """The tools each host needs for a memcached point, and the jars of the run."""
    needed: dict[str, list[Host]] = {"memcached": layout.servers}
    if ctx.point.workload.populate and ctx.driver != "memaslap":
        needed["java"] = list(layout.servers)
    if layout.middlewares:
        needed.setdefault("java", []).extend(layout.middlewares)
    client_tool = {
        "memtier": "memtier_benchmark",
        "builtin": "java",
        "memaslap": drivers.memaslap_binary(),
    }[ctx.driver]
    needed.setdefault(client_tool, []).extend(layout.clients)
    jars = ["loadgen.jar"] if "java" in needed else []
    return needed, jars + (["middleware.jar"] if layout.middlewares else [])


def _simplemq_needs(layout: Layout) -> tuple[dict[str, list[Host]], list[str]]:
    """The tools each host needs for a SimpleMQ point, and its jar. PostgreSQL is checked on
    the server host (this machine for local and emulated hosts): its binaries, its version
    and, as root, the user that runs it."""
    try:
        pg_host(layout.servers[0]).check()
    except PostgresError as e:
        raise RunError(str(e)) from e
    return {"java": [*layout.middlewares, *layout.clients]}, ["simplemq.jar"]
