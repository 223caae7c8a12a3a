"""The SimpleMQ middleware (middleware/simplemq) between a real PostgreSQL and a client that
speaks its frames: every operation, the error replies to bad input with the connection still
usable after them, and SIGTERM's drain."""

from __future__ import annotations

import json
import signal
import struct
import threading
import time
from collections.abc import Callable

import pandas as pd

from testbed.hosts import Proc
from testbed.mqwire import Connection, frame, request
from testbed.services.postgres import PostgresServer


def test_every_operation_through_the_middleware(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        assert c.call("create_client", 1).status == "ok"
        assert c.call("create_client", 2).status == "ok"
        queue = c.call("create_queue").id
        assert queue is not None
        sent = c.call("send", 1, 2, queue, body=b"1:0:hello")
        assert sent.status == "ok" and sent.id is not None
        assert c.call("query_queues", 2).queues == (queue,)
        peeked = c.call("peek_queue", queue, 2).message
        assert peeked is not None and peeked.body == b"1:0:hello" and peeked.id == sent.id
        popped = c.call("pop_queue", queue, 2).message
        assert popped is not None and popped.id == sent.id and popped.sender == 1
        assert c.call("pop_queue", queue, 2).status == "empty"
        c.call("send", 2, 1, queue, body=b"2:0:back")
        assert c.call("pop_from_sender", 2, 1).message.body == b"2:0:back"
        assert c.call("delete_queue", queue).status == "ok"
        assert c.call("delete_client", 2).status == "ok"
    assert postgres.rows("SELECT id FROM clients") == [["1"]]


def test_errors_of_the_database_get_their_codes(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        c.call("create_client", 1)
        queue = c.call("create_queue").id
        bad = c.call("send", 1, 99, queue, body=b"x")
        assert bad.status == "unknown_reference" and "foreign key" in bad.text
        assert c.call("create_client", 1).status == "conflict"
        assert c.call("delete_queue", 4242).status == "not_found"
        c.call("send", 1, 1, queue, body=b"kept")
        refused = c.call("delete_client", 1)
        assert refused.status == "unknown_reference" and "still has messages" in refused.text
    assert postgres.rows("SELECT body FROM messages") == [["kept"]]


def test_bad_input_is_refused_and_the_connection_stays_usable(
    postgres: PostgresServer, middleware: tuple[Proc, int]
) -> None:
    _, port = middleware
    with Connection("127.0.0.1", port) as c:
        c.call("create_client", 1)
        queue = c.call("create_queue").id

        def then_still_usable(raw: bytes, status: str, request_id: int) -> None:
            c.send_raw(raw)
            reply = c.receive()
            assert (reply.status, reply.request_id) == (status, request_id), reply.text
            assert c.call("peek_queue", queue, 1).status == "empty"

        then_still_usable(frame(struct.pack(">IB", 501, 99)), "unknown_op", 501)
        then_still_usable(frame(struct.pack(">IBi", 502, 7, 1)), "malformed", 502)  # pop, short
        then_still_usable(frame(struct.pack(">IBii", 503, 7, 1, 1) + b"\0"), "malformed", 503)
        then_still_usable(frame(b"\0\0"), "malformed", 0)
        then_still_usable(request(504, "send", 1, 1, queue, body=b"x" * 5000),
                          "payload_too_large", 504)  # fmt: skip
        then_still_usable(request(505, "send", 1, 1, queue, body="é".encode()), "malformed", 505)
        oversized = struct.pack(">II", 200_000, 506) + b"\0" * (200_000 - 4)
        then_still_usable(oversized, "frame_too_large", 506)
        then_still_usable(request(507, "send", 1, 77, queue, body=b"x"), "unknown_reference", 507)
    # Nothing malformed reached the database.
    assert postgres.rows("SELECT count(*) FROM messages") == [["0"]]


def test_sigterm_drains_so_every_popped_message_reaches_its_client(
    postgres: PostgresServer,
    start_middleware: Callable[..., tuple[Proc, int]],
) -> None:
    messages = 400
    postgres.psql("SELECT add_client(1); SELECT add_queue()")
    postgres.psql(
        "SELECT add_message(1, 1, 1, now(), '1:' || i || ':')"
        f" FROM generate_series(1, {messages}) i"
    )
    proc, port = start_middleware(postgres, workers=8)
    received: list[int] = []
    lock = threading.Lock()
    refused = []

    def pop_until_refused() -> None:
        with Connection("127.0.0.1", port) as c:
            while True:
                try:
                    reply = c.call("pop_queue", 1, 1)
                except ConnectionError:
                    return
                if reply.status != "ok":
                    refused.append(reply.status)
                    return
                with lock:
                    received.append(reply.message.id)

    threads = [threading.Thread(target=pop_until_refused) for _ in range(16)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60.0
    while len(received) < messages // 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    with lock:
        at_signal = len(received)
    proc.signal(signal.SIGTERM)
    assert proc.wait(60.0) == 0
    for t in threads:
        t.join(30.0)
    remaining = int(postgres.rows("SELECT count(*) FROM messages")[0][0])
    # The signal landed mid-stream: pops were under way, and messages were left for none.
    assert messages // 4 <= at_signal < messages and remaining > 0, (at_signal, remaining)
    # Every message the middleware removed reached a client: none vanished in the drain.
    assert len(received) + remaining == messages
    assert len(set(received)) == len(received)
    stats = proc.host.base / "stats"
    summary = json.loads((stats / "summary.json").read_text())
    assert summary["operations"]["pop_queue"]["lost_replies"] == 0
    assert set(refused) <= {"shutting_down", "empty"}
    # The time series, in the memcached middleware's layout, counts every answered pop.
    windows = pd.read_csv(stats / "windows.csv")
    pops = windows[windows["type"] == "pop_queue"]
    assert int(pops["count"].sum()) == summary["operations"]["pop_queue"]["response_us"]["count"]
    assert int(pops["values_returned"].sum()) == len(received)
    assert (pd.read_csv(stats / "queue.csv")["workers_busy_mean"] <= 8).all()
