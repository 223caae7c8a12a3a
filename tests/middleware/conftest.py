"""Fixtures: real memcached servers and the built middleware jar on ports 21700-21799."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JAR = ROOT / "build" / "middleware.jar"
_next_port = iter(range(21700, 21800))


def free_port() -> int:
    for port in _next_port:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("port range 21700-21799 exhausted")


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def stop(p: subprocess.Popen[bytes]) -> int:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=15)
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
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    """Two memcached servers behind a sharded middleware with replication 2."""
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
    for port in servers:
        wait_port(port)
    port = free_port()
    stats = tmp_path / "stats"
    cmd = ["java", "-jar", str(JAR), "-p", str(port), "-t", "4", "-s", "true"]
    cmd += ["--stats-dir", str(stats), "-m", *[f"127.0.0.1:{p}" for p in servers]]
    mw = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield Deployment(port, servers, stats, mw)
    finally:
        stop(mw)
        for p in procs:
            stop(p)
