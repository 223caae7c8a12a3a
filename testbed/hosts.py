"""Hosts the testbed runs processes on: one interface, three kinds (local, namespace, ssh).

A host starts a process in a working directory relative to its base (stdout.log and
stderr.log land there), signals it, copies files in and out, and cleans up everything it
started. Local and namespace hosts share this machine's file system, so their base is the
run directory itself; ssh hosts work in a scratch directory on the remote machine.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from testbed.cpubudget import HostCgroup


class HostError(RuntimeError):
    """A host could not do what was asked."""


@dataclass
class Proc:
    """A process started on a host."""

    host: Host
    role: str
    instance: int
    command: list[str]
    rel: str
    popen: subprocess.Popen[bytes]
    exit_code: int | None = None

    def poll(self) -> int | None:
        if self.exit_code is None:
            self.exit_code = self.popen.poll()
        return self.exit_code

    def wait(self, timeout: float) -> int | None:
        try:
            self.exit_code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.exit_code

    def signal(self, sig: int) -> None:
        if self.poll() is None:
            self.host.signal(self, sig)


@dataclass
class Host(ABC):
    """A machine of the topology."""

    name: str
    role: str
    address: str
    procs: list[Proc] = field(default_factory=list)

    @abstractmethod
    def start(self, command: list[str], rel: str, role: str, instance: int = 0) -> Proc:
        """Starts `command` in the working directory `rel`; output goes to its log files."""

    @abstractmethod
    def signal(self, proc: Proc, sig: int) -> None: ...

    @abstractmethod
    def stage(self, local: Path) -> str:
        """Makes a local file available on the host; returns its path there."""

    @abstractmethod
    def fetch(self, rel: str, dest: Path) -> None:
        """Copies the working directory `rel` into `dest` (a local directory)."""

    @abstractmethod
    def put_text(self, rel: str, name: str, text: str) -> str:
        """Writes a small file into the working directory `rel`; returns its path there."""

    @abstractmethod
    def has(self, tool: str) -> bool:
        """Whether an executable is on the host's PATH."""

    def wait_memcached(
        self,
        address: str,
        port: int,
        timeout: float,
        proc: Proc,
        interrupt: Callable[[], None] | None = None,
    ) -> None:
        """Blocks until `proc` is running and `address:port` answers the memcached protocol
        (as seen from the controller). `interrupt` runs between attempts; it may raise."""
        wait_for_memcached(address, port, timeout, proc, interrupt)

    def memcached_stats(self, address: str, port: int) -> str:
        """The `stats` output of a memcached server."""
        return memcached_stats(address, port)

    def stop_all(self, grace_s: float = 3.0) -> None:
        """SIGTERM every live process, then SIGKILL what is left after the grace period."""
        live = [p for p in self.procs if p.poll() is None]
        for p in live:
            with contextlib.suppress(Exception):
                p.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for p in live:
            if p.wait(max(0.0, deadline - time.monotonic())) is None:
                with contextlib.suppress(Exception):
                    p.signal(signal.SIGKILL)
                    p.wait(2.0)
        for p in live:
            # The local side (ssh client, ip netns exec) may survive its remote child.
            if p.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.popen.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.popen.wait(2.0)

    def cleanup(self) -> None:
        self.stop_all()


@dataclass
class LocalHost(Host):
    """Processes on this machine; `base` is where working directories live."""

    base: Path = Path()

    def _wrap(self, command: list[str]) -> list[str]:
        return command

    def start(self, command: list[str], rel: str, role: str, instance: int = 0) -> Proc:
        wd = self.base / rel
        wd.mkdir(parents=True, exist_ok=True)
        with (wd / "stdout.log").open("wb") as out, (wd / "stderr.log").open("wb") as err:
            try:
                popen = subprocess.Popen(
                    self._wrap(command),
                    cwd=wd,
                    stdout=out,
                    stderr=err,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            except OSError as e:
                raise HostError(f"{self.name}: cannot start {command[0]}: {e}") from e
        proc = Proc(self, role, instance, command, rel, popen)
        self.procs.append(proc)
        return proc

    def signal(self, proc: Proc, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.popen.pid, sig)

    def stage(self, local: Path) -> str:
        return str(local.resolve())

    def fetch(self, rel: str, dest: Path) -> None:
        src = self.base / rel
        if src.resolve() != dest.resolve() and src.exists():
            shutil.copytree(src, dest, dirs_exist_ok=True)

    def put_text(self, rel: str, name: str, text: str) -> str:
        wd = self.base / rel
        wd.mkdir(parents=True, exist_ok=True)
        (wd / name).write_text(text)
        return str((wd / name).resolve())

    def has(self, tool: str) -> bool:
        return (
            shutil.which(tool) is not None or shutil.which(tool, path="/usr/sbin:/sbin") is not None
        )


@dataclass
class NamespaceHost(LocalHost):
    """A process host inside a network namespace of this machine (same file system)."""

    netns: str = ""
    # The host's CPU budget and accounting, if it has one (see testbed.cpubudget).
    cgroup: HostCgroup | None = None

    def _wrap(self, command: list[str]) -> list[str]:
        # `ip netns exec` execs the command, so the pid we hold is the command's own.
        inside = ["ip", "netns", "exec", self.netns, *command]
        # Joined outside: `ip netns exec` mounts a fresh /sys, without the cgroup file system.
        return self.cgroup.wrap(inside) if self.cgroup is not None else inside


@dataclass
class SshHost(Host):
    """A remote machine reached with the system's ssh client."""

    target: str = ""
    ssh_options: list[str] = field(default_factory=list)
    remote_base: str = "/tmp/mwlab"
    _staged: dict[str, str] = field(default_factory=dict)

    def _ssh(self, script: str) -> list[str]:
        return ["ssh", *self.ssh_options, self.target, script]

    def run(self, script: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                self._ssh(script), capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as e:
            raise HostError(f"{self.name}: ssh {self.target} timed out after {timeout} s") from e

    def _scp(self, args: list[str], timeout: float = 120.0) -> None:
        # scp takes the port as -P; translate the ssh options that differ.
        opts: list[str] = []
        it = iter(self.ssh_options)
        for o in it:
            if o == "-p":
                opts += ["-P", next(it)]
            else:
                opts.append(o)
        proc = subprocess.run(
            ["scp", "-q", "-r", *opts, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise HostError(f"{self.name}: scp {' '.join(args)} failed: {proc.stderr.strip()}")

    def check(self) -> None:
        proc = self.run(f"mkdir -p {shlex.quote(self.remote_base)} && echo ok", timeout=20)
        if proc.returncode != 0 or "ok" not in proc.stdout:
            raise HostError(
                f"{self.name}: cannot reach {self.target} over ssh: {proc.stderr.strip()}"
            )

    def start(self, command: list[str], rel: str, role: str, instance: int = 0) -> Proc:
        wd = f"{self.remote_base}/{rel}"
        cmd = shlex.join(command)
        script = (
            f"mkdir -p {shlex.quote(wd)} && cd {shlex.quote(wd)} && "
            f"{{ {cmd} > stdout.log 2> stderr.log < /dev/null & echo $! > pid; wait $!; }}"
        )
        popen = subprocess.Popen(
            self._ssh(script),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        proc = Proc(self, role, instance, command, rel, popen)
        self.procs.append(proc)
        return proc

    def signal(self, proc: Proc, sig: int) -> None:
        pidfile = shlex.quote(f"{self.remote_base}/{proc.rel}/pid")
        name = signal.Signals(sig).name.removeprefix("SIG")
        self.run(
            f"for i in $(seq 50); do [ -s {pidfile} ] && break; sleep 0.1; done; "
            f"kill -{name} $(cat {pidfile}) 2>/dev/null; true",
            timeout=20,
        )

    def stage(self, local: Path) -> str:
        key = str(local.resolve())
        if key not in self._staged:
            remote = f"{self.remote_base}/staged/{local.name}"
            self.run(f"mkdir -p {shlex.quote(self.remote_base)}/staged")
            self._scp([key, f"{self.target}:{remote}"])
            self._staged[key] = remote
        return self._staged[key]

    def fetch(self, rel: str, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        self._scp([f"{self.target}:{self.remote_base}/{rel}/.", str(dest)])
        (dest / "pid").unlink(missing_ok=True)

    def put_text(self, rel: str, name: str, text: str) -> str:
        path = f"{self.remote_base}/{rel}/{name}"
        proc = subprocess.run(
            self._ssh(f"mkdir -p {shlex.quote(self.remote_base + '/' + rel)} && cat > {path}"),
            input=text,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if proc.returncode != 0:
            raise HostError(f"{self.name}: cannot write {path}: {proc.stderr.strip()}")
        return path

    def has(self, tool: str) -> bool:
        q = shlex.quote(tool)
        proc = self.run(f"command -v {q} || test -x /usr/sbin/{q}")
        return proc.returncode == 0

    def wait_memcached(
        self,
        address: str,
        port: int,
        timeout: float,
        proc: Proc,
        interrupt: Callable[[], None] | None = None,
    ) -> None:
        # Probed from the remote machine (the controller may not see private addresses), in
        # rounds of about two seconds so `interrupt` gets its turn.
        pidfile = shlex.quote(f"{self.remote_base}/{proc.rel}/pid")
        probe = (
            f"exec 3<>/dev/tcp/{address}/{port} && printf 'version\\r\\n' >&3"
            " && IFS= read -r -t 2 line <&3 && [[ $line == 'VERSION '* ]]"
        )
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
                    f"{self.name}: {proc.command[0]} exited with {proc.exit_code} before "
                    f"answering on {address}:{port}"
                )
            code = self.run(f"bash -c {shlex.quote(script)}", timeout=60).returncode
            if code == 0:
                return
            if code == 3:
                raise HostError(
                    f"{self.name}: {proc.command[0]} exited before answering on {address}:{port}"
                )
            if time.monotonic() > deadline:
                raise HostError(
                    f"{self.name}: no memcached answer on {address}:{port} after {timeout} s"
                )

    def memcached_stats(self, address: str, port: int) -> str:
        script = (
            f"exec 3<>/dev/tcp/{address}/{port}; printf 'stats\\r\\nquit\\r\\n' >&3; "
            "timeout 5 cat <&3"
        )
        return self.run(f"bash -c {shlex.quote(script)}", timeout=20).stdout

    def cleanup(self) -> None:
        base = shlex.quote(self.remote_base)
        with contextlib.suppress(HostError):
            # Anything still running remotely (the ssh client may have died first) is killed.
            self.run(
                f"for f in $(find {base} -name pid 2>/dev/null); do "
                f"kill -KILL $(cat $f) 2>/dev/null; done; true",
                timeout=20,
            )
        self.stop_all(grace_s=0.5)
        with contextlib.suppress(HostError):
            self.run(f"rm -rf {base}", timeout=20)


class Pollable(Protocol):
    """A started process: `Proc` or `subprocess.Popen`."""

    def poll(self) -> int | None: ...


def _describe(proc: Pollable) -> str:
    if isinstance(proc, Proc):
        return f"{proc.host.name}: {proc.command[0]}"
    args = getattr(proc, "args", None)
    return str(args[0] if isinstance(args, list | tuple) and args else args or "the process")


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


def wait_for_memcached(
    address: str,
    port: int,
    timeout: float,
    proc: Pollable,
    interrupt: Callable[[], None] | None = None,
) -> None:
    """Blocks until `proc` runs and `address:port` answers the memcached protocol; for a
    process of this machine, the listening socket must also be its own. Anything else
    listening there does not count, and `proc` exiting fails at once."""
    pid = listening_pid(proc)

    def ready(address: str, port: int) -> bool:
        return (pid is None or owns_listener(pid, port)) and memcached_answers(address, port)

    _wait_until(address, port, timeout, proc, interrupt, ready, "answering memcached")


def wait_for_port(
    address: str,
    port: int,
    timeout: float,
    proc: Pollable,
    interrupt: Callable[[], None] | None = None,
) -> None:
    """Blocks until `proc` runs and `address:port` accepts TCP connections (for services that
    do not speak memcached, e.g. sshd)."""

    def accepts(address: str, port: int) -> bool:
        try:
            with socket.create_connection((address, port), timeout=2.0):
                return True
        except OSError:
            return False

    _wait_until(address, port, timeout, proc, interrupt, accepts, "listening")


def _wait_until(
    address: str,
    port: int,
    timeout: float,
    proc: Pollable,
    interrupt: Callable[[], None] | None,
    ready: Callable[[str, int], bool],
    what: str,
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if interrupt is not None:
            interrupt()
        # Alive before and after the probe: an answer from a process that then turns out to
        # have exited (e.g. it could not bind the port) is someone else's.
        if proc.poll() is None and ready(address, port) and proc.poll() is None:
            return
        if proc.poll() is not None:
            raise HostError(
                f"{_describe(proc)} exited with {proc.poll()} before {what} on {address}:{port}"
            )
        if time.monotonic() > deadline:
            raise HostError(f"{_describe(proc)}: not {what} on {address}:{port} after {timeout} s")
        time.sleep(0.05)


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


def port_free(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True
