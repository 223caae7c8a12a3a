"""Where a run's PostgreSQL runs, and as whom: this machine (local and emulated hosts, which
share its file system) or an ssh host's machine.

PostgreSQL refuses to run as root. As root, every PostgreSQL command runs as the unprivileged
system user `mwlab-pg` under `setpriv`, which executes the command itself, so a signal to the
process started is a signal to PostgreSQL (`make setup` creates the user here; on a remote
machine where ssh logs in as root it must exist there too). Any other user runs PostgreSQL
itself, as on a provisioned VM where ssh logs in as `mwlab`.

On this machine the cluster lives in a temporary directory of its own (a run's directory may
not be open to `mwlab-pg`) and the harness reaches the server over a socket there. On an ssh
host it lives in the run's scratch directory, which the host's cleanup removes whatever
happened, and the harness reaches it over TCP on the host's address from the machine itself
(a socket path in a scratch directory may exceed the kernel's 107 bytes).
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import subprocess
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from testbed.hosts import Host, HostError, LocalHost, Proc, SshHost
from testbed.services.ports import wait_for_port, wait_listening
from testbed.tools import TOOLS, tool_path

USER = "mwlab-pg"
# pg_stat_wal and track_wal_io_timing, which every run records, arrived in PostgreSQL 14.
MIN_MAJOR = 14
# Where an ssh host's PostgreSQL binaries are looked for, in order: initdb on PATH (where
# it links to: a link alone may sit among none of the others), the newest
# /usr/lib/postgresql/<major>/bin (Debian, Ubuntu), then `pg_config --bindir`.
REMOTE_BINDIR = (
    'p=$(command -v initdb) && { dirname "$(readlink -f "$p")"; exit 0; }; '
    "for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) "
    '"$(pg_config --bindir 2>/dev/null)"; do '
    '[ -n "$d" ] && [ -x "$d/initdb" ] && { echo "$d"; exit 0; }; done; exit 1'
)
_VERSION = re.compile(r"\(PostgreSQL\) (\d+)")


class PostgresError(HostError):
    """PostgreSQL could not be set up, started or stopped."""


def bindir() -> Path:
    """This machine's directory of initdb, postgres and psql (`mwlab tools` finds it: on PATH
    under Nix, /usr/lib/postgresql/<major>/bin on Debian)."""
    found = tool_path(next(t for t in TOOLS if t.name == "initdb"))
    if found is None:
        raise PostgresError("no PostgreSQL server (initdb): `make setup` installs postgresql-15")
    return Path(found).resolve().parent


def _setpriv() -> list[str]:
    return ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups", "--"]


def _major(version: str, where: str) -> int:
    """The major version in `initdb --version`'s line; refuses one older than MIN_MAJOR."""
    m = _VERSION.search(version)
    if m is None:
        raise PostgresError(f"{where}: cannot read PostgreSQL's version from {version.strip()!r}")
    major = int(m.group(1))
    if major < MIN_MAJOR:
        raise PostgresError(
            f"{where}: PostgreSQL {major}; SimpleMQ's runs need {MIN_MAJOR} or newer"
        )
    return major


@dataclass
class PgHost(ABC):
    """PostgreSQL's side of a host: its binaries, the user that runs them, commands run as
    that user, and the cluster's directory."""

    host: Host

    @abstractmethod
    def check(self) -> int:
        """Finds the binaries (and, as root, the user); PostgreSQL's major version. Raises
        PostgresError saying what is missing."""

    @abstractmethod
    def bin(self, name: str) -> str:
        """The path of a PostgreSQL binary on the host."""

    @abstractmethod
    def as_user(self) -> list[str]:
        """The prefix that runs a command as PostgreSQL's user."""

    @abstractmethod
    def run(
        self, command: list[str], timeout: float, script: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Runs `command` as PostgreSQL's user on the host, `script` on its stdin."""

    @abstractmethod
    def popen(self, command: list[str]) -> subprocess.Popen[str]:
        """Starts `command` as PostgreSQL's user on the host, with pipes for stdin and stdout
        (stopped by terminating it)."""

    @abstractmethod
    def stop(self, proc: subprocess.Popen[str]) -> None:
        """Asks a process of `popen` to end (SIGTERM); its output can then be read to EOF."""

    @abstractmethod
    def new_cluster(self) -> Path:
        """An empty directory for the cluster, writable by PostgreSQL's user."""

    @abstractmethod
    def append(self, path: Path, text: str) -> None:
        """Appends `text` to a file of the cluster."""

    @abstractmethod
    def remove(self, path: Path) -> None:
        """Removes the cluster's directory."""

    @abstractmethod
    def socket_dir(self, cluster: Path) -> Path | None:
        """Where the server's socket is (None: none; the harness connects over TCP)."""

    @abstractmethod
    def wait_listening(self, port: int, timeout: float, proc: Proc) -> None:
        """Blocks until the server `proc` listens on the host's address and `port`."""


def pg_host(host: Host) -> PgHost:
    """PostgreSQL's side of `host`."""
    if isinstance(host, SshHost):
        return RemotePg(host)
    if isinstance(host, LocalHost):
        return LocalPg(host)
    raise PostgresError(f"{host.name}: PostgreSQL does not run on {type(host).__name__}")


@dataclass
class LocalPg(PgHost):
    """This machine (a local host, or an emulated one: a namespace of this machine)."""

    def check(self) -> int:
        self.as_user()
        where = "this machine"
        return _major(self._run_plain([self.bin("initdb"), "--version"]), where)

    @staticmethod
    def _run_plain(command: list[str]) -> str:
        return subprocess.run(
            command, capture_output=True, text=True, timeout=30, check=False
        ).stdout

    def bin(self, name: str) -> str:
        return str(bindir() / name)

    def as_user(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        try:
            pwd.getpwnam(USER)
        except KeyError:
            raise PostgresError(
                f"no user {USER!r}: PostgreSQL refuses to run as root (`make setup` creates it)"
            ) from None
        return _setpriv()

    def run(
        self, command: list[str], timeout: float, script: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.as_user(), *command],
            input=script,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def popen(self, command: list[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*self.as_user(), *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def stop(self, proc: subprocess.Popen[str]) -> None:
        proc.terminate()

    def new_cluster(self) -> Path:
        cluster = Path(tempfile.mkdtemp(prefix="mwlab-pg-"))
        (cluster / "socket").mkdir()
        if os.geteuid() == 0:
            owner = pwd.getpwnam(USER)
            for d in (cluster, cluster / "socket"):
                os.chown(d, owner.pw_uid, owner.pw_gid)
        return cluster

    def append(self, path: Path, text: str) -> None:
        with path.open("a") as f:
            f.write(text)

    def remove(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def socket_dir(self, cluster: Path) -> Path | None:
        return cluster / "socket"

    def wait_listening(self, port: int, timeout: float, proc: Proc) -> None:
        wait_for_port(self.host.address, port, timeout, proc)


@dataclass
class RemotePg(PgHost):
    """An ssh host's machine."""

    host: SshHost
    _bindir: str | None = field(default=None, repr=False)
    _root: bool | None = field(default=None, repr=False)
    _pidfiles: dict[int, str] = field(default_factory=dict, repr=False)

    @property
    def where(self) -> str:
        return f"{self.host.name} ({self.host.target})"

    def _sh(self, script: str, timeout: float = 30.0, input: str | None = None) -> str:
        done = self.host.run(script, timeout=timeout, input=input)
        if done.returncode != 0:
            raise PostgresError(f"{self.where}: {script} failed: {done.stderr.strip()[-400:]}")
        return done.stdout

    def check(self) -> int:
        self.as_user()
        return _major(self._sh(shlex.join([self.bin("initdb"), "--version"])), self.where)

    def bin(self, name: str) -> str:
        if self._bindir is None:
            done = self.host.run(REMOTE_BINDIR, timeout=30)
            if done.returncode != 0 or not done.stdout.strip():
                raise PostgresError(
                    f"{self.where}: no PostgreSQL server (initdb on PATH, in"
                    " /usr/lib/postgresql/*/bin or at `pg_config --bindir`): install"
                    f" PostgreSQL {MIN_MAJOR} or newer (Debian and Ubuntu: `postgresql`)"
                )
            self._bindir = done.stdout.strip().splitlines()[-1]
        return f"{self._bindir}/{name}"

    def as_user(self) -> list[str]:
        if self._root is None:
            self._root = self._sh("id -u").strip() == "0"
            if self._root and self.host.run(f"id -u {USER}", timeout=30).returncode != 0:
                raise PostgresError(
                    f"{self.where}: ssh logs in as root, and PostgreSQL refuses to run as root"
                    f" without a user {USER!r} there: create it, or log in as another user"
                )
        return _setpriv() if self._root else []

    def run(
        self, command: list[str], timeout: float, script: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.host.run(shlex.join([*self.as_user(), *command]), timeout, input=script)

    def popen(self, command: list[str]) -> subprocess.Popen[str]:
        # The remote process outlives its ssh client (no terminal, no hangup): its pid is
        # kept where `stop` and, whatever happens, the host's cleanup find it.
        d = f"{self.host.remote_base}/harness/{len(self._pidfiles) + 1}"
        script = (
            f"mkdir -p {shlex.quote(d)} && echo $$ > {shlex.quote(d + '/pid')}"
            f" && exec {shlex.join([*self.as_user(), *command])}"
        )
        proc = subprocess.Popen(
            self.host.ssh_args(script),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._pidfiles[proc.pid] = f"{d}/pid"
        return proc

    def stop(self, proc: subprocess.Popen[str]) -> None:
        # Its ssh client then ends with it, after passing on what it wrote.
        pidfile = shlex.quote(self._pidfiles[proc.pid])
        done = self.host.run(
            f"for i in $(seq 50); do [ -s {pidfile} ] && break; sleep 0.1; done;"
            f" kill -TERM $(cat {pidfile})",
            timeout=30,
        )
        if done.returncode != 0:
            proc.terminate()

    def new_cluster(self) -> Path:
        cluster = f"{self.host.remote_base}/pgcluster"
        q = shlex.quote(cluster)
        self._sh(f"mkdir -p {q}")
        if self.as_user():
            self._sh(f"chown {USER}: {q}")
            # Its parent directories must be open to the user too.
            if self.host.run(shlex.join([*_setpriv(), "test", "-w", cluster])).returncode != 0:
                raise PostgresError(
                    f"{self.where}: user {USER} cannot write {cluster}: give the machine a"
                    " remote_dir whose parent directories it may enter (e.g. under /tmp)"
                )
        return Path(cluster)

    def append(self, path: Path, text: str) -> None:
        done = self.run(["sh", "-c", f"cat >> {shlex.quote(str(path))}"], 30.0, script=text)
        if done.returncode != 0:
            raise PostgresError(f"{self.where}: cannot write {path}: {done.stderr.strip()}")

    def remove(self, path: Path) -> None:
        self.host.run(f"rm -rf {shlex.quote(str(path))}", timeout=60)

    def socket_dir(self, cluster: Path) -> Path | None:
        return None

    def wait_listening(self, port: int, timeout: float, proc: Proc) -> None:
        wait_listening(self.host, self.host.address, port, timeout, proc)
