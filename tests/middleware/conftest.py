"""Fixtures: real memcached servers and the built middleware jar on ports 25000-25499."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testbed.hosts import wait_for_memcached

ROOT = Path(__file__).resolve().parents[2]
JAR = ROOT / "build" / "middleware.jar"
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
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"port range {PORTS.start}-{PORTS.stop - 1} exhausted")


def stop(p: subprocess.Popen[bytes]) -> int:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


@dataclass
class Deployment:
    port: int
    servers: list[int]
    stats_dir: Path
    process: subprocess.Popen[bytes]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

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
    procs = []
    for port in servers:
        cmd = ["memcached", "-p", str(port), "-U", "0", "-t", "1", "-l", "127.0.0.1"]
        if os.geteuid() == 0:
            cmd += ["-u", "root"]
        procs.append(subprocess.Popen(cmd))
    mw = None
    try:
        # Ready means: our process runs and answers the memcached protocol.
        for port, proc in zip(servers, procs, strict=True):
            wait_for_memcached("127.0.0.1", port, 60.0, proc)
        port = free_port()
        stats = tmp_path / "stats"
        cmd = ["java", "-jar", str(JAR), "-l", "127.0.0.1", "-p", str(port), "-t", "4"]
        cmd += ["-s", "true", "--design", design]
        max_batch: int = request.config.getoption("--mw-max-batch")
        if max_batch > 1 and design == "2018":
            cmd += ["--max-batch", str(max_batch)]
        cmd += ["--server-timeout-ms", str(SERVER_TIMEOUT_MS)]
        cmd += ["--stats-dir", str(stats), "-m", *[f"127.0.0.1:{p}" for p in servers]]
        mw = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        wait_for_memcached("127.0.0.1", port, 60.0, mw)
        yield Deployment(port, servers, stats, mw)
    finally:
        if mw is not None:
            stop(mw)
        for p in procs:
            stop(p)
