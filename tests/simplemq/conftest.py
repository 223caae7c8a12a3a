"""SimpleMQ's tests run a real PostgreSQL (testbed/services/postgres.py) and the real
middleware jar."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from testbed.hosts import LocalHost, Proc
from testbed.services.middleware import SIMPLEMQ_JAR as JAR
from testbed.services.middleware import start_simplemq, wait_simplemq
from testbed.services.ports import LOOPBACK, free_port
from testbed.services.postgres import PostgresServer

StartPostgres = Callable[..., PostgresServer]
StartMiddleware = Callable[..., tuple[Proc, int]]


@pytest.fixture
def start_postgres(tmp_path: Path) -> Iterator[StartPostgres]:
    """Starts PostgreSQL servers on loopback (a pop strategy each); stops them afterwards."""
    started: list[PostgresServer] = []

    def start(
        strategy: str = "skip_locked", connections: int = 40, commit_delay_us: int = 0
    ) -> PostgresServer:
        base = tmp_path / f"db{len(started) + 1}"
        host = LocalHost(name="db", role="server", address=LOOPBACK, base=base)
        db = PostgresServer(host, "postgres", free_port(), connections, strategy, commit_delay_us)
        started.append(db)
        db.start()
        return db

    yield start
    for db in started:
        db.stop()
        db.host.stop_all()


@pytest.fixture
def postgres(start_postgres: StartPostgres) -> PostgresServer:
    return start_postgres()


@pytest.fixture
def start_middleware(tmp_path: Path) -> Iterator[StartMiddleware]:
    """Starts middlewares on loopback in `<tmp>/middleware<n>`; stops them afterwards."""
    hosts: list[LocalHost] = []

    def start(
        db: PostgresServer,
        workers: int = 4,
        extra: Sequence[str] = (),
        jvm: Sequence[str] = (),
    ) -> tuple[Proc, int]:
        """`extra`: more options of the middleware's (its limits); `jvm`: the JVM's."""
        if not JAR.exists():
            pytest.fail(f"{JAR} missing: `make build` builds it")
        base = tmp_path / f"middleware{len(hosts) + 1}"
        host = LocalHost(name="mw", role="middleware", address=LOOPBACK, base=base)
        hosts.append(host)
        port = free_port()
        proc = start_simplemq(host, port, workers, db.url, ".", extra=extra, jvm=jvm)
        wait_simplemq(port, proc)
        return proc, port

    yield start
    for host in hosts:
        host.stop_all()


@pytest.fixture
def middleware(postgres: PostgresServer, start_middleware: StartMiddleware) -> tuple[Proc, int]:
    return start_middleware(postgres)
