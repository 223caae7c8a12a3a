"""SimpleMQ's tests run a real PostgreSQL (testbed/postgres.py) and the real middleware jar."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testbed.hosts import LocalHost, Proc, wait_for_port
from testbed.mqsoak import JAR, free_port
from testbed.postgres import PostgresServer

StartPostgres = Callable[..., PostgresServer]
StartMiddleware = Callable[..., tuple[Proc, int]]


@pytest.fixture
def start_postgres(tmp_path: Path) -> Iterator[StartPostgres]:
    """Starts PostgreSQL servers on loopback (a pop strategy each); stops them afterwards."""
    started: list[PostgresServer] = []

    def start(strategy: str = "skip_locked", connections: int = 40) -> PostgresServer:
        base = tmp_path / f"db{len(started) + 1}"
        host = LocalHost(name="db", role="server", address="127.0.0.1", base=base)
        db = PostgresServer(host, "postgres", free_port(), connections, strategy)
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

    def start(db: PostgresServer, workers: int = 4) -> tuple[Proc, int]:
        if not JAR.exists():
            pytest.fail(f"{JAR} missing: `make build` builds it")
        base = tmp_path / f"middleware{len(hosts) + 1}"
        host = LocalHost(name="mw", role="middleware", address="127.0.0.1", base=base)
        hosts.append(host)
        port = free_port()
        command = ["java", "-jar", str(JAR), "middleware", "-p", str(port), "-t", str(workers),
                   "--db", db.url, "--stats-dir", "stats"]  # fmt: skip
        proc = host.start(command, ".", "middleware")
        wait_for_port("127.0.0.1", port, 60.0, proc)
        return proc, port

    yield start
    for host in hosts:
        host.stop_all()


@pytest.fixture
def middleware(postgres: PostgresServer, start_middleware: StartMiddleware) -> tuple[Proc, int]:
    return start_middleware(postgres)
