"""The SimpleMQ middleware's limits (middleware/simplemq/README.md, "Limits"), against a real
PostgreSQL and the real jar: a client that floods requests and takes no replies is no longer
read while others are served, a frame left unfinished is closed after the frame timeout, a
connection over the cap is refused with a frame it can read, a declared length over
--max-frame is refused before anything is allocated, a worker that fails on a request
answers it and goes on serving, and a limit out of range is a usage error. Every wait polls
with a generous timeout."""

from __future__ import annotations

import bisect
import itertools
import json
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from testbed.hosts import Proc
from testbed.mqwire import Connection, parse_reply, request
from testbed.services.middleware import SIMPLEMQ_JAR as JAR
from testbed.services.postgres import PostgresServer

LOOPBACK = "127.0.0.1"
TOO_MANY_CONNECTIONS = 25  # the refusal's status (not in testbed.mqwire's table)
BODY = b"m" * 4000
StartMiddleware = Callable[..., tuple[Proc, int]]


def stopped_summary(proc: Proc) -> dict[str, Any]:
    """Drains the middleware with SIGTERM and gives its summary.json."""
    proc.signal(signal.SIGTERM)
    assert proc.wait(120.0) == 0
    summary: dict[str, Any] = json.loads((proc.host.base / "stats" / "summary.json").read_text())
    return summary


def stderr_of(proc: Proc) -> str:
    return (proc.host.base / "stderr.log").read_text()


class Frames:
    """The frames of one socket's stream, read whole."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def next(self, timeout: float = 60.0) -> bytes | None:
        """The next frame's body, or None at the end of the stream."""
        self.sock.settimeout(timeout)
        while len(self.buffer) < 4 or len(self.buffer) < 4 + self.length():
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            self.buffer += chunk
        body, self.buffer = self.buffer[4 : 4 + self.length()], self.buffer[4 + self.length() :]
        return body

    def length(self) -> int:
        return int(struct.unpack_from(">I", self.buffer)[0])


def read_frame(sock: socket.socket) -> bytes | None:
    """The first frame of a stream that has only it (a refusal)."""
    return Frames(sock).next()


def closed_by_peer(sock: socket.socket, timeout: float) -> bool:
    """Whether the peer closes `sock` within `timeout` seconds, sending nothing more."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_flooding_client_is_no_longer_read_while_others_are_served(
    postgres: PostgresServer, start_middleware: StartMiddleware
) -> None:
    proc, port = start_middleware(
        postgres, workers=2, extra=["--max-pending", "8", "--max-output", "65536"]
    )
    with Connection(LOOPBACK, port) as setup:
        setup.call("create_client", 1)
        queue = setup.call("create_queue").id
        assert queue is not None
        assert setup.call("send", 1, 1, queue, body=BODY).status == "ok"
    # Each pair sends 4 KiB and asks for 4 KiB back (a peek of the first message). The client
    # reads nothing and keeps its socket buffers small, so its replies pile up in the
    # middleware until it stops reading; then TCP stops this client's sends.
    frames = [
        f
        for i in range(10_000)
        for f in (
            request(2 * i + 1, "send", 1, 1, queue, body=BODY),
            request(2 * i + 2, "peek_queue", queue, 1),
        )
    ]
    ends = list(itertools.accumulate(len(f) for f in frames))
    stream = b"".join(frames)
    flood = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    flood.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    flood.connect((LOOPBACK, port))
    sent = 0
    # No progress for 5 s: held back (the middleware answers these in milliseconds).
    flood.settimeout(5.0)
    try:
        while sent < len(stream):
            sent += flood.send(stream[sent : sent + 65536])
        raise AssertionError(f"all {len(frames)} requests were taken: the client was not held")
    except TimeoutError:
        pass
    # Held back, but only this client: another one is served as usual meanwhile.
    with Connection(LOOPBACK, port) as other:
        for _ in range(20):
            peeked = other.call("peek_queue", queue, 1)
            assert peeked.status == "ok" and peeked.message is not None
            assert peeked.message.body == BODY
        assert other.call("create_client", 2).status == "ok"
    # Once the client reads, the middleware reads it again: every request it sent is answered,
    # in order, and the one it was cut inside once its rest is sent.
    whole = bisect.bisect_right(ends, sent)
    replies = Frames(flood)
    for rid in range(1, whole + 1):
        body = replies.next()
        assert body is not None, f"the connection closed before reply {rid} of {whole}"
        reply = parse_reply(body)
        assert (reply.request_id, reply.status) == (rid, "ok"), reply.text
        if rid % 2 == 0:
            assert reply.message is not None and reply.message.body == BODY
    flood.settimeout(60.0)
    flood.sendall(stream[sent : ends[whole]])
    body = replies.next()
    assert body is not None and parse_reply(body).request_id == whole + 1
    flood.close()
    # Sends are the odd requests: those of the whole + 1 answered, and the setup's.
    assert int(postgres.rows("SELECT count(*) FROM messages")[0][0]) == 1 + (whole + 2) // 2
    summary = stopped_summary(proc)
    assert summary["connections"]["read_pauses"] >= 1
    assert summary["config"]["max_pending"] == 8
    assert summary["config"]["max_output"] == 65536
    assert summary["operations"]["peek_queue"]["lost_replies"] == 0


def test_a_frame_left_unfinished_is_closed_after_the_frame_timeout(
    postgres: PostgresServer, start_middleware: StartMiddleware
) -> None:
    proc, port = start_middleware(postgres, extra=["--frame-timeout-ms", "2000"])
    with (
        Connection(LOOPBACK, port) as quiet,
        Connection(LOOPBACK, port) as slow,
        socket.create_connection((LOOPBACK, port)) as cut,
    ):
        whole = request(7, "create_client", 5)
        cut.sendall(whole[:6])  # the length, and two bytes of the request
        since = time.monotonic()
        # A frame sent in pieces well within the timeout is read whole.
        for piece in (whole[:3], whole[3:9], whole[9:]):
            slow.send_raw(piece)
            time.sleep(0.1)
        assert slow.receive().status == "ok"
        assert closed_by_peer(cut, 120.0), "the unfinished frame's connection stayed open"
        # Not before the timeout: it counts from the last byte the middleware read.
        assert time.monotonic() - since >= 1.9
        # A connection between frames is not timed out, however long it waits.
        assert quiet.call("query_queues", 5).status == "ok"
    summary = stopped_summary(proc)
    assert summary["connections"]["frame_timeouts"] == 1
    assert summary["config"]["frame_timeout_ms"] == 2000
    # The cut request never reached the database.
    assert postgres.rows("SELECT id FROM clients") == [["5"]]


def served_connection(port: int, client: int) -> Connection:
    """A connection the middleware serves, once it has room: it creates `client`."""
    deadline = time.monotonic() + 60.0
    while True:
        c = Connection(LOOPBACK, port)
        c.send_raw(request(c.next_id, "create_client", client))
        reply = c.receive()
        if reply.status != "too_many_connections":
            # Served: the reply is the request's.
            assert (reply.request_id, reply.status) == (c.next_id, "ok"), reply
            c.next_id += 1
            return c
        # Refused (a frame with request id 0) until the middleware saw a served one close.
        assert reply.request_id == 0, reply
        c.close()
        assert time.monotonic() < deadline, "no room for a connection within 60 s"
        time.sleep(0.2)


def refusal(sock: socket.socket) -> tuple[int, int, str]:
    """The refusal frame a connection over the cap gets: request id, status and text."""
    body = read_frame(sock)
    assert body is not None, "closed without a refusal"
    request_id, status, n = struct.unpack_from(">IBH", body)
    return request_id, status, body[7 : 7 + n].decode()


def test_the_connection_over_the_cap_is_refused_with_a_frame_it_can_read(
    postgres: PostgresServer, start_middleware: StartMiddleware
) -> None:
    proc, port = start_middleware(postgres, extra=["--max-connections", "3"])
    # The readiness probe's connection may count until the middleware saw it close.
    served = [served_connection(port, 10 + i) for i in range(3)]
    # One over the cap, reading first; one that sends a request at once, as clients do.
    with socket.create_connection((LOOPBACK, port), timeout=60.0) as late:
        request_id, status, text = refusal(late)
        assert (request_id, status) == (0, TOO_MANY_CONNECTIONS)
        assert "at most 3 connections" in text
        assert closed_by_peer(late, 60.0)
    with socket.create_connection((LOOPBACK, port), timeout=60.0) as eager:
        eager.sendall(request(1, "create_client", 99))
        assert refusal(eager)[1] == TOO_MANY_CONNECTIONS
        assert closed_by_peer(eager, 60.0)
    # The served connections are untouched; once one closes, a new one is served.
    for c in served:
        assert c.call("query_queues", 10).status == "ok"
    served.pop().close()
    served.append(served_connection(port, 20))
    for c in served:
        c.close()
    summary = stopped_summary(proc)
    assert summary["connections"]["refused"] >= 2
    assert summary["config"]["max_connections"] == 3
    # The refused request never reached the database.
    assert postgres.rows("SELECT id FROM clients ORDER BY id") == [["10"], ["11"], ["12"], ["20"]]


def test_an_oversized_length_is_refused_before_anything_is_allocated(
    postgres: PostgresServer, start_middleware: StartMiddleware
) -> None:
    # A heap far below the lengths declared: allocating any of them would throw
    # OutOfMemoryError in the distributor.
    proc, port = start_middleware(postgres, jvm=["-Xmx48m"])
    for length, rid in ((2**31 - 1, 601), (2**32 - 1, 602)):
        with Connection(LOOPBACK, port) as c:
            # Refused as soon as the request id arrived, long before the frame would end.
            c.send_raw(struct.pack(">II", length, rid) + b"\0" * 1000)
            reply = c.receive()
            assert (reply.status, reply.request_id) == ("frame_too_large", rid), reply.text
            assert str(length) in (reply.text or "")
    # Many connections that each declare the longest frame accepted and send 4 bytes of it:
    # their buffers grow with what arrived, so 1,000 of them need far less than the 64 MiB
    # their declared lengths add up to.
    opened = [socket.create_connection((LOOPBACK, port), timeout=60.0) for _ in range(1000)]
    for s in opened:
        s.sendall(struct.pack(">II", 65536, 1))
    with Connection(LOOPBACK, port) as c:
        assert c.call("create_client", 1).status == "ok"
        assert c.call("query_queues", 1).status == "ok"
    for s in opened:
        s.close()
    assert proc.poll() is None
    summary = stopped_summary(proc)
    assert summary["rejected"]["frame_too_large"] == 2
    assert "OutOfMemoryError" not in stderr_of(proc)


def test_a_worker_that_fails_answers_the_request_and_goes_on_serving(
    postgres: PostgresServer, start_middleware: StartMiddleware
) -> None:
    # A stored message the database layer cannot map: 'infinity' has no microseconds since
    # the epoch (pgjdbc reads it as OffsetDateTime.MAX; converting it overflows a long).
    postgres.psql(
        "SELECT add_client(1); SELECT add_queue(); SELECT add_queue();"
        " INSERT INTO messages (sender_id, receiver_id, queue_id, sent_at, body)"
        " VALUES (1, 1, 1, 'infinity', 'never mapped'), (1, 1, 2, now(), 'fine')"
    )
    # One worker: whatever serves the requests after the failure is the worker that failed.
    proc, port = start_middleware(postgres, workers=1)
    with Connection(LOOPBACK, port) as c:
        for _ in range(3):
            failed = c.call("peek_queue", 1, 1)
            assert failed.status == "database", failed.text
            assert "outcome is unknown" in (failed.text or "")
            assert "ArithmeticException" in (failed.text or "")
            peeked = c.call("peek_queue", 2, 1)
            assert peeked.status == "ok" and peeked.message is not None
            assert peeked.message.body == b"fine"
    with Connection(LOOPBACK, port) as other:
        assert other.call("create_client", 2).status == "ok"
    summary = stopped_summary(proc)
    peeks = summary["operations"]["peek_queue"]
    assert peeks["failed"] == 3
    assert peeks["replies"] == {"ok": 3, "database": 3}
    assert summary["requests_per_worker"] == [7]
    log = stderr_of(proc).splitlines()
    # One line per failure, with the operation; the trace once, for the first.
    assert sum("worker-0: peek_queue (request" in line for line in log) == 3
    assert sum(line.startswith("java.lang.ArithmeticException") for line in log) == 1
    assert sum(line.startswith("\tat ") for line in log) > 0


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--max-connections", "0", "--max-connections: at least one connection"),
        ("--max-pending", "0", "--max-pending: at least one request"),
        ("--max-output", "1000", "--max-output must hold a reply of --max-frame bytes"),
        ("--frame-timeout-ms", "-1", "--frame-timeout-ms: 0 (never) or more"),
    ],
)
def test_a_limit_out_of_range_is_refused_before_the_middleware_starts(
    option: str, value: str, message: str
) -> None:
    if not JAR.is_file():
        pytest.fail(f"{JAR} is missing: run `make build` first")
    # No database behind the URL: the refusal must come first.
    cmd = ["java", "-jar", str(JAR), "middleware", "-p", "0",
           "--db", "jdbc:postgresql://127.0.0.1:9/none", option, value]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr


def test_a_refused_client_that_retries_is_served_once_a_connection_closes(
    postgres: PostgresServer, start_middleware: StartMiddleware
) -> None:
    _, port = start_middleware(postgres, extra=["--max-connections", "1"])
    held = served_connection(port, 30)
    # The cap is full: a retrying client is refused until the held connection closes.
    threading.Timer(1.0, held.close).start()
    started = time.monotonic()
    late = served_connection(port, 31)
    assert time.monotonic() - started >= 1.0
    assert late.call("query_queues", 31).status == "ok"
    late.close()
