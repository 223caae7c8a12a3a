"""Ports: whether one is free, free ones to use, and the wait until a process we started is
ready on its port (`wait_until`, with a probe; `wait_for_port` when accepting a connection is
all a service shows, memcached's own probe is in `testbed.services.memcached`). On an ssh
host the probe runs on the remote machine (`wait_on_ssh`, `wait_listening`): the controller
may not reach the addresses the machines use among themselves (an Azure VM's private one)."""

from __future__ import annotations

import contextlib
import shlex
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from testbed.hosts import Host, HostError, LocalHost, Proc, SshHost

LOOPBACK = "127.0.0.1"

# Whether `address:port` is ready, as a probe sees it.
Probe = Callable[[str, int], bool]


class Pollable(Protocol):
    """A started process: `Proc` or `subprocess.Popen`."""

    def poll(self) -> int | None: ...


def port_free(address: str, port: int) -> bool:
    """Whether `address:port` can be bound now. With SO_REUSEADDR, as memcached and the JVM
    bind: a port whose old connections linger in TIME_WAIT is free for them too."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def free_port(address: str = LOOPBACK) -> int:
    """A port the kernel reports free on `address` now."""
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def free_ports(base: int, n: int, span: int = 100, address: str = LOOPBACK) -> list[int]:
    """The first `n` free ports of [base, base + span): a caller's own range of ports."""
    ports = [p for p in range(base, base + span) if port_free(address, p)][:n]
    if len(ports) < n:
        raise HostError(f"fewer than {n} free ports in {base}..{base + span - 1}")
    return ports


def accepts(address: str, port: int, timeout: float = 2.0) -> bool:
    """Whether `address:port` accepts a TCP connection."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def describe(proc: Pollable) -> str:
    """A process as error messages name it: its host and command, or its command."""
    if isinstance(proc, Proc):
        return f"{proc.host.name}: {proc.command[0]}"
    args = getattr(proc, "args", None)
    return str(args[0] if isinstance(args, list | tuple) and args else args or "the process")


def listening_pid(proc: Pollable) -> int | None:
    """The pid of a process of this machine (local or in a namespace of it), else None."""
    if isinstance(proc, Proc):
        return proc.popen.pid if isinstance(proc.host, LocalHost) else None
    pid = getattr(proc, "pid", None)
    return pid if isinstance(pid, int) else None


def owns_listener(pid: int, port: int) -> bool:
    """Whether process `pid` holds a TCP socket listening on `port` (in its own network
    namespace): the socket's inode is among the process's open files."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # local address "ADDR:PORT" in hex; state 0A is LISTEN
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if str(fd.readlink()) in inodes:
                return True
    return False


def wait_until(
    address: str,
    port: int,
    timeout: float,
    proc: Pollable,
    interrupt: Callable[[], None] | None,
    ready: Probe,
    what: str,
    name: str | None = None,
) -> None:
    """Blocks until `proc` runs and `ready(address, port)`; `proc` exiting fails at once.
    `interrupt` runs between attempts and may raise; `what` is the readiness in messages,
    `name` the process (default: its command)."""
    who = name or describe(proc)
    deadline = time.monotonic() + timeout
    while True:
        if interrupt is not None:
            interrupt()
        # Alive before and after the probe: an answer from a process that then turns out to
        # have exited (e.g. it could not bind the port) is someone else's.
        if proc.poll() is None and ready(address, port) and proc.poll() is None:
            return
        if proc.poll() is not None:
            raise HostError(f"{who} exited with {proc.poll()} before {what} on {address}:{port}")
        if time.monotonic() > deadline:
            raise HostError(f"{who}: not {what} on {address}:{port} after {timeout} s")
        time.sleep(0.05)


def wait_for_port(
    address: str,
    port: int,
    timeout: float,
    proc: Pollable,
    interrupt: Callable[[], None] | None = None,
    name: str | None = None,
) -> None:
    """Blocks until `proc` runs and `address:port` accepts TCP connections (for services that
    do not speak memcached, e.g. sshd, PostgreSQL, SimpleMQ)."""
    wait_until(address, port, timeout, proc, interrupt, accepts, "listening", name)


def wait_on_ssh(
    host: SshHost,
    proc: Proc,
    probe: str,
    address: str,
    port: int,
    timeout: float,
    interrupt: Callable[[], None] | None,
    what: str,
) -> None:
    """Blocks until `proc`, started on the ssh host, runs and the bash command `probe`
    succeeds on the remote machine; `proc` exiting fails at once. Probed in rounds of about
    two seconds, so that `interrupt` gets its turn; `what` names the readiness in messages."""
    pidfile = shlex.quote(host.pidfile(proc))
    script = (
        "for i in $(seq 20); do "
        f"if [ -s {pidfile} ] && ! kill -0 $(cat {pidfile}) 2>/dev/null; then exit 3; fi; "
        f"( {probe} ) 2>/dev/null && exit 0; sleep 0.1; done; exit 1"
    )
    deadline = time.monotonic() + timeout
    while True:
        if interrupt is not None:
            interrupt()
        if proc.poll() is not None:
            raise HostError(
                f"{host.name}: {proc.command[0]} exited with {proc.exit_code} before "
                f"{what} on {address}:{port}"
            )
        code = host.run(f"bash -c {shlex.quote(script)}", timeout=60).returncode
        if code == 0:
            return
        if code == 3:
            raise HostError(
                f"{host.name}: {proc.command[0]} exited before {what} on {address}:{port}"
            )
        if time.monotonic() > deadline:
            raise HostError(f"{host.name}: not {what} on {address}:{port} after {timeout} s")


def wait_listening(
    host: Host,
    address: str,
    port: int,
    timeout: float,
    proc: Proc,
    interrupt: Callable[[], None] | None = None,
) -> None:
    """Blocks until `proc`, started on `host`, runs and `address:port` accepts connections,
    as seen from `host`'s machine (`wait_for_port` on local and emulated hosts)."""
    if not isinstance(host, SshHost):
        wait_for_port(address, port, timeout, proc, interrupt)
        return
    probe = f"exec 3<>/dev/tcp/{address}/{port}"
    wait_on_ssh(host, proc, probe, address, port, timeout, interrupt, "listening")
