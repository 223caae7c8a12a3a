"""SimpleMQ's procedures (middleware/simplemq/sql) on a real PostgreSQL: the nine of seed
003's Table 1, their foreign keys, and both pop strategies' semantics."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from testbed.hosts import LocalHost
from testbed.services.postgres import PostgresError, PostgresServer


def _send(db: PostgresServer, sender: int, receiver: int, queue: int, body: str) -> int:
    sql = f"SELECT add_message({sender}, {receiver}, {queue}, now(), '{body}')"
    return int(db.rows(sql)[0][0])


def test_the_nine_procedures(postgres: PostgresServer) -> None:
    db = postgres
    for c in (1, 2, 3):
        db.psql(f"SELECT add_client({c})")
    q1, q2 = (int(db.rows("SELECT add_queue()")[0][0]) for _ in range(2))
    assert q2 == q1 + 1
    first = _send(db, 1, 2, q1, "a")
    second = _send(db, 3, 2, q1, "b")
    third = _send(db, 1, 2, q2, "c")
    assert first < second < third
    assert [r[0] for r in db.rows("SELECT * FROM query_queues(2)")] == [str(q1), str(q2)]
    assert db.rows("SELECT * FROM query_queues(1)") == []
    # Peek reads the oldest for the receiver and leaves it; pop removes it.
    assert db.rows(f"SELECT id, body FROM peek_queue({q1}, 2)") == [[str(first), "a"]]
    assert db.rows(f"SELECT id, body FROM peek_queue({q1}, 2)") == [[str(first), "a"]]
    assert db.rows(f"SELECT id, body FROM pop_queue({q1}, 2)") == [[str(first), "a"]]
    assert db.rows(f"SELECT id, body FROM pop_queue({q1}, 2)") == [[str(second), "b"]]
    assert db.rows(f"SELECT id FROM pop_queue({q1}, 2)") == []
    # pop_message: the oldest from one sender, whatever the queue.
    _send(db, 3, 2, q2, "d")
    assert db.rows("SELECT body FROM pop_message(3, 2)") == [["d"]]
    assert db.rows("SELECT body FROM pop_message(1, 2)") == [["c"]]
    # Deleting a queue deletes its messages.
    _send(db, 1, 2, q2, "e")
    db.psql(f"SELECT delete_queue({q2})")
    assert db.rows("SELECT count(*) FROM messages") == [["0"]]
    db.psql("SELECT delete_client(3)")
    assert db.rows("SELECT id FROM clients ORDER BY id") == [["1"], ["2"]]


def test_foreign_keys_and_what_cannot_be_deleted(postgres: PostgresServer) -> None:
    db = postgres
    db.psql("SELECT add_client(1)")
    queue = int(db.rows("SELECT add_queue()")[0][0])
    with pytest.raises(PostgresError, match="foreign key"):
        _send(db, 1, 99, queue, "to nobody")
    with pytest.raises(PostgresError, match="foreign key"):
        _send(db, 1, 1, queue + 5, "to no queue")
    _send(db, 1, 1, queue, "kept")
    with pytest.raises(PostgresError, match="client 1 still has messages"):
        db.psql("SELECT delete_client(1)")
    with pytest.raises(PostgresError, match="no client 7"):
        db.psql("SELECT delete_client(7)")
    with pytest.raises(PostgresError, match="no queue 42"):
        db.psql("SELECT delete_queue(42)")
    with pytest.raises(PostgresError, match="duplicate key"):
        db.psql("SELECT add_client(1)")
    assert db.rows("SELECT body FROM messages") == [["kept"]]


@pytest.mark.parametrize("strategy", ["skip_locked", "naive"])
def test_each_pop_strategy_removes_the_oldest_once(
    start_postgres: Callable[..., PostgresServer], strategy: str
) -> None:
    db = start_postgres(strategy)
    db.psql("SELECT add_client(1); SELECT add_queue()")
    ids = [_send(db, 1, 1, 1, f"m{i}") for i in range(5)]
    popped = [db.rows("SELECT id FROM pop_queue(1, 1)")[0][0] for _ in range(5)]
    assert popped == [str(i) for i in ids]
    assert db.rows("SELECT id FROM pop_queue(1, 1)") == []


def test_the_server_is_set_up_fast_and_leaves_its_statistics(
    start_postgres: Callable[..., PostgresServer],
) -> None:
    db = start_postgres()
    db.stop()
    # initdb, start and the schema: the setup a series pays once.
    assert set(db.timings) == {"initdb_s", "start_s", "schema_s"}
    stats = db.dir / "stats"
    assert "synchronous_commit" in (stats / "settings.tsv").read_text()
    assert (stats / "pg_stat_database.tsv").read_text().startswith("datid")
    assert db.cluster is not None and not db.cluster.exists()


def test_a_plan_whose_workers_do_not_fit_the_server_is_refused(tmp_path: Path) -> None:
    host = LocalHost(name="db", role="server", address="127.0.0.1", base=tmp_path)
    db = PostgresServer(host, "postgres", 5432, max_connections=36)
    db.admit(32)
    with pytest.raises(PostgresError, match=r"33 database connections .* do not fit"):
        db.admit(33)
    with pytest.raises(PostgresError, match="pop strategy 'fast'"):
        PostgresServer(host, "postgres", 5432, 10, strategy="fast")
    with pytest.raises(PostgresError, match=r"commit delay 100001 µs: PostgreSQL takes 0 to"):
        PostgresServer(host, "postgres", 5432, 10, commit_delay_us=100_001)


COMMITS = 20


def timed_commits(db: PostgresServer) -> float:
    """Seconds for COMMITS transactions in a row, each its own commit (one psql session)."""
    script = "\n".join(f"INSERT INTO clients (id) VALUES ({1000 + i});" for i in range(COMMITS))
    started = time.monotonic()
    db.psql(script)
    return time.monotonic() - started


def test_a_commit_delay_makes_every_commit_wait_before_its_flush(start_postgres) -> None:
    # The scale model's stand-in for a slower disk: each commit of a lone session waits the
    # delay (commit_siblings 0), so COMMITS commits take at least COMMITS delays. A lower
    # bound only: a loaded machine can only make them slower.
    delay_us = 20_000
    db = start_postgres(commit_delay_us=delay_us)
    names = "'commit_delay', 'commit_siblings', 'fsync'"
    settings = dict(db.rows(f"SELECT name, setting FROM pg_settings WHERE name IN ({names})"))
    assert settings == {"commit_delay": str(delay_us), "commit_siblings": "0", "fsync": "on"}
    assert timed_commits(db) >= COMMITS * delay_us / 1e6
    assert db.rows("SELECT count(*) FROM clients") == [[str(COMMITS)]]
    # Without it the server keeps PostgreSQL's default: no delay.
    plain = start_postgres()
    assert plain.rows("SELECT setting FROM pg_settings WHERE name = 'commit_delay'") == [["0"]]
