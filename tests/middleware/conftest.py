"""Fixtures: real memcached servers and the built middleware jar on ports 25000-25499."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testbed.services.local import spawn, terminate
from testbed.services.memcached import memcached_command, wait_for_memcached
from testbed.services.middleware import MIDDLEWARE_JAR as JAR
from testbed.services.middleware import command_flags, middleware_command
from testbed.services.ports import LOOPBACK, port_free

PORTS = range(25000, 25500)
_next_port = iter(PORTS)
# Healthy paths only here: a slow moment of a loaded machine must not look like a failed
# server to the middleware (its own default is 1 s).
SERVER_TIMEOUT_MS = 60_000


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--mw-max-batch",
        type=int,
        default=1,
        help="start every design-2018 middleware with --max-batch N (batching workers)",
    )


def free_port() -> int:
    for port in _next_port:
        if port_free(LOOPBACK, port):
            return port
    raise RuntimeError(f"port range {PORTS.start}-{PORTS.stop - 1} exhausted")


def stop(p: subprocess.Popen[bytes]) -> int:
    return terminate(p, 60)


@dataclass
class Deployment:
    port: int
    servers: list[int]
    stats_dir: Path
    process: subprocess.Popen[bytes]
    max_batch: int | None  # --max-batch of its workers; None: one request per turn

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def terminate(self) -> int:
        """SIGTERM the middleware; returns its exit status."""
        return stop(self.process)


@pytest.fixture
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    """Two memcached servers behind a sharded middleware with replication 2, in design 2018
    unless a test parametrizes the fixture (indirect) with another --design value."""
    design: str = getattr(request, "param", "2018")
    if not JAR.exists():
        pytest.fail(f"{JAR} is missing: run `make build` first")
    for tool in ("memcached", "java"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed")
    servers = [free_port(), free_port()]
    procs = [
        spawn(memcached_command(LOOPBACK, port, memory_mib=None, connections=None))
        for port in servers
    ]
    mw = None
    try:
        # Ready means: our process runs and answers the memcached protocol.
        for port, proc in zip(servers, procs, strict=True):
            wait_for_memcached(LOOPBACK, port, 60.0, proc)
        port = free_port()
        stats = tmp_path / "stats"
        option: int = request.config.getoption("--mw-max-batch")
        max_batch = option if option > 1 and design == "2018" else None
        flags = command_flags(
            [f"{LOOPBACK}:{p}" for p in servers],
            workers=4,
            sharded=True,
            stats_dir=str(stats),
            design=design,
            server_timeout_ms=SERVER_TIMEOUT_MS,
            max_batch=max_batch,
        )
        mw = spawn(middleware_command(JAR, LOOPBACK, port, flags))
        wait_for_memcached(LOOPBACK, port, 60.0, mw)
        yield Deployment(port, servers, stats, mw, max_batch)
    finally:
        if mw is not None:
            stop(mw)
        for p in procs:
            stop(p)
