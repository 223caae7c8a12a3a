"""Batches (SEND_BATCH, POP_BATCH, ACK_BATCH; middleware/simplemq/sql/batch.sql) through a real
middleware on a real PostgreSQL: a batch send stores every message in order or none, a batch pop
removes up to k of the oldest, and a batch ack ends the leases it names and says which."""

from __future__ import annotations

from testbed.hosts import Proc
from testbed.mqwire import Connection
from testbed.services.postgres import PostgresServer

HIDDEN_MS = 60_000


def test_a_batch_is_stored_popped_and_acked_in_one_request_each(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        queue = c.open_queue(1)
        bodies = tuple(f"1:{i}:x".encode() for i in range(5))
        sent = c.call("send_batch", 1, 1, queue, bodies=bodies)
        assert sent.status == "ok" and sent.ids is not None and len(sent.ids) == 5
        assert list(sent.ids) == sorted(sent.ids)
        # Up to k of the oldest, in id order, each once.
        first = c.call("pop_batch", queue, 1, 3)
        assert first.messages is not None
        assert [m.id for m in first.messages] == list(sent.ids[:3])
        assert [m.body for m in first.messages] == list(bodies[:3])
        rest = c.call("pop_batch", queue, 1, 16)
        assert [m.id for m in rest.messages or ()] == list(sent.ids[3:])
        assert c.call("pop_batch", queue, 1, 16).status == "empty"

        # Leases acked as a batch: the reply names those it ended, not an unknown id.
        more = c.call("send_batch", 1, 1, queue, bodies=bodies[:3])
        assert more.ids is not None
        leased = c.call("read", queue, 1, HIDDEN_MS, 16).leased or ()
        assert [x.message.id for x in leased] == list(more.ids)
        acked = c.call("ack_batch", more.ids[0], more.ids[2], 1 << 40)
        assert acked.status == "ok" and acked.ids == (more.ids[0], more.ids[2])
        assert c.call("ack_batch", more.ids[0], more.ids[1]).ids == (more.ids[1],)

        # One statement, one transaction: a batch to an unknown receiver stores nothing.
        refused = c.call("send_batch", 1, 99, queue, bodies=bodies)
        assert refused.status == "unknown_reference"
        # Out of bounds: refused before the database, and the connection serves on.
        assert c.call("pop_batch", queue, 1, 17).status == "malformed"
        assert c.call("send_batch", 1, 1, queue, bodies=()).status == "malformed"
        assert c.call("ack_batch").status == "malformed"
        assert c.call("pop_batch", queue, 1, 1).status == "empty"
    assert postgres.rows(
        "SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM leases)"
    ) == [["0"]]
