"""One client connection of the chaos soak: it sends requests and has the oracle judge each reply.

A client sends batches, of one request or pipelined, of SETs of fresh keys, GETs and multi-GETs
of keys written earlier (its own and other clients'; a tenth never written) and a few bad
requests that the middleware answers itself (`ERROR`, `CLIENT_ERROR`), which must still come in
their place. It reads the replies in order, and after the batch reads every STORED key from its
live replicas
(`soak.chaos_oracle` says what counts as a violation and why).
"""

from __future__ import annotations

import random
import socket
import threading
import time
from dataclasses import dataclass, field

from soak.chaos_oracle import (
    MUST_HIT_S,
    FaultLog,
    LatencyBound,
    Op,
    Probe,
    ReplyClosedError,
    ReplyStream,
    ReplyTimeoutError,
    StallProbe,
    Tally,
    absent_key,
    bad_request,
    flags_for,
    get_request,
    read_reply,
    set_key,
    set_request,
    value_for,
)
from soak.hashring import HashRing


@dataclass(frozen=True)
class KeyRecord:
    """A key a client tried to SET: whether it was STORED, the servers' epochs when it was sent,
    and when the reply came."""

    stored: bool
    epochs: tuple[int, ...]
    at: float


class KeyPool:
    """The most recent keys written, for reads to choose from (shared between threads)."""

    def __init__(self, size: int) -> None:
        self._items: list[tuple[bytes, KeyRecord]] = []
        self._next = 0
        self._size = size
        self._lock = threading.Lock()

    def add(self, key: bytes, record: KeyRecord) -> None:
        with self._lock:
            if len(self._items) < self._size:
                self._items.append((key, record))
            else:
                self._items[self._next] = (key, record)
                self._next = (self._next + 1) % self._size

    def choice(self, rng: random.Random) -> tuple[bytes, KeyRecord] | None:
        with self._lock:
            return rng.choice(self._items) if self._items else None


@dataclass
class ClientContext:
    """What every client shares: where to send, the oracle's view and its tallies."""

    address: tuple[str, int]
    servers: list[tuple[str, int]]
    ring: HashRing
    faults: FaultLog
    tally: Tally
    bound: LatencyBound
    lost_after_s: float
    seed: int
    stop: threading.Event
    stalls: StallProbe = field(default_factory=StallProbe)
    shared: KeyPool = field(default_factory=lambda: KeyPool(20000))


class Client(threading.Thread):
    """One connection to the middleware: sends batches (of one request, or pipelined), reads
    and judges every reply, then checks each STORED key on its replicas."""

    def __init__(self, cid: int, ctx: ClientContext, max_depth: int) -> None:
        super().__init__(name=f"client-{cid}", daemon=True)
        self.cid = cid
        self.ctx = ctx
        self.max_depth = max_depth
        self.rng = random.Random(f"client-{ctx.seed}-{cid}")
        self.own = KeyPool(4000)
        self.seq = 0
        self.sock: socket.socket | None = None
        self.stream: ReplyStream | None = None
        self.probe = Probe(ctx.servers)

    # Requests.

    def _length(self) -> int:
        x = self.rng.random()
        if x < 0.90:
            return self.rng.randint(1, 1000)
        if x < 0.99:
            return self.rng.randint(1000, 16000)
        return self.rng.randint(16000, 100000)

    def _read_key(self) -> tuple[bytes, KeyRecord | None]:
        x = self.rng.random()
        picked = None
        if x >= 0.1:
            picked = (self.ctx.shared if x < 0.3 else self.own).choice(self.rng)
        if picked is None:
            self.seq += 1
            return absent_key(self.cid, self.seq), None
        return picked

    def _op(self, records: dict[bytes, KeyRecord]) -> Op:
        x = self.rng.random()
        if x < 0.02:
            return bad_request(self.rng.randrange(2))
        if x < 0.4:
            self.seq += 1
            key = set_key(self.cid, self.seq, self._length())
            return Op("set", [key], set_request(key))
        n = 1 if x < 0.8 else self.rng.randint(2, 8)
        keys = []
        for _ in range(n):
            key, record = self._read_key()
            keys.append(key)
            if record is not None:
                records[key] = record
        if n > 1 and self.rng.random() < 0.1:
            keys.insert(self.rng.randrange(n), self.rng.choice(keys))  # a duplicate key
        return Op("get" if n == 1 else "mget", keys, get_request(keys))

    # Connection.

    def _connect(self) -> bool:
        deadline = time.monotonic() + self.ctx.lost_after_s
        while not self.ctx.stop.is_set() and time.monotonic() < deadline:
            try:
                self.sock = socket.create_connection(self.ctx.address, timeout=5)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.stream = ReplyStream(self.sock)
                return True
            except OSError:
                time.sleep(0.1)
        return False

    def _drop(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self.stream = None
        self.ctx.tally.add(reconnects=1)

    def run(self) -> None:
        try:
            while not self.ctx.stop.is_set():
                if self.sock is None and not self._connect():
                    if not self.ctx.stop.is_set():
                        self.ctx.tally.violation(
                            "client_errors", client=self.cid, what="cannot connect to middleware"
                        )
                    return
                depth = 1 if self.max_depth == 1 else self.rng.randint(2, self.max_depth)
                self._batch(depth)
            if self.sock is not None:
                self._judge_extra(0.2)  # nothing may follow the last reply
        except Exception as e:  # a crash of the soak itself must not pass as success
            self.ctx.tally.violation("client_errors", client=self.cid, what=repr(e))
        finally:
            if self.sock is not None:
                self.sock.close()
            self.probe.close()

    # One batch.

    def _batch(self, depth: int) -> None:
        ctx, tally = self.ctx, self.ctx.tally
        records: dict[bytes, KeyRecord] = {}
        ops = [self._op(records) for _ in range(depth)]
        tally.add(
            requests=len(ops),
            sets=sum(op.kind == "set" for op in ops),
            gets=sum(op.kind == "get" for op in ops),
            multigets=sum(op.kind == "mget" for op in ops),
            bad_requests=sum(op.kind == "bad" for op in ops),
        )
        epochs = ctx.faults.epochs()
        assert self.sock is not None and self.stream is not None
        sent_at = time.monotonic()
        try:
            self.sock.settimeout(ctx.lost_after_s)
            self.sock.sendall(b"".join(op.wire for op in ops))
        except OSError as e:
            tally.violation(
                "lost", len(ops), client=self.cid, at=tally.rel(sent_at), what=f"send: {e}"
            )
            self._drop()
            return
        sent_all = time.monotonic()
        prev = sent_at
        stored: list[bytes] = []
        for i, op in enumerate(ops):
            ready = sent_at if i == 0 else max(prev, sent_all)
            try:
                reply = read_reply(self.stream, op, ready + ctx.lost_after_s)
            except (ReplyTimeoutError, ReplyClosedError) as e:
                why = "no reply" if isinstance(e, ReplyTimeoutError) else f"closed ({e})"
                tally.violation(
                    "lost",
                    len(ops) - i,
                    client=self.cid,
                    op=op.kind,
                    keys=[k.decode() for k in op.keys[:4]],
                    position=f"{i + 1}/{len(ops)}",
                    ready_at=tally.rel(ready),
                    what=why,
                    servers=ctx.faults.state(),
                )
                self._drop()
                break
            now = time.monotonic()
            prev = now
            tally.add(replies=1)
            if reply.kind == "wrong":
                tally.violation(
                    "out_of_order",
                    client=self.cid,
                    op=op.kind,
                    keys=[k.decode() for k in op.keys[:4]],
                    position=f"{i + 1}/{len(ops)}",
                    at=tally.rel(now),
                    what=reply.text,
                )
                tally.add(abandoned=len(ops) - i - 1)
                self._drop()
                break
            self._judge_time(op, reply.kind, reply.text, ready, now)
            if op.kind == "set":
                self._record_set(op.keys[0], reply.kind == "stored", epochs, now)
                if reply.kind == "stored":
                    stored.append(op.keys[0])
            elif op.kind == "bad":
                pass
            elif reply.kind == "server_error":
                tally.add(get_errors=1)
            else:
                tally.add(values_returned=len(reply.returned))
                self._judge_reads(op, reply.returned, records, now)
        else:
            self._judge_extra(0.0)
        if stored:
            self._check_stored(stored, epochs)

    def _judge_extra(self, wait_s: float) -> None:
        """Every request has had its reply: anything more answers no request."""
        assert self.stream is not None
        extra = self.stream.unread(wait_s)
        if extra:
            self.ctx.tally.violation(
                "out_of_order",
                client=self.cid,
                at=self.ctx.tally.rel(time.monotonic()),
                what=f"{len(extra)} bytes after the last reply: {extra[:120]!r}",
            )
            self._drop()

    def _judge_time(self, op: Op, kind: str, text: str, ready: float, now: float) -> None:
        """A reply slower than the bound without stalls is held for `Tally.judge_late`."""
        ctx = self.ctx
        took = now - ready
        ctx.tally.latency(took)
        if took <= ctx.bound(0):
            return
        # Reads fail over replica by replica, a timeout each: count the stopped ones they met.
        stopped = 0
        if op.kind != "set":
            involved = {s for k in op.keys for s in ctx.ring.replicas(k)}
            stopped = ctx.faults.stopped_between(involved, ready, now)
        if took <= ctx.bound(stopped):
            ctx.tally.add(slow_justified=1)
            return
        ctx.tally.slow(
            ready,
            now,
            ctx.bound(stopped),
            client=self.cid,
            op=op.kind,
            keys=[k.decode() for k in op.keys[:4]],
            replicas=[list(ctx.ring.replicas(k)) for k in op.keys[:4]],
            stopped_replicas=stopped,
            reply=kind if kind != "server_error" else text,
            servers=ctx.faults.state(),
        )

    def _record_set(self, key: bytes, ok: bool, epochs: tuple[int, ...], now: float) -> None:
        record = KeyRecord(ok, epochs, now)
        self.own.add(key, record)
        self.ctx.shared.add(key, record)
        self.ctx.tally.add(stored=int(ok), set_errors=int(not ok))

    def _judge_reads(
        self, op: Op, returned: list[bytes], records: dict[bytes, KeyRecord], now: float
    ) -> None:
        """A key STORED on replicas that all kept their process must be found."""
        ctx = self.ctx
        got = set(returned)
        for key in dict.fromkeys(op.keys):
            record = records.get(key)
            if record is None or not record.stored or key in got:
                continue
            if now - record.at > MUST_HIT_S:
                continue
            replicas = ctx.ring.replicas(key)
            if all(ctx.faults.unchanged(r, record.epochs[r]) for r in replicas):
                ctx.tally.violation(
                    "missing_reads",
                    client=self.cid,
                    op=op.kind,
                    key=key.decode(),
                    replicas=list(replicas),
                    stored_at=ctx.tally.rel(record.at),
                    at=ctx.tally.rel(now),
                    servers=ctx.faults.state(),
                )

    def _check_stored(self, keys: list[bytes], epochs: tuple[int, ...]) -> None:
        """Reads each STORED key from every replica that is alive and the same process as when
        the SET was sent; a replica without the value is a false STORED."""
        ctx = self.ctx
        by_server: dict[int, list[bytes]] = {}
        for key in keys:
            for r in ctx.ring.replicas(key):
                if ctx.faults.live(r, epochs[r]):
                    by_server.setdefault(r, []).append(key)
                else:
                    ctx.tally.add(stored_unverified=1)
        for r, group in by_server.items():
            try:
                found = self.probe.get(r, epochs[r], group)
            except (OSError, ReplyTimeoutError, ReplyClosedError):
                ctx.tally.add(stored_unverified=len(group))
                continue
            if not ctx.faults.unchanged(r, epochs[r]):
                ctx.tally.add(stored_unverified=len(group))
                continue
            for key in group:
                if found.get(key) == (flags_for(key), value_for(key)):
                    ctx.tally.add(stored_checked=1)
                    continue
                ctx.tally.violation(
                    "false_stored",
                    client=self.cid,
                    key=key.decode(),
                    replica=r,
                    replicas=list(ctx.ring.replicas(key)),
                    found="nothing" if key not in found else "another value",
                    at=ctx.tally.rel(time.monotonic()),
                    servers=ctx.faults.state(),
                )
