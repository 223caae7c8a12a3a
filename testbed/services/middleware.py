"""The two middlewares' command lines: the memcached middleware (build/middleware.jar) and
SimpleMQ's (build/simplemq.jar), and when SimpleMQ's is ready. The memcached middleware
answers `version` itself: `testbed.services.memcached` tells when it is ready."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.paths import BUILD
from testbed.hosts import Host, Proc

# SimpleMQ's default worker count is a point's: defined in testbed.point, named here too.
from testbed.point import DEFAULT_MQ_WORKERS as DEFAULT_MQ_WORKERS
from testbed.point import MiddlewareSettings
from testbed.services.ports import LOOPBACK, Pollable, wait_for_port

MIDDLEWARE_JAR = BUILD / "middleware.jar"
SIMPLEMQ_JAR = BUILD / "simplemq.jar"
# The design the middleware runs when given none.
DEFAULT_DESIGN = "2018"


def command_flags(
    servers: Sequence[str],
    *,
    workers: int,
    stats_dir: str,
    sharded: bool | None = None,
    read_balance: str | None = None,
    window_ms: int | None = None,
    design: str | None = None,
    replication: int | None = None,
    server_timeout_ms: int | None = None,
    max_batch: int | None = None,
    virtual_nodes: int | None = None,
) -> list[str]:
    """The memcached middleware's flags for its servers (HOST:PORT), in the one order every
    launch writes them; a setting left None is not passed, so the middleware's own default
    applies. The worker count is always passed: that default never decides a launch."""
    flags = ["--workers", str(workers)]
    if sharded is not None:
        flags += ["-s", "true" if sharded else "false"]
    flags += ["-m", *servers]
    flags += ["--stats-dir", stats_dir]
    if read_balance is not None:
        flags += ["--read-balance", read_balance]
    if window_ms is not None:
        flags += ["--stats-window-ms", str(window_ms)]
    if design is not None:
        flags += ["--design", design]
    if replication is not None:
        flags += ["--replication", str(replication)]
    if server_timeout_ms is not None:
        flags += ["--server-timeout-ms", str(server_timeout_ms)]
    if max_batch is not None:
        flags += ["--max-batch", str(max_batch)]
    if virtual_nodes is not None:
        flags += ["--virtual-nodes", str(virtual_nodes)]
    return flags


def middleware_flags(m: MiddlewareSettings, servers: list[str]) -> list[str]:
    """The middleware's flags for a point's settings and its servers (HOST:PORT), as a run
    launches it (statistics in `stats` of its working directory). The worker count is passed
    under the name the point gives it."""
    return command_flags(
        servers,
        workers=m.workers,
        sharded=m.sharded,
        stats_dir="stats",
        read_balance=m.read_balance,
        window_ms=m.window_ms,
        design=None if m.design == DEFAULT_DESIGN else m.design,
        replication=m.replication,
        server_timeout_ms=m.server_timeout_ms,
        max_batch=None if m.max_batch == 1 else m.max_batch,
    )


def middleware_command(
    jar: str | Path, address: str, port: int, flags: list[str], jvm: Sequence[str] = ()
) -> list[str]:
    """The memcached middleware listening on `address:port`; `jvm` are the JVM's options."""
    return ["java", *jvm, "-jar", str(jar), "-l", address, "-p", str(port), *flags]


def simplemq_command(
    jar: str | Path,
    port: int,
    workers: int,
    db_url: str,
    stats_dir: str = "stats",
    *,
    address: str | None = None,
    window_ms: int | None = None,
    jvm: Sequence[str] = (),
    extra: Sequence[str] = (),
) -> list[str]:
    """SimpleMQ's middleware on `address:port` (None: loopback, its default) over the
    database at `db_url` (a pgjdbc URL); the worker count is always passed. `window_ms`: its
    statistics' windows (None: its default); `jvm`: the JVM's options; `extra`: more options
    of the middleware's (a fault test's hold)."""
    command = ["java", *jvm, "-jar", str(jar), "middleware"]
    if address is not None:
        command += ["-l", address]
    command += ["-p", str(port), "--workers", str(workers), "--db", db_url,
                "--stats-dir", stats_dir]  # fmt: skip
    if window_ms is not None:
        command += ["--stats-window-ms", str(window_ms)]
    return command + list(extra)


def simplemq_client_command(jar: str | Path, flags: list[str]) -> list[str]:
    """SimpleMQ's client (its load generator) with `flags`."""
    return ["java", "-jar", str(jar), "client", *flags]


def start_simplemq(
    host: Host,
    port: int,
    workers: int,
    db_url: str,
    rel: str,
    instance: int = 0,
    extra: Sequence[str] = (),
    jvm: Sequence[str] = (),
) -> Proc:
    """SimpleMQ's middleware on `host`, in its working directory `rel`; not yet ready (see
    `wait_simplemq`). `extra`: more options of the middleware's; `jvm`: the JVM's options."""
    command = simplemq_command(
        host.stage(SIMPLEMQ_JAR), port, workers, db_url, jvm=jvm, extra=extra
    )
    return host.start(command, rel, "middleware", instance)


def wait_simplemq(
    port: int, proc: Pollable, timeout: float = 60.0, address: str = LOOPBACK
) -> None:
    """Blocks until SimpleMQ's middleware `proc` listens on `address:port`: it speaks its own
    frames, not memcached's, so listening is what ready means."""
    wait_for_port(address, port, timeout, proc)
