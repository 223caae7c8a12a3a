"""Blocking pops and reads (POP_WAIT, READ_WAIT; `--notify`, middleware/simplemq/sql/notify.sql)
through a real middleware on a real PostgreSQL: a waiting pop is answered by the message a
later send stores, well before its wait ends, and a wait that nothing ends answers EMPTY; while
they wait, the consumers make no database call: the middleware's statistics count each wait's
tries (one, then one when woken) and the database counts the pops."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable

from testbed.hosts import Proc
from testbed.mqwire import Connection, Reply
from testbed.services.postgres import PostgresServer

WAIT_MS = 30_000  # far longer than the test needs: an answer before it came from the send


def test_a_waiting_pop_is_woken_by_a_send_and_polls_nothing_meanwhile(
    postgres: PostgresServer, start_middleware: Callable[..., tuple[Proc, int]]
) -> None:
    db = postgres
    db.psql("SELECT add_client(1); SELECT add_client(2); SELECT add_queue()")
    proc, port = start_middleware(db, extra=["--notify"])
    got: list[Reply] = []
    waiting = Connection("127.0.0.1", port, timeout=60.0)
    consumer = threading.Thread(
        target=lambda: got.append(waiting.call("pop_wait", 1, 2, WAIT_MS)), daemon=True
    )
    started = time.monotonic()
    consumer.start()
    # The consumer waits (parked at the middleware): two seconds of it are no database calls.
    time.sleep(2.0)
    assert not got and consumer.is_alive()
    with Connection("127.0.0.1", port) as producer:
        sent = producer.call("send", 1, 2, 1, body=b"1:0:x").id
        consumer.join(30.0)
        assert got and got[0].status == "ok" and got[0].message is not None
        assert got[0].message.id == sent
        assert time.monotonic() - started < WAIT_MS / 1000 / 2
        # Nothing to wake it: the wait ends and answers EMPTY; a lease read waits the same way.
        assert producer.call("pop_wait", 1, 2, 500).status == "empty"
        assert producer.call("read_wait", 1, 2, 60_000, 4, 300).status == "empty"
        # Out of bounds, refused before the database.
        assert producer.call("pop_wait", 1, 2, 60_001).status == "malformed"
    waiting.close()
    proc.signal(signal.SIGTERM)
    assert proc.wait(60.0) == 0
    summary = json.loads((proc.host.base / "stats" / "summary.json").read_text())
    ops = summary["operations"]
    # Each wait was tried when it arrived and once more when woken or ended: 2 database calls
    # each, however long it waited, where polling every 10 ms would have made hundreds.
    assert summary["waits"] == {"parked": 3, "woken": 3}
    assert ops["pop_wait"]["replies"] == {"ok": 1, "empty": 1}
    assert summary["rejected"]["malformed"] == 1
    assert ops["read_wait"]["replies"] == {"empty": 1}


def test_without_notify_a_wait_is_refused_with_a_reason(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        c.call("create_client", 1)
        reply = c.call("pop_wait", 1, 1, 100)
        assert reply.status == "malformed" and "--notify" in (reply.text or "")
