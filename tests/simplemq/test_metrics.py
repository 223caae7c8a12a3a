"""Queue metrics (QUEUE_METRICS, middleware/simplemq/sql/metrics.sql) through a real middleware
on a real PostgreSQL: the messages waiting and leased, and the oldest waiting one's age by
its sender's clock, as a read and an ack move them."""

from __future__ import annotations

import time

from testbed.hosts import Proc
from testbed.mqwire import Connection
from testbed.services.postgres import PostgresServer


def test_metrics_follow_messages_through_their_states(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        queue = c.open_queue(1)
        assert c.call("queue_metrics", queue).metrics == (0, 0, 0, -1)
        sent_at_us = int(time.time() * 1e6) - 5_000_000  # sent 5 s ago by its sender's clock
        for i in range(3):
            sent = c.call("send", 1, 1, queue, body=f"1:{i}:x".encode(), sent_at_us=sent_at_us)
            assert sent.status == "ok"
        visible, leased, dead, age_ms = c.call("queue_metrics", queue).metrics or ()
        assert (visible, leased, dead) == (3, 0, 0)
        assert 5_000 <= age_ms < 65_000
        leases = c.call("read", queue, 1, 60_000, 2).leased or ()
        assert c.call("queue_metrics", queue).metrics[:3] == (1, 2, 0)
        assert c.call("ack", leases[0].message.id).status == "ok"
        assert c.call("queue_metrics", queue).metrics[:3] == (1, 1, 0)
    assert postgres.rows("SELECT count(*) FROM leases") == [["1"]]
