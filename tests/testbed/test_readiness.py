"""Readiness: a server is ready when the process we started runs, owns the port and answers
the memcached protocol; whatever else may listen there does not count."""

from __future__ import annotations

import subprocess
import sys

import pytest

from testbed.hosts import HostError
from testbed.services.memcached import memcached_answers, memcached_command, wait_for_memcached
from testbed.services.ports import LOOPBACK

pytestmark = pytest.mark.timeout(120)


def plain_memcached(port: int) -> list[str]:
    """memcached on loopback, every other setting left to its own default."""
    return memcached_command(
        LOOPBACK, port, threads=None, memory_mib=None, disable_udp=False, connections=None
    )


# Listens on the port given and answers every connection with a line that is not memcached's.
NOT_MEMCACHED = """
import socket, sys
s = socket.create_server(("127.0.0.1", int(sys.argv[1])))
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.recv(100)
    c.sendall(b"HTTP/1.0 400 Bad Request\\r\\n\\r\\n")
    c.close()
"""


def test_another_server_on_the_port_is_not_our_memcached(memcached):
    # A second memcached on the fixture's port cannot bind it and exits; the first one's
    # answers must not make it look ready meanwhile.
    ours = subprocess.Popen(
        plain_memcached(memcached),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert memcached_answers(LOOPBACK, memcached)
        with pytest.raises(HostError, match="exited with"):
            wait_for_memcached(LOOPBACK, memcached, 60.0, ours)
    finally:
        ours.kill()
        ours.wait(30)


def test_a_listener_that_does_not_speak_memcached_is_not_ready(base_port):
    ours = subprocess.Popen(
        [sys.executable, "-c", NOT_MEMCACHED, str(base_port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert ours.stdout is not None and ours.stdout.readline() == "listening\n"
        assert not memcached_answers(LOOPBACK, base_port)
        # It accepts connections, but never answers `version` as memcached does.
        with pytest.raises(HostError, match="not answering memcached"):
            wait_for_memcached(LOOPBACK, base_port, 2.0, ours)
        assert ours.poll() is None
    finally:
        ours.kill()
        ours.wait(30)


def test_our_memcached_is_ready(base_port):
    ours = subprocess.Popen(
        plain_memcached(base_port),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_memcached(LOOPBACK, base_port, 60.0, ours)
        assert memcached_answers(LOOPBACK, base_port)
    finally:
        ours.terminate()
        ours.wait(30)
