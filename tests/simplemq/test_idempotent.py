"""Idempotent send (SEND_ONCE, middleware/simplemq/sql/idempotent.sql) through a real middleware
on a real PostgreSQL: a key a sender used before stores nothing and answers the first send's
message id, even once that message was popped; keys are per sender; a send the database refuses
claims no key."""

from __future__ import annotations

from testbed.hosts import Proc
from testbed.mqwire import Connection
from testbed.services.postgres import PostgresServer


def test_a_key_sent_again_stores_once_and_answers_the_first_id(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        queue = c.open_queue(1, 2)
        first = c.call("send_once", 1, 2, queue, 7, body=b"1:7:x")
        again = c.call("send_once", 1, 2, queue, 7, body=b"1:7:x")
        assert first.status == again.status == "ok" and first.id is not None
        assert again.id == first.id
        # The same key of another sender is another message.
        other = c.call("send_once", 2, 2, queue, 7, body=b"2:7:x")
        assert other.id not in (None, first.id)
        assert postgres.rows("SELECT count(*) FROM messages") == [["2"]]
        # Popped, the message is gone, and its key still answers its id without storing it.
        popped = c.call("pop_from_sender", 1, 2)
        assert popped.message is not None and popped.message.id == first.id
        assert c.call("send_once", 1, 2, queue, 7, body=b"1:7:x").id == first.id
        assert c.call("pop_from_sender", 1, 2).status == "empty"
        # Plain sends are untouched by keys.
        plain = [c.call("send", 1, 2, queue, body=b"1:8:x").id for _ in range(2)]
        assert len(set(plain)) == 2
        # A send the database refuses (an unknown receiver) claims no key: sent right, it stores.
        refused = c.call("send_once", 1, 99, queue, 9, body=b"1:9:x")
        assert refused.status == "unknown_reference"
        stored = c.call("send_once", 1, 2, queue, 9, body=b"1:9:x")
        assert stored.status == "ok" and stored.id is not None
    assert postgres.rows("SELECT count(*) FROM send_keys") == [["3"]]
