"""Hosts the testbed runs processes on: one interface, three kinds (local, namespace, ssh).

A host starts a process in a working directory relative to its base (stdout.log and
stderr.log land there), signals it, copies files in and out, and cleans up everything it
started. Local and namespace hosts share this machine's file system, so their base is the
run directory itself; ssh hosts work in a scratch directory on the remote machine. What runs
on a host, and when it is ready, is `testbed.services`' business.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

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

    def stop(self, grace_s: float) -> int | None:
        """SIGTERM, then SIGKILL if it has not ended within `grace_s`; its exit code."""
        self.signal(signal.SIGTERM)
        if self.wait(grace_s) is None:
            self.signal(signal.SIGKILL)
            return self.wait(2.0)
        return self.exit_code


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

    def ssh_args(self, script: str) -> list[str]:
        """The local command line that runs the shell `script` on the machine."""
        return ["ssh", *self.ssh_options, self.target, script]

    def run(
        self, script: str, timeout: float = 30.0, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Runs `script` on the machine (with `input` on its stdin) and waits for it."""
        try:
            return subprocess.run(
                self.ssh_args(script),
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
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
            self.ssh_args(script),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        proc = Proc(self, role, instance, command, rel, popen)
        self.procs.append(proc)
        return proc

    def pidfile(self, proc: Proc) -> str:
        """The remote file that holds the pid of `proc` (written as it starts)."""
        return f"{self.remote_base}/{proc.rel}/pid"

    def signal(self, proc: Proc, sig: int) -> None:
        pidfile = shlex.quote(self.pidfile(proc))
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
            self.ssh_args(f"mkdir -p {shlex.quote(self.remote_base + '/' + rel)} && cat > {path}"),
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
