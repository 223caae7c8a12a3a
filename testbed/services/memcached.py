"""memcached: its command line, its readiness and its statistics, on every kind of host.

Ready means: the process we started still runs and `address:port` answers `version` with
`VERSION ...`; for a process of this machine (local or in a namespace) the listening socket
must also be its own. The memcached middleware answers `version` itself, so the same check
tells when it is ready. An ssh host is probed from the remote machine, as the controller may
not reach its address.
"""

from __future__ import annotations

import os
import shlex
import socket
from collections.abc import Callable

from testbed.hosts import Host, Proc, SshHost
from testbed.services.ports import (
    Pollable,
    listening_pid,
    owns_listener,
    wait_on_ssh,
    wait_until,
)


def memcached_command(
    address: str,
    port: int,
    *,
    threads: int | None = 1,
    memory_mib: int | None = 1024,
    disable_udp: bool = True,
    connections: int | None = 4096,
) -> list[str]:
    """memcached on `address:port`; the defaults are a run's server (one thread as in the
    study, 1 GiB, TCP only, room for every connection a run opens). None leaves a setting to
    memcached's own default."""
    cmd = ["memcached", "-l", address, "-p", str(port)]
    if threads is not None:
        cmd += ["-t", str(threads)]
    if memory_mib is not None:
        cmd += ["-m", str(memory_mib)]
    if disable_udp:
        cmd += ["-U", "0"]
    if connections is not None:
        cmd += ["-c", str(connections)]
    # memcached refuses to run as root unless told which user to be.
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    return cmd


def memcached_answers(address: str, port: int, timeout: float = 2.0) -> bool:
    """Whether `address:port` answers `version` the way memcached does (`VERSION ...`)."""
    data = b""
    try:
        with socket.create_connection((address, port), timeout=timeout) as s:
            s.sendall(b"version\r\n")
            while b"\r\n" not in data and len(data) < 1024:
                chunk = s.recv(1024)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return False
    return data.startswith(b"VERSION ")


def wait_for_memcached(
    address: str,
    port: int,
    timeout: float,
    proc: Pollable,
    interrupt: Callable[[], None] | None = None,
    name: str | None = None,
) -> None:
    """Blocks until `proc` runs and `address:port` answers the memcached protocol; for a
    process of this machine, the listening socket must also be its own. Anything else
    listening there does not count, and `proc` exiting fails at once."""
    pid = listening_pid(proc)

    def ready(address: str, port: int) -> bool:
        return (pid is None or owns_listener(pid, port)) and memcached_answers(address, port)

    wait_until(address, port, timeout, proc, interrupt, ready, "answering memcached", name)


def wait_ready(
    host: Host,
    address: str,
    port: int,
    timeout: float,
    proc: Proc,
    interrupt: Callable[[], None] | None = None,
) -> None:
    """Blocks until `proc`, started on `host`, is ready on `address:port` (see the module's
    docstring). `interrupt` runs between attempts; it may raise."""
    if isinstance(host, SshHost):
        _wait_over_ssh(host, address, port, timeout, proc, interrupt)
    else:
        wait_for_memcached(address, port, timeout, proc, interrupt)


def _wait_over_ssh(
    host: SshHost,
    address: str,
    port: int,
    timeout: float,
    proc: Proc,
    interrupt: Callable[[], None] | None,
) -> None:
    probe = (
        f"exec 3<>/dev/tcp/{address}/{port} && printf 'version\\r\\n' >&3"
        " && IFS= read -r -t 2 line <&3 && [[ $line == 'VERSION '* ]]"
    )
    wait_on_ssh(host, proc, probe, address, port, timeout, interrupt, "answering memcached")


def memcached_stats(address: str, port: int, timeout: float = 30.0) -> str:
    """Sends `stats` and reads up to END."""
    data = b""
    with socket.create_connection((address, port), timeout=timeout) as s:
        s.sendall(b"stats\r\n")
        while not data.endswith(b"END\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.decode("ascii", "replace")


def stats_on(host: Host, address: str, port: int) -> str:
    """The `stats` output of the memcached server on `address:port`, read where `host` is
    (from the remote machine for an ssh host)."""
    if not isinstance(host, SshHost):
        return memcached_stats(address, port)
    script = (
        f"exec 3<>/dev/tcp/{address}/{port}; printf 'stats\\r\\nquit\\r\\n' >&3; timeout 5 cat <&3"
    )
    return host.run(f"bash -c {shlex.quote(script)}", timeout=20).stdout
