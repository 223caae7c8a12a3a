"""The services of a SimpleMQ run (a point of `system: simplemq`), in the order they start:
PostgreSQL on the server host, its preloaded messages, the middlewares, the clients (to the
middlewares, or straight to the database for the baseline), and the stop that ends the
measurement and keeps the database's counters. They take the places of the memcached
services' stages; layout, links, delays and budgets are the same stages for both systems.

The run directory gets, besides the clients' `clients/<host>.<i>/result.json` and the
middlewares' `middlewares/<host>/stats/`: `servers/<host>/` with PostgreSQL's logs, its
settings and `pg_stat_*` views (`stats/*.tsv`) and `counters.json` (COUNTERS)."""

from __future__ import annotations

import contextlib
import json
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from testbed import cpubudget
from testbed.drivers import Target
from testbed.hosts import Host, SshHost
from testbed.point import Point
from testbed.services.middleware import simplemq_client_command, simplemq_command
from testbed.services.ports import wait_listening
from testbed.services.postgres import PostgresError, PostgresServer
from testbed.services.simplemq import client_flags, preload_sql, prepare, primes
from testbed.stages.base import RunError, Stage

if TYPE_CHECKING:
    from testbed.run import Runner

JAR = "simplemq.jar"
COUNTERS = "counters.json"
# How long the database's sessions may take to end once their clients and middlewares have:
# a backend adds its counts to the statistics as it exits.
SESSIONS_GONE_S = 10.0
# An idle backend adds what it counted in its last second to pg_stat_* within 10 s
# (PostgreSQL's PGSTAT_IDLE_INTERVAL): after a warm-up, the counters are read this much later,
# so that the measurement's deltas hold none of the warm-up (251 of 1,456 inserts otherwise).
STATS_IDLE_FLUSH_S = 11.0


@dataclass
class Database:
    """The run's database and what the stages read from it on the way."""

    server: PostgresServer
    before: dict[str, dict[str, int]] | None = None
    waits: dict[str, int] | None = None
    sampler: subprocess.Popen[str] | None = field(default=None, repr=False)


def _database(ctx: Runner) -> Database:
    if ctx.database is None:
        raise RunError("the database is not up")
    return ctx.database


class DatabaseStage(Stage):
    """PostgreSQL on the one server host (this machine's namespace, or a remote machine over
    ssh), as an unprivileged user, with the schema and the point's pop procedure, the queue
    and every client registered."""

    name = "servers"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        host = layout.servers[0]
        p = ctx.point
        q = p.queue_settings
        rel = f"servers/{host.name}"
        # On real machines only the run's own hosts may connect; emulated and local hosts
        # live on loopback or the project's namespaces.
        clients = tuple(h.address for h in layout.all) if isinstance(host, SshHost) else ()
        server = PostgresServer(
            host, rel, ctx.server_port(0), p.db_max_connections, q.pop,
            commit_delay_us=round(q.commit_delay_ms * 1000), out=ctx.out / rel, clients=clients,
        )  # fmt: skip
        ctx.database = Database(server)
        server.admit(p.db_connections)
        server.start()
        assert server.proc is not None
        ctx.processes.append(server.proc)
        ctx.hook("servers")
        prepare(server, p.clients_total, p.queue_settings)
        ctx.servers = [Target(host.address, server.port)]

    def teardown(self, ctx: Runner) -> list[str]:
        db = ctx.database
        if db is None:
            return []
        problems = []
        if db.sampler is not None and db.sampler.poll() is None:
            with contextlib.suppress(Exception):  # on an ssh host, the remote psql
                db.server.place.stop(db.sampler)
            db.sampler.kill()
            db.sampler.wait(5)
        try:
            # Collection stopped it already; this removes its cluster (and stops it if not).
            db.server.stop()
        except Exception as e:
            problems.append(f"postgres: {e}")
        return problems


class PreloadStage(Stage):
    """The messages in the queue before the clients start (`queue.preload`)."""

    name = "populate"

    def setup(self, ctx: Runner) -> None:
        q = ctx.point.queue_settings
        if q.preload:
            _database(ctx).server.psql(preload_sql(ctx.point.clients_total, q), timeout=600.0)
        ctx.hook("populate")


class QueueMiddlewareStage(Stage):
    """SimpleMQ's middlewares, each with `queue.workers` database connections; none for the
    database baseline."""

    name = "middlewares"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        p = ctx.point
        ctx.frontends = []
        if not layout.middlewares:
            ctx.hook("middlewares")
            return
        url = _database(ctx).server.url
        budgeted = p.budgets_cores.middleware is not None
        jvm = list(cpubudget.BUDGETED_JVM_FLAGS) if budgeted else []
        jar = ctx.jar(JAR)
        procs, targets = [], []
        for i, host in enumerate(layout.middlewares):
            port = ctx.middleware_port(i)
            cmd = simplemq_command(
                host.stage(jar), port, p.queue_settings.workers, url,
                address=host.address, window_ms=p.middleware.window_ms, jvm=jvm,
            )  # fmt: skip
            procs.append(ctx.start(host, cmd, f"middlewares/{host.name}", "middleware", i))
            targets.append(Target(host.address, port))
        ctx.hook("middlewares")
        for host, proc, t in zip(layout.middlewares, procs, targets, strict=True):
            wait_listening(host, t.address, t.port, 60.0, proc, ctx.signals.check)
        ctx.frontends = targets


class QueueClientStage(Stage):
    """The closed-loop clients: `threads` x `virtual_clients` per process, ids 1 to
    `clients_total` over the run. Budgeted middlewares first serve an unmeasured warm-up."""

    name = "clients"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        p = ctx.point
        db = _database(ctx)
        if ctx.frontends:
            target = ["--middleware", ",".join(f"{t.address}:{t.port}" for t in ctx.frontends)]
        else:
            target = ["--db", db.server.url]
        per = p.threads * p.virtual_clients

        def command(host: Host, i: int, point: Point) -> list[str]:
            first = 1 + (layout.clients.index(host) * point.instances_per_client + i) * per
            flags = client_flags(point, first, per, target)
            return simplemq_client_command(host.stage(ctx.jar(JAR)), flags)

        if layout.middlewares and cpubudget.budget_of(p, "middleware") is not None:
            ctx.warm_up(layout, ctx.frontends, p, command=command)
            ctx.log(f"waiting {STATS_IDLE_FLUSH_S:g} s for the warm-up's database statistics")
            ctx.sleep(STATS_IDLE_FLUSH_S)

        def ready() -> None:
            # Clients straight to the database have primed their connections at the gate:
            # the counters start once those calls are in them.
            if primes(p):
                ctx.log(f"waiting {STATS_IDLE_FLUSH_S:g} s for the priming's database statistics")
                ctx.sleep(STATS_IDLE_FLUSH_S)
            db.before = db.server.counters()
            db.sampler = db.server.sample_waits()

        ctx.log(f"{p.clients_total} SimpleMQ clients for {p.duration_s} s")
        try:
            ctx.run_clients(layout, ctx.frontends, command=command, ready=ready)
        finally:
            sampler, db.sampler = db.sampler, None
            if sampler is not None:
                db.waits = db.server.waits(sampler)


class QueueStopStage(Stage):
    """Stops the middlewares (SIGTERM: they answer what they had read, then write their
    statistics), then reads the database's counters once its sessions have ended."""

    name = "stop"

    def setup(self, ctx: Runner) -> None:
        layout = ctx.layout
        assert layout is not None
        ctx.hook("stop")
        ctx.stop_middlewares(layout)
        db = _database(ctx)
        try:
            db.server.wait_sessions_gone(SESSIONS_GONE_S)
        except PostgresError as e:
            ctx.warn(f"{e}; the database's counters may miss their last transactions")
        write_counters(db, ctx.point.db_max_connections)
        db.server.snapshot()
        ctx.stop_link_delay()


def write_counters(db: Database, max_connections: int) -> None:
    """`counters.json`: the counters before the clients started and after the stop, what
    the clients' run added (`delta`, by part: `database`, each table, and `queue`, the exact
    messages held and sent), and what active backends were seen waiting on (`waits`,
    samples every 50 ms)."""
    after = db.server.counters()
    before = db.before or {}
    delta = {
        part: {k: v - before.get(part, {}).get(k, 0) for k, v in values.items()}
        for part, values in after.items()
    }
    doc: dict[str, Any] = {
        "pop": db.server.strategy,
        "max_connections": max_connections,
        "before": before,
        "after": after,
        "delta": delta,
        "waits": db.waits or {},
        "timings_s": db.server.timings,
    }
    (db.server.dir / COUNTERS).write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")
