"""`mwlab mq bench`: SimpleMQ beside two PostgreSQL queues a user would pick instead.

One PostgreSQL 15 (testbed/services/postgres.py, `synchronous_commit` on, checked) serves
every system, one at a time, in interleaved rounds: each round runs every (load, payload)
cell, and within a cell the systems' order is rotated (by round and cell), so that no system
always meets a warmer or a more bloated server. The systems:

- `river`: River v0.51.2 (Go, pgx v5 driver riverpgxv5), run by bench/mqbench (main.go),
  which migrates River's schema with rivermigrate into a fresh database `river`, inserts
  jobs from P producer goroutines in a closed loop and works them with River's workers
  (MaxWorkers C). River fetches at most the free worker slots per fetch and waits
  FetchCooldown between fetches, so at its default (100 ms) a queue delivers at most
  10·C jobs/s (measured: 20/s at C = 2); the bench sets FetchCooldown to River's minimum,
  1 ms (`--river-fetch-cooldown-ms`), and keeps FetchPollInterval at its default, 1 s.
  At-least-once.
- `pgq`: PgQ 3.5 (Debian's postgresql-15-pgq3) in a fresh database `pgq`, ticked by pgqd
  (ticker_period 0.1 s; each queue's ticker_max_lag 0.1 s, ticker_max_count 500), driven by
  the same Go program: producers call pgq.insert_event, consumers loop pgq.next_batch,
  pgq.get_batch_events and pgq.finish_batch, one transaction per batch, and sleep 50 ms when
  no batch is ready. Every consumer registered on a PgQ queue receives every event, so C
  consumers that share the work need C queues: producer i inserts into queue i mod C and
  consumer k reads queue k (P = C here). At-least-once.
- `simplemq-mw`: SimpleMQ through its middleware (16 workers, pop mode `skip_locked`), with
  its own Java client: L closed-loop clients, each sending to the next client, peeking and
  popping its own queue in turn (the seed's staticsmall/staticlarge, with --size the
  payload). At-most-once (the pop's reply follows its commit).
- `simplemq-mw-gc`: the same through a middleware that groups commits (`--group-commit`,
  default 8: a free worker takes up to 8 waiting requests of different clients and runs them
  in one transaction, each answered after its commit). At-most-once.
- `simplemq-lease`, `simplemq-lease-gc`: the lease mode, without and with group commit: L
  clients send to one shared receiver and read as it (`--lease-read-batch` messages a read,
  default 1, leased for 60 s, longer than any window), acking each message they got (several
  in one ack_batch); once the window closed they stop
  sending and read until a read finds nothing. At-least-once. Its delivered messages are those
  acked; what is left (unread, or leased and not acked) is drained with the rest.
- `simplemq-direct`: the same client calling the procedures over its own JDBC connections
  (the client's database transport), no middleware. At-most-once.

A load L means P = C = L producers and consumers for River and PgQ (P + C sessions), and L
SimpleMQ clients (each a producer and a consumer: L sessions direct, the middleware's 16
through it).

Each row measures a window of `--seconds`. River and PgQ: after `--warmup` s of load, the
window opens; at its end the producers stop and the consumers drain what was inserted.
SimpleMQ: the clients register and prime (5 rounds each), pass a start gate, then run the
window; what they leave in the database is drained afterwards by the harness, through the
same pop procedure. Measured per row:

- `delivered_per_s`: jobs worked (River: the worker returned; PgQ: the batch was finished
  and committed; SimpleMQ: pops that returned a message) per second of the window;
- `latency_p50_ms`, `latency_p99_ms`: from the producer's clock just before the insert to
  the consumer holding the message. River and PgQ: the clock carried in the job's args (in the
  event's ev_extra1) to the start of work. SimpleMQ: the message's sent_at (the sender's clock
  as it sent) to the reply that delivered it (a pop's, or a read's first delivery), from the
  client's `delivery_us`, over the whole run (its priming rounds included). SimpleMQ's rows
  also give the client's response times: `send_p50_ms`, `send_p99_ms`, `pop_p50_ms`,
  `pop_p99_ms` (from request to reply; the lease rows' pop is the read);
- `db_cpu_s_per_message`: CPU seconds (user + system) of every PostgreSQL process over the
  window, read from /proc (the postmaster, its live children, and its reaped children's
  cutime/cstime), per message delivered in the window;
- `cpu_s_per_message`: CPU seconds of the whole machine (/proc/stat's busy time: every
  process and the kernel) over the window, per message; `machine_busy_share` and
  `steal_share`, the shares of the machine's capacity busy and stolen by the hypervisor;
- `db_commits_per_s`: the sum of pg_stat_database.xact_commit over the window, per second
  (backends report at most once a second, so the count is good to about a second's worth);
- the delivery check after the drain: `produced`, `delivered` (distinct messages, window and
  drain), `duplicates`, `lost` = produced - delivered, `all_delivered`. For River also the
  jobs the database holds as completed once the client stopped (`stored_completed`).

`--database-cores X` runs PostgreSQL under a CPU budget of X cores and everything else under
the machine's other cores (soak/cpusplit.py), as if the database had a machine of its own,
as in seed 003; each row's `cpu_split` records it.

`--json FILE` writes one row per system, load and payload (the median over rounds for rates
and latencies, sums for counts; every round's values in `per_round`). `--quick` runs one
round of 10 s windows on loads 1, 32 and 128 and payloads 200 and 2,000 (24 rows, 6 minutes
here). Without it: loads 1, 8, 32, 128, payloads 200 and 2,000, 3 rounds of 30 s (96
rows, about an hour). Needs `go` (to build build/mqbench; or the binary, newer than its
sources), `pgqd` and the pgq extension (`apt-get install postgresql-15-pgq3 pgqd`) and
build/simplemq.jar (`make build`). See bench/mqbench/README.md.
"""

from __future__ import annotations

import csv
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from common.paths import BUILD, REPO, SIMPLEMQ_SQL
from soak.cpusplit import CpuSplit, stat_fields
from testbed.cpuaccount import MachineSample, machine_sample, machine_window
from testbed.cpubudget import CgroupError
from testbed.hosts import HostError, LocalHost
from testbed.point import DEFAULT_MQ_WORKERS
from testbed.services.middleware import (
    SIMPLEMQ_JAR,
    simplemq_client_command,
    start_simplemq,
    wait_simplemq,
)
from testbed.services.pghost import USER
from testbed.services.ports import LOOPBACK, free_port
from testbed.services.postgres import PostgresServer, bindir

GO_DIR = REPO / "bench" / "mqbench"
BINARY = BUILD / "mqbench"


@dataclass(frozen=True)
class SimpleMQVariant:
    """How a SimpleMQ row runs: through the middleware or direct, pops (at-most-once) or leases
    read and acked (at-least-once), and whether the middleware groups commits."""

    middleware: bool
    lease: bool = False
    group_commit: bool = False


SIMPLEMQ: dict[str, SimpleMQVariant] = {
    "simplemq-mw": SimpleMQVariant(middleware=True),
    "simplemq-mw-gc": SimpleMQVariant(middleware=True, group_commit=True),
    "simplemq-lease": SimpleMQVariant(middleware=True, lease=True),
    "simplemq-lease-gc": SimpleMQVariant(middleware=True, lease=True, group_commit=True),
    "simplemq-direct": SimpleMQVariant(middleware=False),
}
SYSTEMS = ("river", "pgq", *SIMPLEMQ)
GUARANTEE = {"river": "at-least-once", "pgq": "at-least-once"} | {
    name: "at-least-once" if v.lease else "at-most-once" for name, v in SIMPLEMQ.items()
}
# Requests one middleware transaction holds at most in the group-commit rows (--group-commit).
GROUP_COMMIT = 8
LOADS = (1, 8, 32, 128)
PAYLOADS = (200, 2000)
QUICK_LOADS = (1, 32, 128)
PGQ_TICK_S = 0.1
SIMPLEMQ_PRIME = 5
INSTALL_GO = "install Go 1.26 or newer (https://go.dev/dl/) and put `go` on PATH"
INSTALL_PGQ = "as root: apt-get install postgresql-15-pgq3 pgqd"


class BenchError(HostError):
    """The benchmark cannot run, or a row failed."""


# ---- tools ----


def _go_sources() -> list[Path]:
    return [GO_DIR / "go.mod", GO_DIR / "go.sum", *sorted(GO_DIR.glob("*.go"))]


def build_go() -> Path:
    """build/mqbench, rebuilt with `go build` when missing or older than its sources."""
    newest = max(p.stat().st_mtime for p in _go_sources())
    if BINARY.exists() and BINARY.stat().st_mtime >= newest:
        return BINARY
    go = shutil.which("go")
    if go is None:
        raise BenchError(f"`go` not found and {BINARY} missing or stale: {INSTALL_GO}")
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    # -mod=readonly: the versions of go.mod and go.sum, nothing resolved anew.
    done = subprocess.run(
        [go, "build", "-mod=readonly", "-o", str(BINARY), "."],
        cwd=GO_DIR,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise BenchError(f"go build in {GO_DIR} failed: {done.stderr.strip()[-1500:]}")
    return BINARY


def pgq_extension_available() -> bool:
    """Whether this machine's PostgreSQL has the pgq extension (its control file)."""
    pg_config = bindir() / "pg_config"
    if pg_config.exists():
        done = subprocess.run([str(pg_config), "--sharedir"], capture_output=True, text=True)
        if done.returncode == 0:
            return (Path(done.stdout.strip()) / "extension" / "pgq.control").exists()
    return any(Path("/usr/share/postgresql").glob("*/extension/pgq.control"))


def go_available() -> bool:
    """Whether build/mqbench can be had: `go` on PATH, or a binary newer than its sources."""
    if shutil.which("go") is not None:
        return True
    newest = max(p.stat().st_mtime for p in _go_sources())
    return BINARY.exists() and BINARY.stat().st_mtime >= newest


def check_tools() -> None:
    """Everything the bench needs on this machine; raises naming how to install what is not."""
    if not pgq_extension_available():
        raise BenchError(f"PostgreSQL has no pgq extension: {INSTALL_PGQ}")
    if not SIMPLEMQ_JAR.exists():
        raise BenchError(f"{SIMPLEMQ_JAR} missing: `make build` builds it")
    if shutil.which("java") is None:
        raise BenchError("`java` not found: `make setup` installs openjdk-17-jdk-headless")
    if shutil.which("pgqd") is None:
        raise BenchError(f"`pgqd` (PgQ's ticker) not found: {INSTALL_PGQ}")
    build_go()


# ---- the database's counters ----

_TICK = os.sysconf("SC_CLK_TCK")


def postgres_cpu_s(postmaster: int) -> float:
    """CPU seconds of the server so far: the postmaster's own and its reaped children's
    (cutime, cstime), and each live child's (backends, walwriter, autovacuum...)."""
    own = stat_fields(postmaster)
    if own is None:
        raise BenchError(f"postgres (pid {postmaster}) is gone")
    # Fields from 3 (state) on: ppid is [1], utime [11], stime [12], cutime [13], cstime [14].
    ticks = sum(int(own[i]) for i in (11, 12, 13, 14))
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            f = stat_fields(int(entry.name))
            if f is not None and int(f[1]) == postmaster:
                ticks += int(f[11]) + int(f[12])
    return ticks / _TICK


@dataclass(frozen=True)
class Sample:
    t: float
    cpu_s: float
    commits: int
    machine: MachineSample


def sample(db: PostgresServer) -> Sample:
    assert db.proc is not None
    commits = int(db.rows("SELECT sum(xact_commit) FROM pg_stat_database")[0][0])
    return Sample(time.monotonic(), postgres_cpu_s(db.proc.popen.pid), commits, machine_sample())


def _psql_in(db: PostgresServer, database: str, sql: str, timeout: float = 120.0) -> str:
    """Runs `sql` in another database of the server (psql over its socket)."""
    command = [db.place.bin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-A", "-t",
               "-h", str(db.socket_dir or db.host.address), "-p", str(db.port), "-U", USER,
               "-d", database]  # fmt: skip
    done = db.place.run(command, timeout, sql)
    if done.returncode != 0:
        raise BenchError(f"psql in {database}: {done.stderr.strip()[-800:]}")
    return done.stdout


def _fresh_database(db: PostgresServer, name: str) -> None:
    db.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    db.psql(f"CREATE DATABASE {name}")


# ---- one row ----


@dataclass
class Bench:
    """The server and where each row works."""

    host: LocalHost
    db: PostgresServer
    out: Path
    warmup_s: float
    river_fetch_cooldown_ms: float = 1.0
    drain_timeout_s: float = 120.0
    group_commit: int = GROUP_COMMIT
    tuned_schema: bool = False
    lease_read_batch: int = 1

    def dsn(self, database: str) -> str:
        return f"postgres://{USER}@{self.db.host.address}:{self.db.port}/{database}?sslmode=disable"

    def row(self, system: str, load: int, payload: int, seconds: float, rel: str) -> dict[str, Any]:
        if system in ("river", "pgq"):
            return self._go(system, load, payload, seconds, rel)
        return self._simplemq(system, load, payload, seconds, rel)

    # River and PgQ, through bench/mqbench.
    def _go(self, system: str, load: int, payload: int, seconds: float, rel: str) -> dict[str, Any]:
        wd = self.out / rel
        wd.mkdir(parents=True, exist_ok=True)
        _fresh_database(self.db, system)
        ticker = None
        try:
            if system == "pgq":
                ticker = self._pgq_setup(load, rel)
            command = [str(BINARY), "-system", system, "-dsn", self.dsn(system),
                       "-producers", str(load), "-consumers", str(load),
                       "-payload", str(payload), "-duration", f"{seconds}s",
                       "-warmup", f"{self.warmup_s}s",
                       "-drain-timeout", f"{self.drain_timeout_s}s",
                       "-river-fetch-cooldown", f"{self.river_fetch_cooldown_ms}ms"]  # fmt: skip
            with (wd / "stderr.log").open("w") as err:
                proc = subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=err, text=True, cwd=wd,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                )  # fmt: skip
            lines: queue.Queue[str | None] = queue.Queue()

            def read() -> None:
                assert proc.stdout is not None
                for line in proc.stdout:
                    lines.put(line)
                lines.put(None)

            threading.Thread(target=read, daemon=True).start()
            marks: dict[str, Sample] = {}
            result: dict[str, Any] | None = None
            deadline = time.monotonic() + self.warmup_s + seconds + self.drain_timeout_s + 180
            log = (wd / "stdout.log").open("w")
            try:
                while True:
                    try:
                        line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                    except queue.Empty:
                        raise BenchError(f"{system}: no result in time ({rel})") from None
                    if line is None:
                        break
                    log.write(line)
                    msg = json.loads(line)
                    if msg.get("event") in ("window_start", "window_end"):
                        marks[msg["event"]] = sample(self.db)
                    elif "system" in msg:
                        result = msg
                proc.wait(60)
            finally:
                log.close()
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)
            if proc.returncode != 0 or result is None or len(marks) != 2:
                tail = (wd / "stderr.log").read_text()[-1500:]
                raise BenchError(f"{system} load {load}: mqbench exited {proc.returncode}: {tail}")
        finally:
            if ticker is not None:
                ticker.stop(10)
        self.db.psql(f"DROP DATABASE IF EXISTS {system} WITH (FORCE)")
        a, b = marks["window_start"], marks["window_end"]
        delivered_window = int(result["delivered_in_window"])
        row = _base(system, load, payload, result["window_s"], delivered_window, a, b)
        produced, delivered = int(result["produced"]), int(result["delivered"])
        row |= {
            "latency_measured": True,
            "latency_p50_ms": result["latency_p50_ms"],
            "latency_p99_ms": result["latency_p99_ms"],
            "latency_samples": result["latency_samples"],
            "produced": produced,
            "delivered": delivered,
            "duplicates": int(result["duplicates"]),
            "lost": produced - delivered,
            "drain_s": result["drain_s"],
            "insert_errors": int(result["insert_errors"]),
            "stored_completed": int(result["stored_completed"]) if system == "river" else None,
            "settings": result.get("settings") or {},
        }
        row["all_delivered"] = bool(
            result["drained"]
            and delivered == produced
            and (system != "river" or row["stored_completed"] == produced)
        )
        return row

    def _pgq_setup(self, queues: int, rel: str) -> Any:
        """The pgq extension, `queues` queues and a consumer on each, and pgqd ticking."""
        have = _psql_in(self.db, "pgq", "SELECT count(*) FROM pg_available_extensions"
                        " WHERE name = 'pgq'").strip()  # fmt: skip
        if have != "1":
            raise BenchError(f"PostgreSQL has no pgq extension: {INSTALL_PGQ}")
        sql = ["CREATE EXTENSION pgq;"]
        for k in range(queues):
            sql += [
                f"SELECT pgq.create_queue('bench_{k}');",
                f"SELECT pgq.set_queue_config('bench_{k}', 'ticker_max_lag', '{PGQ_TICK_S}s');",
                f"SELECT pgq.register_consumer('bench_{k}', 'bench');",
            ]
        _psql_in(self.db, "pgq", "\n".join(sql) + "\n")
        wd = self.out / rel
        ini = (
            "[pgqd]\n"
            f"logfile = {wd / 'pgqd.log'}\n"
            f"pidfile = {wd / 'pgqd.pid'}\n"
            f"base_connstr = host={self.db.host.address} port={self.db.port} user={USER}\n"
            "initial_database = pgq\n"
            "database_list = pgq\n"
            f"ticker_period = {PGQ_TICK_S}\n"
        )
        self.host.put_text(rel, "pgqd.ini", ini)
        ticker = self.host.start(["pgqd", "pgqd.ini"], rel, "pgqd")
        # Ready once it has ticked: a queue of its own with one event, no consumer.
        _psql_in(self.db, "pgq", "SELECT pgq.create_queue('ping');"
                 " SELECT pgq.insert_event('ping', 'ping', 'x');")  # fmt: skip
        ticks = (
            "SELECT count(*) FROM pgq.tick JOIN pgq.queue ON tick_queue = queue_id"
            " WHERE queue_name = 'ping'"
        )
        deadline = time.monotonic() + 30
        while int(_psql_in(self.db, "pgq", ticks).strip()) < 2:
            if ticker.poll() is not None:
                raise BenchError(f"pgqd exited with {ticker.exit_code}: see {wd}/pgqd.log")
            if time.monotonic() > deadline:
                raise BenchError(f"pgqd has not ticked in 30 s: see {wd}/pgqd.log")
            time.sleep(0.1)
        return ticker

    # SimpleMQ, through its client.
    def _simplemq(
        self, system: str, load: int, payload: int, seconds: float, rel: str
    ) -> dict[str, Any]:
        variant = SIMPLEMQ[system]
        wd = self.out / rel
        self.db.psql("TRUNCATE messages, leases, dead_letters; DELETE FROM clients")
        mw = None
        if variant.middleware:
            port = free_port()
            extra = ("--group-commit", str(self.group_commit)) if variant.group_commit else ()
            mw = start_simplemq(
                self.host, port, DEFAULT_MQ_WORKERS, self.db.url, f"{rel}/mw", extra=extra
            )
            wait_simplemq(port, mw)
            target = ["--middleware", f"{LOOPBACK}:{port}"]
        else:
            target = ["--db", self.db.url]
        if variant.lease:
            # Every client sends to one shared receiver and reads and acks as it, as River's
            # and PgQ's consumers share their queues; leases outlast the window.
            workload = "lease"
            load_options = ["--workload", "lease", "--receiver", "1", "--visibility-ms", "60000",
                            "--drain-ms", "0",
                            "--read-batch", str(self.lease_read_batch)]  # fmt: skip
        else:
            workload = "staticsmall" if payload <= 200 else "staticlarge"
            load_options = ["--workload", workload]
        try:
            command = simplemq_client_command(
                SIMPLEMQ_JAR,
                [*target, "--clients", str(load), *load_options,
                 "--size", str(payload), "--test-time", str(round(seconds)),
                 "--prime", str(SIMPLEMQ_PRIME), "--start-gate", "gate",
                 "--message-log", ".", "--json-out-file", "result.json"],
            )  # fmt: skip
            client = self.host.start(command, f"{rel}/client", "client")
            gate = wd / "client" / "gate"
            deadline = time.monotonic() + 180
            while not gate.with_suffix(".ready").exists():
                if client.poll() is not None:
                    raise BenchError(f"{system}: client exited with {client.exit_code}: see {wd}")
                if time.monotonic() > deadline:
                    raise BenchError(f"{system}: client not at its gate after 180 s")
                time.sleep(0.05)
            # Backends report their counts at most once a second: let registration's settle.
            time.sleep(1.1)
            a = sample(self.db)
            gate.touch()
            if client.wait(seconds + 180) is None:
                raise BenchError(f"{system}: client did not finish ({wd})")
            b = sample(self.db)
            if client.exit_code != 0:
                raise BenchError(f"{system}: client exited with {client.exit_code}: see {wd}")
        finally:
            if mw is not None:
                mw.stop(30)
        report = json.loads((wd / "client" / "result.json").read_text())
        stats = report["ALL STATS"]
        delivery = report["mwlab"].get("delivery_us", {})
        window_s = float(stats["Runtime"]["Total duration"]) / 1000.0
        sent = _ids(wd / "client" / "sent.tsv")
        if variant.lease:
            got = _ids(wd / "client" / "acked.tsv", status="ok")
            delivery_block, delivery_op = "Reads", "read"
        else:
            got = _ids(wd / "client" / "popped.tsv")
            delivery_block, delivery_op = "Pops", "pop_queue"
        drained = self._drain_simplemq()
        row = _base(system, load, payload, window_s, len(got), a, b)
        delivered = set(got) | set(drained)
        row |= {
            "latency_measured": bool(delivery.get("count")),
            "latency_p50_ms": delivery["p50"] / 1000.0 if delivery.get("count") else None,
            "latency_p99_ms": delivery["p99"] / 1000.0 if delivery.get("count") else None,
            "latency_samples": int(delivery.get("count", 0)),
            "send_p50_ms": _pct(stats, "Sends", "p50.00"),
            "send_p99_ms": _pct(stats, "Sends", "p99.00"),
            "pop_p50_ms": _pct(stats, delivery_block, "p50.00"),
            "pop_p99_ms": _pct(stats, delivery_block, "p99.00"),
            "empty_pops": int(report["mwlab"]["replies"].get(delivery_op, {}).get("empty", 0)),
            "produced": len(sent),
            "delivered": len(delivered & set(sent)),
            "drained": len(drained),
            "duplicates": len(got) + len(drained) - len(delivered),
            "lost": len(set(sent) - delivered),
            "settings": {
                "workload": workload,
                "prime_rounds": str(SIMPLEMQ_PRIME),
                "middleware_workers": str(DEFAULT_MQ_WORKERS) if mw is not None else "",
                "group_commit": str(self.group_commit) if variant.group_commit else "1",
                "tuned_schema": "yes" if self.tuned_schema else "no",
                "lease_read_batch": str(self.lease_read_batch) if variant.lease else "",
            },
        }
        if mw is not None:
            summary = wd / "mw" / "stats" / "summary.json"
            groups = json.loads(summary.read_text()).get("group_commit", {})
            row["group_transactions"] = int(groups.get("transactions", 0))
            row["grouped_requests"] = int(groups.get("requests", 0))
        row["all_delivered"] = (
            row["lost"] == 0 and row["duplicates"] == 0 and delivered == set(sent)
        )
        return row

    def _drain_simplemq(self) -> list[int]:
        """Pops what the clients left, through the same pop procedure, and removes the leases
        they held unacked; the ids of both."""
        leased = [int(x) for x in self.db.psql("DELETE FROM leases RETURNING id").split()]
        left = self.db.rows("SELECT queue_id, receiver_id, count(*) FROM messages GROUP BY 1, 2")
        script = "".join(f"SELECT id FROM pop_queue({q}, {r});\n" * int(n) for q, r, n in left)
        ids = [int(x) for x in self.db.psql(script.rstrip(";\n")).split()] if script else []
        if int(self.db.rows("SELECT count(*) FROM messages")[0][0]) != 0:
            raise BenchError("SimpleMQ's drain left messages in the database")
        return ids + leased


def _ids(path: Path, status: str | None = None) -> list[int]:
    """The message ids of a client's log (only the rows of `status`, where given)."""
    with path.open() as f:
        rows = csv.DictReader(f, delimiter="\t")
        return [int(r["message_id"]) for r in rows if status is None or r["status"] == status]


def _pct(stats: dict[str, Any], block: str, key: str) -> float | None:
    """A percentile of the client's response times, ms (None: no such request timed)."""
    b = stats.get(block)
    if not isinstance(b, dict) or not b.get("Count"):
        return None
    return float(b["Percentile Latencies"][key])


def _base(
    system: str, load: int, payload: int, window_s: float, delivered: int, a: Sample, b: Sample
) -> dict[str, Any]:
    dt = b.t - a.t
    machine = machine_window(a.machine, b.machine)
    busy_s = (b.machine.busy - a.machine.busy) / _TICK
    return {
        "system": system,
        "guarantee": GUARANTEE[system],
        "load": load,
        "producers": load,
        "consumers": load,
        "payload": payload,
        "window_s": round(window_s, 3),
        "delivered_in_window": delivered,
        "delivered_per_s": delivered / window_s if window_s > 0 else 0.0,
        "db_cpu_s": b.cpu_s - a.cpu_s,
        "db_cpu_s_per_message": (b.cpu_s - a.cpu_s) / delivered if delivered else None,
        "db_commits": b.commits - a.commits,
        "db_commits_per_s": (b.commits - a.commits) / dt if dt > 0 else 0.0,
        # Every process on the machine (database, clients, middleware, harness, kernel).
        "cpu_s_per_message": busy_s / delivered if delivered else None,
        "machine_busy_share": machine["busy_share"],
        "steal_share": machine["steal_share"],
    }


# ---- the run ----


def plan(
    loads: tuple[int, ...],
    payloads: tuple[int, ...],
    rounds: int,
    systems: tuple[str, ...] = SYSTEMS,
) -> Iterator[tuple[int, int, int, tuple[str, ...]]]:
    """(round, load, payload, systems in this cell's order): the order rotates by one per
    cell and per round."""
    cells = [(load, payload) for payload in payloads for load in loads]
    for r in range(rounds):
        for i, (load, payload) in enumerate(cells):
            k = (r + i) % len(systems)
            yield r + 1, load, payload, systems[k:] + systems[:k]


MEDIAN = ("delivered_per_s", "latency_p50_ms", "latency_p99_ms", "db_cpu_s_per_message",
          "cpu_s_per_message", "machine_busy_share", "steal_share", "db_commits_per_s",
          "send_p50_ms", "send_p99_ms", "pop_p50_ms", "pop_p99_ms")  # fmt: skip
SUM = ("produced", "delivered", "duplicates", "lost", "delivered_in_window")


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per system, load and payload: medians of the rounds' rates, sums of counts."""
    groups: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["system"], r["load"], r["payload"]), []).append(r)
    out = []
    for (system, load, payload), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][2], kv[0][1], SYSTEMS.index(kv[0][0]))
    ):
        row: dict[str, Any] = {
            "system": system, "guarantee": GUARANTEE[system], "load": load,
            "producers": load, "consumers": load, "payload": payload, "rounds": len(rs),
        }  # fmt: skip
        for k in MEDIAN:
            values = [r[k] for r in rs if r.get(k) is not None]
            row[k] = statistics.median(values) if values else None
        for k in SUM:
            row[k] = sum(int(r[k]) for r in rs)
        row["all_delivered"] = all(r["all_delivered"] for r in rs)
        row["latency_measured"] = all(r["latency_measured"] for r in rs)
        row["settings"] = rs[0].get("settings", {})
        row["cpu_split"] = rs[0].get("cpu_split")
        row["per_round"] = rs
        out.append(row)
    return out


def _fmt(v: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "-" if v is None else f"{v * scale:.{digits}f}"


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'system':<17} {'guarantee':<13} {'load':>4} {'payload':>7} {'deliv/s':>9}"
            f" {'p50 ms':>7} {'p99 ms':>7} {'db µs/msg':>9} {'cpu µs/msg':>10} {'commits/s':>9}"
            f" {'delivered':>15} {'ok':>3}")  # fmt: skip
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['system']:<17} {r['guarantee']:<13} {r['load']:>4} {r['payload']:>7}"
            f" {_fmt(r['delivered_per_s'], 1, 0):>9} {_fmt(r['latency_p50_ms'], 1, 2):>7}"
            f" {_fmt(r['latency_p99_ms'], 1, 2):>7} {_fmt(r['db_cpu_s_per_message'], 1e6):>9}"
            f" {_fmt(r['cpu_s_per_message'], 1e6):>10}"
            f" {_fmt(r['db_commits_per_s'], 1, 0):>9}"
            f" {str(r['delivered']) + '/' + str(r['produced']):>15}"
            f" {'yes' if r['all_delivered'] else 'NO':>3}"
        )
    return "\n".join(lines)


def run(
    out: Path,
    loads: tuple[int, ...],
    payloads: tuple[int, ...],
    rounds: int,
    seconds: float,
    warmup_s: float,
    echo: Any = print,
    river_fetch_cooldown_ms: float = 1.0,
    systems: tuple[str, ...] = SYSTEMS,
    group_commit: int = GROUP_COMMIT,
    tuned_schema: bool = False,
    lease_read_batch: int = 1,
    database_cores: float | None = None,
) -> list[dict[str, Any]]:
    """Runs the grid of `systems` in `out`; the aggregated rows. `tuned_schema`: SimpleMQ's
    database gets sql/tuned.sql (the pops' index, PL/pgSQL pops) before the first row.
    `database_cores`: the database under a budget of that many cores, the rest under the
    machine's other cores (soak/cpusplit.py)."""
    check_tools()
    out.mkdir(parents=True, exist_ok=True)
    split = CpuSplit.open(database_cores) if database_cores is not None else None
    host = LocalHost(name="mqbench", role="server", address=LOOPBACK, base=out)
    # River and PgQ: P + C sessions (and River's own few); SimpleMQ: L, or the middleware's.
    connections = 2 * max(loads) + DEFAULT_MQ_WORKERS + 40
    db = PostgresServer(host, "postgres", free_port(), connections)
    db.admit(2 * max(loads) + 20)
    rows: list[dict[str, Any]] = []
    try:
        db.start()
        if split is not None:
            assert db.proc is not None
            split.take_database(db.proc.popen.pid)
        setting = db.rows("SHOW synchronous_commit")[0][0]
        if setting != "on":
            raise BenchError(f"synchronous_commit is {setting}, not on")
        db.psql("SELECT add_queue()")
        if tuned_schema:
            db.psql("", SIMPLEMQ_SQL / "tuned.sql")
        bench = Bench(host, db, out, warmup_s, river_fetch_cooldown_ms, group_commit=group_commit,
                      tuned_schema=tuned_schema, lease_read_batch=lease_read_batch)  # fmt: skip
        steps = list(plan(loads, payloads, rounds, systems))
        total = sum(len(s[3]) for s in steps)
        started, n = time.monotonic(), 0
        for r, load, payload, order in steps:
            for system in order:
                n += 1
                rel = f"r{r}/{system}-l{load}-p{payload}"
                row = bench.row(system, load, payload, seconds, rel) | {"round": r}
                row["cpu_split"] = split.describe() if split is not None else None
                rows.append(row)
                elapsed = time.monotonic() - started
                eta = elapsed / n * (total - n)
                lat = (f"p50 {_fmt(row['latency_p50_ms'], 1, 2)} ms p99"
                       f" {_fmt(row['latency_p99_ms'], 1, 2)} ms" if row["latency_measured"]
                       else f"pop p50 {_fmt(row['pop_p50_ms'], 1, 2)} ms")  # fmt: skip
                echo(
                    f"[{n}/{total} round {r}] {system} load {load} payload {payload}:"
                    f" {row['delivered_per_s']:.0f}/s, {lat},"
                    f" db {_fmt(row['db_cpu_s_per_message'], 1e6)} µs/msg,"
                    f" all {_fmt(row['cpu_s_per_message'], 1e6)} µs/msg,"
                    f" steal {_fmt(row['steal_share'], 100)} %,"
                    f" {row['db_commits_per_s']:.0f} commits/s,"
                    f" delivered {row['delivered']}/{row['produced']}"
                    f" ({elapsed:.0f} s, about {eta:.0f} s left)"
                )
    finally:
        db.stop()
        host.stop_all()
        if split is not None:
            for problem in split.close():
                echo(f"mq bench: {problem}")
    return aggregate(rows)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


@click.command("bench")
@click.option("--json", "json_out", type=click.Path(path_type=Path), help="Write the rows here.")
@click.option("--quick", is_flag=True, help="One round of 10 s on loads 1, 32, 128.")
@click.option("--loads", help="Comma-separated loads (default 1,8,32,128).")
@click.option("--payloads", help="Comma-separated payload sizes (default 200,2000).")
@click.option("--rounds", type=int, help="Interleaved rounds (default 3; --quick 1).")
@click.option("--seconds", type=float, help="Window per row (default 30; --quick 10).")
@click.option("--warmup", type=float, default=2.0, show_default=True,
              help="River and PgQ: load before each window.")  # fmt: skip
@click.option(
    "--river-fetch-cooldown-ms",
    type=float,
    default=1.0,
    show_default=True,
    help="River's FetchCooldown (River's default, 100, caps a queue at MaxWorkers per 100 ms).",
)
@click.option(
    "--systems",
    help=f"Comma-separated systems, in this order within a cell before rotation (default: all,"
    f" {','.join(SYSTEMS)}).",
)
@click.option(
    "--group-commit",
    type=click.IntRange(2, 1024),
    default=GROUP_COMMIT,
    show_default=True,
    help="Requests one transaction holds at most in the -gc rows.",
)
@click.option(
    "--tuned-schema",
    is_flag=True,
    help="Give SimpleMQ's database the pops' (queue, receiver, id) index and PL/pgSQL pops"
    " (middleware/simplemq/sql/tuned.sql), beyond seed 003's schema.",
)
@click.option(
    "--lease-read-batch",
    type=click.IntRange(1, 16),
    default=1,
    show_default=True,
    help="Messages one read of the lease rows leases at most (several are acked in one ack_batch).",
)
@click.option(
    "--database-cores",
    type=click.FloatRange(min=0.1),
    help="Give PostgreSQL a CPU budget of this many cores and every other process the rest"
    " (cgroup quotas), as if the database had a machine of its own (default: all share).",
)
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("results/mq-bench"), show_default=True
)
def bench_command(
    json_out: Path | None,
    quick: bool,
    loads: str | None,
    payloads: str | None,
    rounds: int | None,
    seconds: float | None,
    warmup: float,
    river_fetch_cooldown_ms: float,
    systems: str | None,
    group_commit: int,
    tuned_schema: bool,
    lease_read_batch: int,
    database_cores: float | None,
    out: Path,
) -> None:
    """SimpleMQ (middleware and direct) beside River and PgQ on one PostgreSQL 15, in
    interleaved rounds: delivered/s, insert-to-work latency (River, PgQ), the database's CPU
    per message and commits/s, and a check that every message sent was delivered. See
    soak/mqbench.py's docstring and bench/mqbench/README.md."""
    grid_loads = _ints(loads) if loads else (QUICK_LOADS if quick else LOADS)
    grid_payloads = _ints(payloads) if payloads else PAYLOADS
    n_rounds = rounds or (1 if quick else 3)
    secs = seconds or (10.0 if quick else 30.0)
    if quick and secs < 10:
        raise click.UsageError("--quick runs windows of at least 10 s")
    chosen = tuple(x.strip() for x in systems.split(",") if x.strip()) if systems else SYSTEMS
    unknown = [x for x in chosen if x not in SYSTEMS]
    if unknown or not chosen:
        raise click.UsageError(
            f"--systems: unknown {', '.join(unknown) or '(none given)'}; of {', '.join(SYSTEMS)}"
        )
    click.echo(
        f"mq bench: loads {','.join(map(str, grid_loads))}, payloads"
        f" {','.join(map(str, grid_payloads))}, {n_rounds} round(s) of {secs:g} s windows,"
        f" systems {', '.join(chosen)} (group commit {group_commit}"
        f"{', tuned schema' if tuned_schema else ''}"
        f"{f', database on {database_cores:g} cores' if database_cores else ''});"
        f" load average {_loadavg()}"
    )
    try:
        rows = run(
            out,
            grid_loads,
            grid_payloads,
            n_rounds,
            secs,
            warmup,
            click.echo,
            river_fetch_cooldown_ms,
            chosen,
            group_commit,
            tuned_schema,
            lease_read_batch,
            database_cores,
        )
    except (HostError, CgroupError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(table(rows))
    click.echo(f"load average {_loadavg()}")
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(rows, indent=1) + "\n")
    if not all(r["all_delivered"] for r in rows):
        raise click.ClickException("a system did not deliver every message it was sent")


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
