"""A PostgreSQL server per run, for SimpleMQ (middleware/simplemq).

`initdb` writes a throw-away cluster into a temporary directory of the unprivileged user
that runs PostgreSQL (it refuses root: as root, every PostgreSQL process runs as `mwlab-pg`,
which `make setup` creates, and a run's own directory may not be open to that user). The
server listens on its host's address (an emulated host's namespace address, or loopback) and
on a socket in that directory; its log goes to the run's directory, and when the run ends its
settings and `pg_stat_*` snapshots are saved there, it is stopped and its cluster removed.

The cluster trusts every connection: it exists only for one run, on loopback or on the
project's own network namespaces (198.18.0.0/15).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from testbed.hosts import HostError, LocalHost, Proc
from testbed.point import HARNESS_CONNECTIONS, MAX_COMMIT_DELAY_MS
from testbed.services.ports import wait_for_port
from testbed.tools import TOOLS, tool_path

USER = "mwlab-pg"
DATABASE = "simplemq"
# SimpleMQ's SQL: the schema, the procedures and one pop strategy each (the module's README).
SQL = Path(__file__).resolve().parents[2] / "middleware" / "simplemq" / "sql"
STRATEGIES = ("skip_locked", "naive", "broken")
MAX_COMMIT_DELAY_US = round(MAX_COMMIT_DELAY_MS * 1000)
# What a run keeps of the server's statistics (pg_stat_* views), one TSV each.
SNAPSHOTS = {
    "pg_stat_database": f"SELECT * FROM pg_stat_database WHERE datname = '{DATABASE}'",
    "pg_stat_user_tables": "SELECT * FROM pg_stat_user_tables ORDER BY relname",
    "pg_stat_user_indexes": "SELECT * FROM pg_stat_user_indexes ORDER BY indexrelname",
    "pg_stat_bgwriter": "SELECT * FROM pg_stat_bgwriter",
    "pg_stat_wal": "SELECT * FROM pg_stat_wal",
    "settings": "SELECT name, setting, unit, source FROM pg_settings ORDER BY name",
}


class PostgresError(HostError):
    """PostgreSQL could not be set up, started or stopped."""


def bindir() -> Path:
    """The directory of initdb, postgres and psql (`mwlab tools` finds it: on PATH under Nix,
    /usr/lib/postgresql/<major>/bin on Debian)."""
    found = tool_path(next(t for t in TOOLS if t.name == "initdb"))
    if found is None:
        raise PostgresError("no PostgreSQL server (initdb): `make setup` installs postgresql-15")
    return Path(found).resolve().parent


def _as_user() -> list[str]:
    """The prefix that runs a command as the unprivileged user when this process is root.
    setpriv executes the command itself (runuser would wait in a parent process that signals
    do not pass), so a signal to the process started is a signal to PostgreSQL."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(USER)
    except KeyError:
        raise PostgresError(
            f"no user {USER!r}: PostgreSQL refuses to run as root (`make setup` creates it)"
        ) from None
    return ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups", "--"]


@dataclass
class PostgresServer:
    """One server on `host`, in `<run>/<rel>` (data, socket, logs and statistics)."""

    host: LocalHost
    rel: str
    port: int
    max_connections: int
    strategy: str = "skip_locked"
    # commit_delay, µs: every commit waits this long before its WAL flush (commit_siblings 0:
    # whatever else runs), and the commits that arrive meanwhile share that flush.
    commit_delay_us: int = 0
    proc: Proc | None = None
    timings: dict[str, float] = field(default_factory=dict)
    cluster: Path | None = None  # the temporary directory of the data and the socket

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise PostgresError(f"pop strategy {self.strategy!r}: one of {', '.join(STRATEGIES)}")
        if not 0 <= self.commit_delay_us <= MAX_COMMIT_DELAY_US:
            raise PostgresError(
                f"commit delay {self.commit_delay_us} µs: PostgreSQL takes 0 to"
                f" {MAX_COMMIT_DELAY_US} µs"
            )

    def admit(self, connections: int) -> None:
        """Refuses a plan whose persistent connections (every middleware's workers, and the
        direct clients) would not fit `max_connections`, less this harness's own few."""
        room = self.max_connections - HARNESS_CONNECTIONS
        if connections > room:
            raise PostgresError(
                f"{connections} database connections (workers of every middleware and direct"
                f" clients) do not fit max_connections {self.max_connections} less"
                f" {HARNESS_CONNECTIONS} for the harness"
            )

    @property
    def dir(self) -> Path:
        return self.host.base / self.rel

    @property
    def socket_dir(self) -> Path:
        if self.cluster is None:
            raise PostgresError("the server has not been set up")
        return self.cluster / "socket"

    @property
    def url(self) -> str:
        """The pgjdbc URL of the run's database, over TCP on the host's address."""
        return f"jdbc:postgresql://{self.host.address}:{self.port}/{DATABASE}?user={USER}"

    def _run(
        self, command: list[str], what: str, timeout: float = 60.0, script: str | None = None
    ) -> str:
        done = subprocess.run(
            [*_as_user(), *command],
            input=script,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise PostgresError(f"{what} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
        return done.stdout

    def _wait_accepting(self, deadline: float) -> None:
        """Blocks until the server accepts sessions: it listens before its startup ends and
        refuses sessions until then ("the database system is starting up"), for longer on a
        loaded machine. pg_isready exits 0 once sessions are accepted, 1 while refused."""
        command = [*_as_user(), str(bindir() / "pg_isready"), "-q", "-h", str(self.socket_dir),
                   "-p", str(self.port), "-t", "2"]  # fmt: skip
        while subprocess.run(command, check=False, timeout=30).returncode != 0:
            if self.proc is not None and self.proc.poll() is not None:
                raise PostgresError(f"postgres exited with {self.proc.poll()} during its startup")
            if time.monotonic() > deadline:
                raise PostgresError(f"postgres: not accepting sessions on port {self.port}")
            time.sleep(0.1)

    def _psql(self) -> list[str]:
        """psql on the run's database over its socket: unaligned rows, tab-separated."""
        return [str(bindir() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-A", "-t",
                "-F", "\t", "-h", str(self.socket_dir), "-p", str(self.port), "-U", USER,
                "-d", DATABASE]  # fmt: skip

    def psql(self, sql: str, *files: Path, timeout: float = 60.0) -> str:
        """Runs the files, then `sql`, in the run's database over its socket (the files are
        read here and piped, so the server's user need not reach them)."""
        script = "".join(f.read_text() + "\n" for f in files) + (sql + ";\n" if sql else "")
        return self._run(self._psql(), "psql", timeout, script)

    def rows(self, sql: str) -> list[list[str]]:
        """The rows `sql` returns, each a list of its columns as text."""
        return [line.split("\t") for line in self.psql(sql).splitlines() if line]

    def start(self, timeout: float = 60.0) -> None:
        """initdb, start, create the database and load SimpleMQ's schema and procedures."""
        t0 = time.monotonic()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cluster = Path(tempfile.mkdtemp(prefix="mwlab-pg-"))
        data = self.cluster / "data"
        self.socket_dir.mkdir()
        if os.geteuid() == 0:
            owner = pwd.getpwnam(USER)
            for d in (self.cluster, self.socket_dir):
                os.chown(d, owner.pw_uid, owner.pw_gid)
        self._run(
            [
                str(bindir() / "initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                "--auth=trust",
                "--no-sync",  # a throw-away cluster; the server itself keeps fsync on
                "-E",
                "UTF8",
                "--locale=C",
            ],
            "initdb",
            timeout,
        )
        # Clients reach the server over the host's address too (other namespaces).
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write("host all all 0.0.0.0/0 trust\n")
        self.timings["initdb_s"] = time.monotonic() - t0
        command = [
            *_as_user(),
            str(bindir() / "postgres"),
            "-D",
            str(data),
            "-p",
            str(self.port),
            "-c",
            f"listen_addresses={self.host.address}",
            "-c",
            f"unix_socket_directories={self.socket_dir}",
            "-c",
            f"max_connections={self.max_connections}",
            # Time spent writing and syncing the WAL (pg_stat_wal): how much commits wait.
            "-c",
            "track_wal_io_timing=on",
        ]
        if self.commit_delay_us:
            command += ["-c", f"commit_delay={self.commit_delay_us}", "-c", "commit_siblings=0"]
        self.proc = self.host.start(command, self.rel, "postgres")
        wait_for_port(self.host.address, self.port, timeout, self.proc)
        self._wait_accepting(time.monotonic() + timeout)
        self.timings["start_s"] = time.monotonic() - t0 - self.timings["initdb_s"]
        t1 = time.monotonic()
        self._run(
            [
                str(bindir() / "createdb"),
                "-h",
                str(self.socket_dir),
                "-p",
                str(self.port),
                "-U",
                USER,
                DATABASE,
            ],
            "createdb",
            timeout,
        )
        self.psql(
            "",
            SQL / "schema.sql",
            SQL / "procedures.sql",
            SQL / f"pop_{self.strategy}.sql",
            timeout=timeout,
        )
        self.timings["schema_s"] = time.monotonic() - t1

    def snapshot(self) -> None:
        """Saves the settings and the pg_stat_* views into `<dir>/stats/<view>.tsv`."""
        out = self.dir / "stats"
        out.mkdir(exist_ok=True)
        for name, query in SNAPSHOTS.items():
            (out / f"{name}.tsv").write_text(
                self.psql(f"COPY ({query}) TO STDOUT WITH CSV HEADER DELIMITER E'\\t'")
            )

    def counters(self) -> dict[str, dict[str, int]]:
        """The run's counters now: the database's transactions, deadlocks and block reads
        (pg_stat_database), each table's live and dead rows, inserts, deletes and vacuums
        (pg_stat_user_tables), and, exact, the messages held and the messages ever sent
        (`queue`: the table's rows and its id sequence).

        A backend adds its counts to pg_stat_* at most once a second while busy, within
        10 s once idle, and at its exit: read after the sessions have ended they are
        complete; read while sessions idle (e.g. a middleware's after a warm-up) they may
        miss their last second. The `queue` counts never lag."""
        db_columns = ("xact_commit", "xact_rollback", "deadlocks", "blks_read", "blks_hit",
                      "tup_inserted", "tup_deleted", "conflicts", "temp_files")  # fmt: skip
        table_columns = ("n_live_tup", "n_dead_tup", "n_tup_ins", "n_tup_del",
                         "vacuum_count", "autovacuum_count")  # fmt: skip
        # A new session per call (psql), so no statistics snapshot of an earlier read.
        row = self.rows(
            f"SELECT {', '.join(db_columns)} FROM pg_stat_database WHERE datname = '{DATABASE}'"
        )[0]
        out: dict[str, dict[str, int]] = {
            "database": {c: int(v or 0) for c, v in zip(db_columns, row, strict=True)}
        }
        query = f"SELECT relname, {', '.join(table_columns)} FROM pg_stat_user_tables"
        for relname, *values in self.rows(query):
            out[relname] = {c: int(v or 0) for c, v in zip(table_columns, values, strict=True)}
        held, sent = self.rows(
            "SELECT (SELECT count(*) FROM messages), coalesce(pg_sequence_last_value("
            "pg_get_serial_sequence('messages', 'id')::regclass), 0)"
        )[0]
        out["queue"] = {"messages": int(held), "sent": int(sent)}
        return out

    def wait_sessions_gone(self, timeout: float) -> None:
        """Blocks until no other session is connected to the run's database: a backend adds
        its last counts to the statistics as it exits, after its client has gone."""
        query = (
            f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{DATABASE}'"
            " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
        deadline = time.monotonic() + timeout
        while (left := int(self.rows(query)[0][0])) > 0:
            if time.monotonic() > deadline:
                raise PostgresError(f"{left} database sessions still open after {timeout:g} s")
            time.sleep(0.1)

    def sample_waits(self) -> subprocess.Popen[str]:
        """Starts sampling what the database's backends wait on, every 50 ms (psql's \\watch),
        until `waits` reads and stops it."""
        command = [*_as_user(), *self._psql()]
        query = (
            "SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, 'running')"
            f" FROM pg_stat_activity WHERE datname = '{DATABASE}' AND state = 'active'"
            " AND pid <> pg_backend_pid()\n\\watch 0.05\n"
        )
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)  # fmt: skip
        assert proc.stdin is not None
        proc.stdin.write(query)
        proc.stdin.flush()
        return proc

    @staticmethod
    def waits(sampler: subprocess.Popen[str]) -> dict[str, int]:
        """Stops a sampler; how often an active backend was seen in each wait (`CPU/running`
        when it waited on nothing)."""
        sampler.terminate()
        out, _ = sampler.communicate(timeout=10)
        counts: dict[str, int] = {}
        for line in out.splitlines():
            if "\t" in line:
                kind, event = line.split("\t", 1)
                counts[f"{kind}/{event}"] = counts.get(f"{kind}/{event}", 0) + 1
        return counts

    def stop(self, keep_data: bool = False, timeout: float = 30.0) -> None:
        """Snapshots the statistics, stops the server (fast shutdown: SIGINT) and removes its
        cluster unless `keep_data`."""
        try:
            if self.proc is not None:
                self._shut_down(timeout)
        finally:
            # Also when the server never started: initdb may have written the cluster.
            if self.cluster is not None and not keep_data:
                with contextlib.suppress(OSError):
                    shutil.rmtree(self.cluster)

    def _shut_down(self, timeout: float) -> None:
        assert self.proc is not None
        try:
            if self.proc.poll() is None:
                self.snapshot()
        finally:
            self.proc.signal(signal.SIGINT)
            if self.proc.wait(timeout) is None:
                self.proc.signal(signal.SIGKILL)
                self.proc.wait(5.0)
