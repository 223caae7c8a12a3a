"""A PostgreSQL server per run, for SimpleMQ (middleware/simplemq).

`initdb` writes a throw-away cluster (where, and as which user, is `testbed.services.pghost`'s
business: this machine or an ssh host's). The server listens on its host's address (an
emulated host's namespace address, a remote machine's, or loopback); its log goes to the
run's directory, and when the run ends its settings and `pg_stat_*` snapshots are saved
there, it is stopped and its cluster removed.

The cluster trusts the connections it accepts: it exists only for one run, listens on
loopback, the project's own network namespaces (198.18.0.0/15) or a machine's private
address, and takes TCP connections only from the addresses it is given (default: any).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import pgsettings
from common.paths import SIMPLEMQ_SQL
from testbed.hosts import Host, HostError, LocalHost, Proc
from testbed.point import HARNESS_CONNECTIONS, MAX_COMMIT_DELAY_MS
from testbed.services.pghost import USER, PgHost, pg_host

# Re-exported: the error and this machine's binaries, as the server's users know them.
from testbed.services.pghost import PostgresError as PostgresError
from testbed.services.pghost import bindir as bindir

DATABASE = "simplemq"
# SimpleMQ's SQL: the schema, the procedures, one pop strategy each and the lease mode's
# tables and procedures (the module's README).
SQL = SIMPLEMQ_SQL
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
    # Storage parameters the schema sets on its tables (vacuum_truncate on messages).
    "table_options": "SELECT relname, reloptions FROM pg_class WHERE relkind = 'r'"
    " AND relnamespace = 'public'::regnamespace ORDER BY relname",
}


@dataclass
class PostgresServer:
    """One server on `host`, working in `rel` there (its log); its statistics and counters go
    to `out` on this machine (default: that same directory, which local and emulated hosts
    share with this machine)."""

    host: Host
    rel: str
    port: int
    max_connections: int
    strategy: str = "skip_locked"
    # commit_delay, µs: every commit waits this long before its WAL flush (commit_siblings 0:
    # whatever else runs), and the commits that arrive meanwhile share that flush.
    commit_delay_us: int = 0
    out: Path | None = None
    # The addresses that may connect over TCP (empty: any). On an ssh host the harness's own
    # sessions come from the server's address, which must then be among them.
    clients: tuple[str, ...] = ()
    proc: Proc | None = None
    timings: dict[str, float] = field(default_factory=dict)
    cluster: Path | None = None  # the directory of the data (and the socket) on the host
    place: PgHost = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise PostgresError(f"pop strategy {self.strategy!r}: one of {', '.join(STRATEGIES)}")
        if not 0 <= self.commit_delay_us <= MAX_COMMIT_DELAY_US:
            raise PostgresError(
                f"commit delay {self.commit_delay_us} µs: PostgreSQL takes 0 to"
                f" {MAX_COMMIT_DELAY_US} µs"
            )
        self.place = pg_host(self.host)

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
        """Where the server's statistics and counters are written on this machine."""
        if self.out is not None:
            return self.out
        if not isinstance(self.host, LocalHost):
            raise PostgresError(f"{self.host.name}: a remote server needs a local `out`")
        return self.host.base / self.rel

    @property
    def socket_dir(self) -> Path | None:
        """The server's socket directory on its host (None: TCP only)."""
        if self.cluster is None:
            raise PostgresError("the server has not been set up")
        return self.place.socket_dir(self.cluster)

    @property
    def _connect(self) -> str:
        """psql's -h: the socket's directory, else the server's address over TCP."""
        return str(self.socket_dir or self.host.address)

    @property
    def url(self) -> str:
        """The pgjdbc URL of the run's database, over TCP on the host's address."""
        return f"jdbc:postgresql://{self.host.address}:{self.port}/{DATABASE}?user={USER}"

    def _run(
        self, command: list[str], what: str, timeout: float = 60.0, script: str | None = None
    ) -> str:
        done = self.place.run(command, timeout, script)
        if done.returncode != 0:
            raise PostgresError(f"{what} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
        return done.stdout

    def _wait_accepting(self, deadline: float) -> None:
        """Blocks until the server accepts sessions: it listens before its startup ends and
        refuses sessions until then ("the database system is starting up"), for longer on a
        loaded machine. pg_isready exits 0 once sessions are accepted, 1 while refused."""
        command = [self.place.bin("pg_isready"), "-q", "-h", self._connect,
                   "-p", str(self.port), "-t", "2"]  # fmt: skip
        while self.place.run(command, 30.0).returncode != 0:
            if self.proc is not None and self.proc.poll() is not None:
                raise PostgresError(f"postgres exited with {self.proc.poll()} during its startup")
            if time.monotonic() > deadline:
                raise PostgresError(f"postgres: not accepting sessions on port {self.port}")
            time.sleep(0.1)

    def _psql(self) -> list[str]:
        """psql on the run's database: unaligned rows, tab-separated."""
        return [self.place.bin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-A", "-t",
                "-F", "\t", "-h", self._connect, "-p", str(self.port), "-U", USER,
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
        self.cluster = self.place.new_cluster()
        data = self.cluster / "data"
        self._run(
            [self.place.bin("initdb"), "-D", str(data), "-U", USER, "--auth=trust",
             "--no-sync",  # a throw-away cluster; the server itself keeps fsync on
             "-E", "UTF8", "--locale=C"],
            "initdb",
            timeout,
        )  # fmt: skip
        # Clients reach the server over the host's address too (other hosts).
        sources = [f"{a}/32" for a in self.clients] or ["0.0.0.0/0"]
        self.place.append(
            data / "pg_hba.conf", "".join(f"host all all {s} trust\n" for s in sources)
        )
        self.timings["initdb_s"] = time.monotonic() - t0
        socket_dir = self.socket_dir
        command = [
            *self.place.as_user(),
            self.place.bin("postgres"),
            "-D", str(data),
            "-p", str(self.port),
            "-c", f"listen_addresses={self.host.address}",
            # Empty: no socket, TCP only.
            "-c", f"unix_socket_directories={socket_dir or ''}",
            "-c", f"max_connections={self.max_connections}",
            # Time spent writing and syncing the WAL (pg_stat_wal): how much commits wait.
            "-c", "track_wal_io_timing=on",
            *pgsettings.server_options(),
        ]  # fmt: skip
        if self.commit_delay_us:
            command += ["-c", f"commit_delay={self.commit_delay_us}", "-c", "commit_siblings=0"]
        self.proc = self.host.start(command, self.rel, "postgres")
        self.place.wait_listening(self.port, timeout, self.proc)
        self._wait_accepting(time.monotonic() + timeout)
        self.timings["start_s"] = time.monotonic() - t0 - self.timings["initdb_s"]
        t1 = time.monotonic()
        self._run(
            [self.place.bin("createdb"), "-h", self._connect, "-p", str(self.port), "-U", USER,
             DATABASE],
            "createdb",
            timeout,
        )  # fmt: skip
        self.psql(
            "",
            SQL / "schema.sql",
            SQL / "procedures.sql",
            SQL / f"pop_{self.strategy}.sql",
            SQL / "lease.sql",
            SQL / "idempotent.sql",
            SQL / "batch.sql",
            SQL / "metrics.sql",
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
        query = (
            "SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, 'running')"
            f" FROM pg_stat_activity WHERE datname = '{DATABASE}' AND state = 'active'"
            " AND pid <> pg_backend_pid()\n\\watch 0.05\n"
        )
        proc = self.place.popen(self._psql())
        assert proc.stdin is not None
        proc.stdin.write(query)
        proc.stdin.flush()
        return proc

    def waits(self, sampler: subprocess.Popen[str]) -> dict[str, int]:
        """Stops a sampler; how often an active backend was seen in each wait (`CPU/running`
        when it waited on nothing)."""
        self.place.stop(sampler)
        out, _ = sampler.communicate(timeout=30)
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
                with contextlib.suppress(OSError, HostError):
                    self.place.remove(self.cluster)

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
