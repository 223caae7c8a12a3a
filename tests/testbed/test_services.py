"""The services' command lines, written once (testbed/services/): a run records them in run.json,
so their flags and the order of their flags are pinned here; and the port checks' verdicts.
No process is started."""

from __future__ import annotations

import os
import socket

import pytest

from testbed.hosts import HostError
from testbed.point import DEFAULT_WORKERS, MiddlewareSettings
from testbed.services.memcached import memcached_command
from testbed.services.middleware import (
    command_flags,
    middleware_command,
    middleware_flags,
    simplemq_client_command,
    simplemq_command,
)
from testbed.services.ports import LOOPBACK, free_port, free_ports, port_free, wait_for_port

ROOT_USER = ["-u", "root"] if os.geteuid() == 0 else []


def test_a_runs_server_is_one_thread_one_gib_tcp_only() -> None:
    assert memcached_command("10.0.0.2", 21000) == [
        *("memcached", "-l", "10.0.0.2", "-p", "21000", "-t", "1", "-m", "1024"),
        *("-U", "0", "-c", "4096", *ROOT_USER),
    ]


def test_a_memcached_setting_left_none_is_memcacheds_own() -> None:
    plain = memcached_command(
        LOOPBACK, 1, threads=None, memory_mib=None, disable_udp=False, connections=None
    )
    assert plain == ["memcached", "-l", LOOPBACK, "-p", "1", *ROOT_USER]


def test_a_points_middleware_command_line() -> None:
    m = MiddlewareSettings(
        design="2016", workers=3, sharded=True, replication=2, server_timeout_ms=500
    )
    flags = middleware_flags(m, ["10.0.0.2:21000", "10.0.0.4:21001"])
    assert middleware_command("/b/mw.jar", "10.0.0.3", 21100, flags, ["-Xmx1g"]) == [
        *("java", "-Xmx1g", "-jar", "/b/mw.jar", "-l", "10.0.0.3", "-p", "21100"),
        *("--workers", "3", "-s", "true", "-m", "10.0.0.2:21000", "10.0.0.4:21001"),
        *("--stats-dir", "stats", "--read-balance", "round-robin", "--stats-window-ms", "1000"),
        *("--design", "2016", "--replication", "2", "--server-timeout-ms", "500"),
    ]
    # The middleware's default design and one request per turn are not passed.
    assert middleware_flags(MiddlewareSettings(), ["s:1"]) == [
        *("--workers", str(DEFAULT_WORKERS), "-s", "false", "-m", "s:1"),
        *("--stats-dir", "stats", "--read-balance", "round-robin", "--stats-window-ms", "1000"),
    ]
    batching = middleware_flags(MiddlewareSettings(max_batch=4), ["s:1"])
    assert batching[-2:] == ["--max-batch", "4"]


def test_other_launches_pass_what_they_set_in_the_same_order() -> None:
    assert command_flags(["s:1"], workers=2, stats_dir="d") == [
        *("--workers", "2", "-m", "s:1", "--stats-dir", "d"),
    ]
    every = command_flags(
        ["s:1", "s:2"],
        workers=4,
        stats_dir="d",
        sharded=False,
        read_balance="least-outstanding",
        window_ms=250,
        design="2018",
        replication=1,
        server_timeout_ms=60000,
        max_batch=16,
        virtual_nodes=100,
    )
    assert every == [
        *("--workers", "4", "-s", "false", "-m", "s:1", "s:2", "--stats-dir", "d"),
        *("--read-balance", "least-outstanding", "--stats-window-ms", "250", "--design", "2018"),
        *("--replication", "1", "--server-timeout-ms", "60000", "--max-batch", "16"),
        *("--virtual-nodes", "100"),
    ]


def test_simplemq_command_lines() -> None:
    assert simplemq_command("/b/mq.jar", 7000, 16, "jdbc:postgresql://h:1/simplemq") == [
        *("java", "-jar", "/b/mq.jar", "middleware", "-p", "7000", "--workers", "16"),
        *("--db", "jdbc:postgresql://h:1/simplemq", "--stats-dir", "stats"),
    ]
    assert simplemq_client_command("/b/mq.jar", ["--clients", "2"]) == [
        *("java", "-jar", "/b/mq.jar", "client", "--clients", "2"),
    ]


class Exited:
    """A process that has exited with status 3."""

    def poll(self) -> int | None:
        return 3


def test_a_bound_port_is_not_free_and_a_range_without_one_fails() -> None:
    port = free_port()
    with socket.create_server((LOOPBACK, port)):
        assert not port_free(LOOPBACK, port)
        with pytest.raises(HostError, match=f"fewer than 1 free ports in {port}..{port}"):
            free_ports(port, 1, span=1)
        # A process that exited is never ready, even with something listening on its port.
        with pytest.raises(HostError, match="the middleware exited with 3 before listening"):
            wait_for_port(LOOPBACK, port, 5.0, Exited(), name="the middleware")
