"""SimpleMQ's wire protocol in Python (middleware/simplemq/README.md): requests encoded,
replies decoded, over one blocking TCP connection. For tests and oracles that talk to a
middleware without the Java client, including with frames the Java client would never send."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

OPS = {
    "create_client": 1,
    "delete_client": 2,
    "create_queue": 3,
    "delete_queue": 4,
    "send": 5,
    "peek_queue": 6,
    "pop_queue": 7,
    "pop_from_sender": 8,
    "query_queues": 9,
    # The lease mode (at-least-once).
    "read": 10,
    "ack": 11,
    "nack": 12,
    # Idempotent send: a send named by a key of its sender's.
    "send_once": 13,
    # Batches: many sends, pops or acks in one request and one transaction.
    "send_batch": 14,
    "pop_batch": 15,
    "ack_batch": 16,
    # Blocking: wait up to wait_ms (the last field) for a message, woken by LISTEN/NOTIFY.
    "pop_wait": 17,
    "read_wait": 18,
    # A queue's messages by state, and the oldest visible one's age.
    "queue_metrics": 19,
}
STATUS = {
    0: "ok",
    1: "empty",
    2: "not_leased",  # an ack or nack of an id no lease has: not an error
    16: "malformed",
    17: "frame_too_large",
    18: "unknown_op",
    19: "unknown_reference",
    20: "payload_too_large",
    21: "conflict",
    22: "not_found",
    23: "database",
    24: "shutting_down",
    25: "too_many_connections",
}


class WireError(RuntimeError):
    """Bytes from the middleware that are not a reply."""


@dataclass(frozen=True)
class Message:
    id: int
    sender: int
    receiver: int
    queue: int
    sent_at_us: int
    body: bytes


@dataclass(frozen=True)
class Leased:
    """A message a read delivered, with its delivery count (above 1: a redelivery)."""

    message: Message
    deliveries: int


@dataclass(frozen=True)
class Reply:
    request_id: int
    status: str
    id: int | None = None  # a created queue's or sent message's
    message: Message | None = None
    queues: tuple[int, ...] | None = None
    leased: tuple[Leased, ...] | None = None  # a read's
    text: str | None = None  # an error's
    ids: tuple[int, ...] | None = None  # a batch send's ids, or those a batch ack ended
    messages: tuple[Message, ...] | None = None  # a batch pop's
    # queue_metrics: visible, leased, dead, oldest_age_ms (-1: none waits)
    metrics: tuple[int, int, int, int] | None = None


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def request(request_id: int, op: str, *fields: int, body: bytes | None = None,
            sent_at_us: int = 0, bodies: tuple[bytes, ...] = ()) -> bytes:  # fmt: skip
    """A whole request frame. `send` takes (sender, receiver, queue) and `body`, `send_once`
    (sender, receiver, queue, key) and `body`, `send_batch` (sender, receiver, queue) and
    `bodies`; `read` (queue, receiver, vt_ms, k), `pop_batch` (queue, receiver, k); `ack` and
    `nack` one i64 message id, `ack_batch` several."""
    head = struct.pack(">IB", request_id, OPS[op])
    if op in ("ack", "nack"):
        payload = b"".join(struct.pack(">q", f) for f in fields)
    elif op == "ack_batch":
        payload = struct.pack(">H", len(fields)) + b"".join(struct.pack(">q", f) for f in fields)
    elif op == "send_batch":
        sender, receiver, queue = fields
        payload = struct.pack(">iiiqH", sender, receiver, queue, sent_at_us, len(bodies))
        payload += b"".join(struct.pack(">I", len(b)) + b for b in bodies)
    elif op == "send":
        sender, receiver, queue = fields
        assert body is not None
        payload = struct.pack(">iiiqI", sender, receiver, queue, sent_at_us, len(body)) + body
    elif op == "send_once":
        sender, receiver, queue, key = fields
        assert body is not None
        payload = struct.pack(">iiiqqI", sender, receiver, queue, sent_at_us, key, len(body))
        payload += body
    else:
        payload = b"".join(struct.pack(">i", f) for f in fields)
    return frame(head + payload)


def parse_reply(body: bytes) -> Reply:
    try:
        request_id, code = struct.unpack_from(">IB", body)
        status = STATUS.get(code)
        if status is None:
            raise WireError(f"unknown status {code}")
        rest = body[5:]
        if status in ("empty", "not_leased"):
            return Reply(request_id, status)
        if code >= 16:
            (n,) = struct.unpack_from(">H", rest)
            return Reply(request_id, status, text=rest[2 : 2 + n].decode())
        shape = rest[0]
        if shape == 0:
            return Reply(request_id, status)
        if shape == 1:
            return Reply(request_id, status, id=struct.unpack_from(">q", rest, 1)[0])
        if shape == 2:
            mid, sender, receiver, queue, sent, n = struct.unpack_from(">qiiiqI", rest, 1)
            text = rest[1 + 32 : 1 + 32 + n]
            return Reply(request_id, status,
                         message=Message(mid, sender, receiver, queue, sent, text))  # fmt: skip
        if shape == 3:
            (n,) = struct.unpack_from(">I", rest, 1)
            return Reply(request_id, status, queues=struct.unpack_from(f">{n}i", rest, 5))
        if shape == 7:
            return Reply(request_id, status, metrics=struct.unpack_from(">qqqq", rest, 1))
        if shape == 5:
            (n,) = struct.unpack_from(">I", rest, 1)
            return Reply(request_id, status, ids=struct.unpack_from(f">{n}q", rest, 5))
        if shape == 6:
            (n,) = struct.unpack_from(">I", rest, 1)
            at, popped = 5, []
            for _ in range(n):
                mid, sender, receiver, queue, sent, size = struct.unpack_from(">qiiiqI", rest, at)
                at += 32
                text = rest[at : at + size]
                if len(text) != size:
                    raise WireError("a popped message cut short")
                at += size
                popped.append(Message(mid, sender, receiver, queue, sent, text))
            return Reply(request_id, status, messages=tuple(popped))
        if shape == 4:
            (n,) = struct.unpack_from(">I", rest, 1)
            at, leased = 5, []
            for _ in range(n):
                mid, sender, receiver, queue, sent, deliveries, size = struct.unpack_from(
                    ">qiiiqiI", rest, at
                )
                at += 36
                text = rest[at : at + size]
                if len(text) != size:
                    raise WireError("a leased message cut short")
                at += size
                leased.append(Leased(Message(mid, sender, receiver, queue, sent, text), deliveries))
            return Reply(request_id, status, leased=tuple(leased))
        raise WireError(f"unknown result shape {shape}")
    except struct.error as e:
        raise WireError(f"a reply cut short: {e}") from None


class Connection:
    """A blocking connection to a middleware."""

    def __init__(self, address: str, port: int, timeout: float = 30.0) -> None:
        self.sock = socket.create_connection((address, port), timeout=timeout)
        self.buffer = b""
        self.next_id = 1

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self) -> Reply:
        while True:
            if len(self.buffer) >= 4:
                (n,) = struct.unpack_from(">I", self.buffer)
                if len(self.buffer) >= 4 + n:
                    body, self.buffer = self.buffer[4 : 4 + n], self.buffer[4 + n :]
                    return parse_reply(body)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the middleware closed the connection")
            self.buffer += chunk

    def call(
        self,
        op: str,
        *fields: int,
        body: bytes | None = None,
        bodies: tuple[bytes, ...] = (),
        sent_at_us: int = 0,
    ) -> Reply:
        rid = self.next_id
        self.next_id += 1
        self.send_raw(request(rid, op, *fields, body=body, bodies=bodies, sent_at_us=sent_at_us))
        reply = self.receive()
        if reply.request_id != rid:
            raise WireError(f"request {rid} answered by a reply to {reply.request_id}")
        return reply

    def open_queue(self, *clients: int) -> int:
        """Registers `clients` and creates a queue; its id."""
        for client in clients:
            if (r := self.call("create_client", client)).status != "ok":
                raise WireError(f"create_client {client}: {r.status} {r.text or ''}")
        queue = self.call("create_queue")
        if queue.id is None:
            raise WireError(f"create_queue: {queue.status} {queue.text or ''}")
        return queue.id

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
