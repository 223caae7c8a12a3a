"""Fixtures of the testbed suite: real memcached servers, ports 22000-23999, `mwt` namespaces."""

from __future__ import annotations

import itertools
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import emulation

REPO = Path(__file__).resolve().parents[2]
LOADGEN = REPO / "build" / "loadgen.jar"
# Each test takes a block of 50 ports; the suite's range is 22000-23999.
_PORT_BLOCKS = itertools.count(22000, 50)


@pytest.fixture
def base_port() -> int:
    port = next(_PORT_BLOCKS)
    assert port + 50 <= 24000, "the testbed suite ran out of its port range"
    return port


@pytest.fixture(scope="session")
def loadgen_jar() -> Path:
    if not LOADGEN.is_file():
        pytest.fail(f"{LOADGEN} is missing: run `make build` first")
    return LOADGEN


def _wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"memcached did not listen on {port}")


@pytest.fixture
def memcached(base_port: int) -> Iterator[int]:
    """A memcached server on 127.0.0.1; yields its port."""
    port = base_port
    proc = subprocess.Popen(
        ["memcached", "-l", "127.0.0.1", "-p", str(port), "-t", "1", "-m", "256", "-u", "root"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_port(port)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def memcached_stats(port: int) -> dict[str, int]:
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"stats\r\n")
        while not data.endswith(b"END\r\n"):
            data += s.recv(65536)
    return parse_stats(data.decode())


def parse_stats(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "STAT" and parts[2].isdigit():
            out[parts[1]] = int(parts[2])
    return out


@pytest.fixture
def netns_prefix() -> str:
    """A unique prefix for this test's namespaces and links; checked clean afterwards."""
    reason = emulation.available()
    if reason is not None:
        pytest.skip(f"emulated hosts unavailable: {reason}")
    return f"mwt{secrets.token_hex(2)}"


def no_leftovers(prefix: str) -> None:
    assert emulation.leftovers(prefix) == [], "namespaces or links left behind"


def processes_matching(pattern: str) -> list[str]:
    """Command lines of processes containing `pattern` (besides this check itself)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if pattern in line and "ps -eo" not in line]


def have(tool: str) -> bool:
    return shutil.which(tool) is not None or shutil.which(tool, path="/usr/sbin") is not None
