"""SimpleMQ's lease mode (middleware/simplemq/sql/lease.sql) on a real PostgreSQL: a read hides
what it leased until its visibility timeout, an ack deletes, a nack reveals, a message read
too often is dead-lettered, a leased message is never popped, and the leases live in the
database, so they outlast a middleware. Then the READ, ACK and NACK frames through a real
middleware (testbed/mqwire.py).

No deadline is tight: a lease that must stay hidden is leased for a minute, and one that must
come back is polled for with a generous timeout."""

from __future__ import annotations

import signal
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable

from testbed.hosts import Proc
from testbed.mqwire import Connection, Leased, frame
from testbed.services.postgres import PostgresServer

HIDDEN_MS = 60_000  # outlasts any test: a lease this long never comes back during one
POLL_S = 60.0


def _send(db: PostgresServer, body: str, queue: int = 1, receiver: int = 1) -> int:
    return int(db.rows(f"SELECT add_message(1, {receiver}, {queue}, now(), '{body}')")[0][0])


def _read(db: PostgresServer, vt_ms: int, k: int, prefix: str = "") -> list[tuple[int, int]]:
    """(id, deliveries) of what one read leased, in id order."""
    rows = db.rows(f"{prefix}SELECT id, deliveries FROM read_queue(1, 1, {vt_ms}, {k})")
    return [(int(i), int(d)) for i, d in rows]


def _setup(db: PostgresServer) -> None:
    db.psql("SELECT add_client(1); SELECT add_queue()")


def _poll(what: Callable[[], list], timeout: float = POLL_S) -> list:
    """The first non-empty result of `what`, polled until `timeout` seconds passed."""
    deadline = time.monotonic() + timeout
    while not (found := what()):
        assert time.monotonic() < deadline, f"nothing after {timeout:.0f} s"
        time.sleep(0.1)
    return found


def test_a_read_hides_what_it_leased_until_the_timeout_then_redelivers_it(
    postgres: PostgresServer,
) -> None:
    db = postgres
    _setup(db)
    kept, other, short = (_send(db, f"m{i}") for i in range(3))
    assert _read(db, HIDDEN_MS, 1) == [(kept, 1)]
    # A leased message is out of every other call's sight: peek and query see the next one.
    assert db.rows("SELECT id FROM peek_queue(1, 1)") == [[str(other)]]
    assert db.rows("SELECT * FROM query_queues(1)") == [["1"]]
    assert _read(db, HIDDEN_MS, 1) == [(other, 1)]
    assert _read(db, 300, 16) == [(short, 1)]
    # The short lease comes back with its count raised; the minute-long ones stay hidden.
    assert _poll(lambda: _read(db, HIDDEN_MS, 16)) == [(short, 2)]
    assert _read(db, HIDDEN_MS, 16) == []
    rows = db.rows("SELECT id, deliveries, visible_at > now() + interval '50 s' FROM leases")
    assert sorted(rows) == sorted([[str(kept), "1", "t"], [str(other), "1", "t"],
                                   [str(short), "2", "t"]])  # fmt: skip
    assert db.rows("SELECT count(*) FROM messages") == [["0"]]


def test_ack_deletes_nack_reveals_and_an_unknown_id_answers_false(
    postgres: PostgresServer,
) -> None:
    db = postgres
    _setup(db)
    a, b = _send(db, "a"), _send(db, "b")
    assert _read(db, HIDDEN_MS, 2) == [(a, 1), (b, 1)]
    assert db.rows(f"SELECT ack_message({a}), ack_message({a}), ack_message(4242)") == [
        ["t", "f", "f"]
    ]
    assert db.rows(f"SELECT nack_message({b}), nack_message({a})") == [["t", "f"]]
    # A nack makes the message visible at once; its delivery count stays and rises on reading.
    assert _read(db, HIDDEN_MS, 2) == [(b, 2)]
    # A message never read is not leased: no ack removes it from under a pop.
    c = _send(db, "c")
    assert db.rows(f"SELECT ack_message({c}), nack_message({c})") == [["f", "f"]]
    assert db.rows("SELECT id FROM messages") == [[str(c)]]
    assert db.rows("SELECT id FROM leases") == [[str(b)]]


def test_a_message_read_max_deliveries_times_is_dead_lettered_when_read_again(
    postgres: PostgresServer,
) -> None:
    db = postgres
    _setup(db)
    assert db.rows("SELECT max_deliveries()") == [["5"]]  # the default
    m, other = _send(db, "m"), _send(db, "other")
    # Visible again at once (vt 0): every read of the one session delivers it once more.
    two = "SET simplemq.max_deliveries = 2; "
    assert _read(db, 0, 1, two) == [(m, 1)]
    assert _read(db, 0, 1, two) == [(m, 2)]
    # The third read finds it delivered twice: it is dead-lettered, and the read goes on to
    # the next message instead.
    assert _read(db, HIDDEN_MS, 1, two) == [(other, 1)]
    assert db.rows("SELECT id, deliveries, body FROM dead_letters") == [[str(m), "2", "m"]]
    assert db.rows("SELECT id FROM leases") == [[str(other)]]
    assert db.rows(f"SELECT ack_message({m})") == [["f"]]
    # With the default, five deliveries before the archive.
    n = _send(db, "n")
    assert [_read(db, 0, 1) for _ in range(5)] == [[(n, d)] for d in range(1, 6)]
    assert _read(db, 0, 1) == []
    assert db.rows(f"SELECT deliveries FROM dead_letters WHERE id = {n}") == [["5"]]


def test_a_leased_message_is_never_popped(postgres: PostgresServer) -> None:
    db = postgres
    _setup(db)
    leased, popped = _send(db, "leased"), _send(db, "popped")
    assert _read(db, 0, 1) == [(leased, 1)]  # visible again at once, to reads only
    assert db.rows("SELECT id FROM pop_queue(1, 1)") == [[str(popped)]]
    assert db.rows("SELECT id FROM pop_queue(1, 1)") == []
    assert db.rows("SELECT id FROM pop_message(1, 1)") == []
    assert _read(db, 0, 16) == [(leased, 2)]


def test_concurrent_pops_and_reads_never_deliver_one_message_twice(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    db = postgres
    _setup(db)
    total = 400
    db.psql(f"SELECT add_message(1, 1, 1, now(), 'm' || i) FROM generate_series(1, {total}) i")
    _, port = middleware
    got: list[tuple[str, int]] = []
    lock = threading.Lock()

    def consume(how: str) -> None:
        with Connection("127.0.0.1", port, timeout=120.0) as c:
            while True:
                if how == "pop":
                    r = c.call("pop_queue", 1, 1)
                    ids = [r.message.id] if r.message else []
                else:
                    r = c.call("read", 1, 1, HIDDEN_MS, 3)
                    ids = [x.message.id for x in r.leased or ()]
                    for i in ids:
                        assert c.call("ack", i).status == "ok"
                if r.status == "empty":
                    return
                with lock:
                    got.extend((how, i) for i in ids)

    threads = [threading.Thread(target=consume, args=(h,)) for h in ("pop", "read") * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300.0)
    seen = Counter(i for _, i in got)
    assert len(seen) == total and max(seen.values()) == 1
    # Both kinds took part, and nothing is left: pops removed theirs, acks the leased ones.
    assert {h for h, _ in got} == {"pop", "read"}
    assert db.rows("SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM leases)") == [
        ["0"]
    ]


def test_the_lease_frames_through_the_middleware(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        c.call("create_client", 1)
        queue = c.call("create_queue").id
        assert queue is not None
        assert c.call("read", queue, 1, HIDDEN_MS, 4).status == "empty"
        ids = [c.call("send", 1, 1, queue, body=f"1:{i}:x".encode()).id for i in range(3)]
        r = c.call("read", queue, 1, HIDDEN_MS, 2)
        assert r.status == "ok" and r.leased is not None
        assert [(x.message.id, x.deliveries) for x in r.leased] == [(ids[0], 1), (ids[1], 1)]
        first = r.leased[0]
        assert isinstance(first, Leased) and first.message.body == b"1:0:x"
        assert (first.message.sender, first.message.receiver, first.message.queue) == (
            1,
            1,
            queue,
        )
        assert c.call("ack", ids[0]).status == "ok"
        # Acked already, or never leased: a status, not an error, and the connection serves on.
        assert c.call("ack", ids[0]).status == "not_leased"
        assert c.call("ack", 1 << 40).status == "not_leased"
        assert c.call("nack", ids[2]).status == "not_leased"
        assert c.call("nack", ids[1]).status == "ok"
        again = c.call("read", queue, 1, HIDDEN_MS, 16)
        assert [(x.message.id, x.deliveries) for x in again.leased or ()] == [
            (ids[1], 2),
            (ids[2], 1),
        ]
        # Fields a read or an ack does not take are refused before the database.
        for raw, rid in (
            (struct.pack(">IBiiii", 601, 10, queue, 1, 1000, 0), 601),  # k 0
            (struct.pack(">IBiiii", 602, 10, queue, 1, 1000, 17), 602),  # k over 16
            (struct.pack(">IBiiii", 603, 10, queue, 1, -1, 1), 603),  # negative timeout
            (struct.pack(">IBi", 604, 11, 7), 604),  # an ack's id is an i64
            (struct.pack(">IBqB", 605, 12, 7, 0), 605),  # a nack with a byte after its id
        ):
            c.send_raw(frame(raw))
            bad = c.receive()
            assert (bad.status, bad.request_id) == ("malformed", rid), bad.text
        assert c.call("read", queue, 1, HIDDEN_MS, 1).status == "empty"


def test_leases_live_in_the_database_and_outlast_a_killed_middleware(
    postgres: PostgresServer, start_middleware: Callable[..., tuple[Proc, int]]
) -> None:
    db = postgres
    _setup(db)
    long_, short = _send(db, "1:0:x"), _send(db, "1:1:x")
    first, port = start_middleware(db)
    with Connection("127.0.0.1", port) as c:
        assert [x.message.id for x in c.call("read", 1, 1, HIDDEN_MS, 1).leased or ()] == [long_]
        assert [x.message.id for x in c.call("read", 1, 1, 500, 1).leased or ()] == [short]
    first.signal(signal.SIGKILL)
    first.wait(30.0)
    _, port2 = start_middleware(db)
    with Connection("127.0.0.1", port2) as c:
        # The short lease ran out meanwhile or soon: back, counted; the long one still holds.
        back = _poll(lambda: list(c.call("read", 1, 1, HIDDEN_MS, 16).leased or ()))
        assert [(x.message.id, x.deliveries) for x in back] == [(short, 2)]
        assert c.call("read", 1, 1, HIDDEN_MS, 16).status == "empty"
        # A new middleware settles the old one's lease: a nack gives it back, an ack ends it.
        assert c.call("nack", long_).status == "ok"
        again = c.call("read", 1, 1, HIDDEN_MS, 16).leased or ()
        assert [(x.message.id, x.deliveries) for x in again] == [(long_, 2)]
        assert c.call("ack", long_).status == "ok" and c.call("ack", short).status == "ok"
    assert db.rows("SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM leases)") == [
        ["0"]
    ]
