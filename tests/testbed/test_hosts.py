"""Readiness: a server is ready when the process we started runs, owns the port and answers
the memcached protocol; whatever else may listen there does not count."""

from __future__ import annotations

import subprocess
import sys

import pytest

from testbed.hosts import HostError, memcached_answers, wait_for_memcached

pytestmark = pytest.mark.timeout(120)

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
        ["memcached", "-l", "127.0.0.1", "-p", str(memcached), "-u", "root"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert memcached_answers("127.0.0.1", memcached)
        with pytest.raises(HostError, match="exited with"):
            wait_for_memcached("127.0.0.1", memcached, 60.0, ours)
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
        assert not memcached_answers("127.0.0.1", base_port)
        # It accepts connections, but never answers `version` as memcached does.
        with pytest.raises(HostError, match="not answering memcached"):
            wait_for_memcached("127.0.0.1", base_port, 2.0, ours)
        assert ours.poll() is None
    finally:
        ours.kill()
        ours.wait(30)


def test_our_memcached_is_ready(base_port):
    ours = subprocess.Popen(
        ["memcached", "-l", "127.0.0.1", "-p", str(base_port), "-u", "root"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_memcached("127.0.0.1", base_port, 60.0, ours)
        assert memcached_answers("127.0.0.1", base_port)
    finally:
        ours.terminate()
        ours.wait(30)
