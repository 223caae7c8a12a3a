"""The chaos soak's oracle: what the soak did to the servers, and how every reply is judged.

A reply is judged on four counts:

- **Exactly one reply, in order.** Each client knows the requests it sent on its connection and
  reads their replies in that order. A reply that cannot be the answer to the request in its
  place (`STORED` for a get, anything but the middleware's own `ERROR` or `CLIENT_ERROR` for a
  bad request, a VALUE for a key that was not asked for, or with bytes or flags that are not
  the key's) is *out of order*; the connection is then out of step, so the rest of its batch
  is abandoned and it reconnects. Bytes after the last reply of a batch, or after the last
  reply of all, answer no request: they are out of order too. A reply that does not come (the
  connection closes, or nothing arrives for `lost_after_s`) is *lost*.
- **No false STORED.** Keys are unique (one SET each, never rewritten), and a key's value and
  flags are a function of the key, so any copy found anywhere can be checked. Unique keys also
  rule out a real hazard of rewriting keys: a SET that timed out on a stopped server still sits
  in that server's socket and is applied when the server continues, so it could overwrite a
  newer value that was `STORED` meanwhile. After a `STORED` the key is read directly from each of
  its replicas that is alive now (running, not stopped) and is the same process as when the
  request was sent (its *epoch*, bumped before every kill and after every restart, has not
  changed). A replica without the value is a *false STORED*.
  The replicas come from `soak.hashring`, a second implementation of the middleware's ring,
  not from "present on R servers": the exact replica set catches a SET that went to the wrong
  server, which a count would miss, and a GET that reads from a non-replica (below). The soak
  checks the ring against placement it observes on the real servers before it starts, so the
  oracle never trusts an unverified copy of the middleware's logic.
- **No missing reads.** A GET of a `STORED` key whose replicas have all kept their epoch must
  return the value (unless the whole reply is a `SERVER_ERROR`). Items expire after
  `EXPTIME_S`, which bounds the servers' memory over long soaks; only keys stored in the last
  `MUST_HIT_S` seconds are held to this, well inside the expiry.
- **Not late.** A request's latency runs from when it could start — when it was sent, or for a
  pipelined request when the reply before it arrived, since the middleware runs a connection's
  requests one after the other — to its reply. Each server exchange has the middleware's
  deadline (`--server-timeout-ms`); a SET sends to its replicas in parallel under one deadline,
  but a GET fails over from replica to replica and a sharded multi-GET retries failed parts on
  other replicas, each attempt under a fresh deadline. An exchange only runs into its deadline on
  a stopped server (a killed one refuses or resets at once), so a read may take one timeout per
  distinct replica of its keys that was stopped while it ran. The bound is
  `max(1, k) * timeout + margin + blind` (k = 0 for SETs). `blind` is the time within the
  request's interval during which the soak or the machine was measured not running at all
  (`StallProbe`): on a shared 2-core machine that reaches a second at times, and no margin
  that stays below a timeout can cover it. (A stall is only known once the stalled probe runs
  again, so slow replies are judged at the end of the soak.) The margin covers the rest: the
  watchdog's tick (at most 10 ms per timeout), the JVM's pauses, and threads scheduled late but
  not stalled. 500 ms by default: fifty times a typical hiccup, and still half a timeout below
  the next multiple, so a request that waited out one deadline too many is caught. The soak
  keeps client connections at most the middleware's workers, so no request waits in the
  middleware's queue for a worker held by another connection's fault.
"""

from __future__ import annotations

import contextlib
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

EXPTIME_S = 180
MUST_HIT_S = 120.0
MAX_EXAMPLES = 12
TREND_QUARTER_S = 20.0


# --- faults ------------------------------------------------------------------------------------


class FaultLog:
    """Each server's state as the soak changes it: running or not, stopped or not, its epoch.

    The soak records a change *before* it sends SIGSTOP or SIGKILL and *after* SIGCONT or a
    restart, so at every moment the log errs on the side of "faulty": a check never trusts a
    server the soak may already have disturbed.
    """

    def __init__(self, servers: int, clock: float) -> None:
        self._lock = threading.Lock()
        self.t0 = clock
        self._up = [True] * servers
        self._stopped = [False] * servers
        self._epoch = [0] * servers
        # Per server: [start, end] of each stop, end None while it lasts; in time order.
        self._stops: list[list[list[float | None]]] = [[] for _ in range(servers)]

    def epochs(self) -> tuple[int, ...]:
        with self._lock:
            return tuple(self._epoch)

    def will_stop(self, s: int) -> None:
        with self._lock:
            self._stopped[s] = True
            self._stops[s].append([time.monotonic(), None])

    def continued(self, s: int) -> None:
        with self._lock:
            self._end_stop(s)

    def will_kill(self, s: int) -> None:
        with self._lock:
            self._up[s] = False
            self._epoch[s] += 1

    def killed(self, s: int) -> None:
        with self._lock:
            self._end_stop(s)

    def restarted(self, s: int) -> None:
        with self._lock:
            self._epoch[s] += 1
            self._up[s] = True

    def _end_stop(self, s: int) -> None:
        self._stopped[s] = False
        if self._stops[s] and self._stops[s][-1][1] is None:
            self._stops[s][-1][1] = time.monotonic()

    def live(self, s: int, epoch: int) -> bool:
        """Running, not stopped, and the same process as at `epoch`."""
        with self._lock:
            return self._up[s] and not self._stopped[s] and self._epoch[s] == epoch

    def unchanged(self, s: int, epoch: int) -> bool:
        with self._lock:
            return self._epoch[s] == epoch

    def stopped_between(self, servers: set[int], t0: float, t1: float) -> int:
        """How many of `servers` were stopped at some moment in [t0, t1]."""
        n = 0
        with self._lock:
            for s in servers:
                for start, end in reversed(self._stops[s]):
                    if end is not None and end < t0:
                        break
                    if start is not None and start <= t1:
                        n += 1
                        break
        return n

    def state(self) -> str:
        """One letter per server: U up, S stopped, D down."""
        with self._lock:
            return "".join(
                "D" if not up else "S" if st else "U"
                for up, st in zip(self._up, self._stopped, strict=True)
            )


# --- keys and values ---------------------------------------------------------------------------


def set_key(client: int, seq: int, length: int) -> bytes:
    """A key written once; its value length is part of it, so the value follows from the key."""
    return f"k{client}-{seq}-{length}".encode()


def absent_key(client: int, seq: int) -> bytes:
    """A key nobody ever writes: any value for it is wrong."""
    return f"n{client}-{seq}".encode()


def value_for(key: bytes) -> bytes | None:
    """The only value `key` may have; None for keys that are never written."""
    if not key.startswith(b"k"):
        return None
    n = int(key.rsplit(b"-", 1)[1])
    # CRLF inside the value: framing must follow the byte count, not look for line ends.
    unit = key + b"\r\n"
    return (unit * (n // len(unit) + 1))[:n]


def flags_for(key: bytes) -> int:
    return zlib.crc32(key) & 0xFFFF


def set_request(key: bytes) -> bytes:
    value = value_for(key)
    assert value is not None
    return b"set %s %d %d %d\r\n%s\r\n" % (key, flags_for(key), EXPTIME_S, len(value), value)


def get_request(keys: list[bytes]) -> bytes:
    return b"get " + b" ".join(keys) + b"\r\n"


@dataclass
class Op:
    kind: Literal["set", "get", "mget", "bad"]
    keys: list[bytes]
    wire: bytes
    expect: bytes = b""  # a bad request's reply, which the middleware gives itself


def bad_request(variant: int) -> Op:
    """A request the middleware must answer itself, in its place among the others."""
    if variant % 2:
        return Op("bad", [], b"bogus\r\n", b"ERROR")
    return Op("bad", [], get_request([b"x" * 251]), b"CLIENT_ERROR key too long")


@dataclass(frozen=True)
class LatencyBound:
    """`max(1, k) * timeout + margin` for a request that met k stopped replicas (see above)."""

    timeout_s: float
    margin_s: float

    def __call__(self, stopped: int) -> float:
        return max(1, stopped) * self.timeout_s + self.margin_s


# --- reading replies ---------------------------------------------------------------------------


class ReplyTimeoutError(Exception):
    """Nothing complete arrived before the deadline."""


class ReplyClosedError(Exception):
    """The peer closed the connection."""


class ReplyStream:
    """Buffered reads of lines and byte blocks from a socket, each under an absolute deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray()

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ReplyTimeoutError
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(262144)
        except TimeoutError as e:
            raise ReplyTimeoutError from e
        except OSError as e:
            raise ReplyClosedError(str(e)) from e
        if not data:
            raise ReplyClosedError("closed by peer")
        self._buf += data

    def unread(self, wait_s: float = 0.0) -> bytes:
        """Bytes received and not read yet, after waiting up to `wait_s` for more."""
        if wait_s > 0:
            with contextlib.suppress(ReplyTimeoutError, ReplyClosedError):
                self._fill(time.monotonic() + wait_s)
        return bytes(self._buf)

    def line(self, deadline: float) -> bytes:
        start = 0
        while True:
            i = self._buf.find(b"\r\n", start)
            if i >= 0:
                line = bytes(self._buf[:i])
                del self._buf[: i + 2]
                return line
            start = max(0, len(self._buf) - 1)
            self._fill(deadline)

    def exact(self, n: int, deadline: float) -> bytes:
        while len(self._buf) < n:
            self._fill(deadline)
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data


@dataclass
class Reply:
    """What a reply said: `stored`, `server_error`, `values` (the keys returned), `local` (the
    expected answer to a bad request) or `wrong`."""

    kind: Literal["stored", "server_error", "values", "local", "wrong"]
    returned: list[bytes] = field(default_factory=list)
    text: str = ""


class MalformedReplyError(Exception):
    """A get reply that is not VALUE blocks up to END."""


def value_blocks(
    stream: ReplyStream, first: bytes, deadline: float
) -> Iterator[tuple[bytes, int, bytes]]:
    """The VALUE blocks of a get reply, from its first line up to its END: (key, flags,
    data). The one parser of get replies here, for the middleware's and memcached's alike."""
    line = first
    while line != b"END":
        parts = line.split(b" ")
        if parts[0] != b"VALUE" or len(parts) not in (4, 5):
            raise MalformedReplyError(f"get answered {line[:120]!r}")
        try:
            flags, size = int(parts[2]), int(parts[3])
        except ValueError:
            raise MalformedReplyError(f"malformed {line[:120]!r}") from None
        data = stream.exact(size + 2, deadline)
        if data[-2:] != b"\r\n":
            raise MalformedReplyError(f"data block of {parts[1][:80]!r} without CRLF")
        yield parts[1], flags, data[:-2]
        line = stream.line(deadline)


def read_reply(stream: ReplyStream, op: Op, deadline: float) -> Reply:
    """Reads the reply to `op` and checks it belongs to `op`."""
    first = stream.line(deadline)
    if op.kind == "bad":
        if first == op.expect:
            return Reply("local")
        return Reply("wrong", text=f"{op.wire[:40]!r} answered {first[:120]!r}")
    if first.startswith(b"SERVER_ERROR"):
        return Reply("server_error", text=first.decode("latin-1")[:200])
    if op.kind == "set":
        if first == b"STORED":
            return Reply("stored")
        return Reply("wrong", text=f"set answered {first[:120]!r}")
    returned: list[bytes] = []
    nxt = 0
    try:
        for key, flags, value in value_blocks(stream, first, deadline):
            # Values come in the client's key order, misses left out.
            while nxt < len(op.keys) and op.keys[nxt] != key:
                nxt += 1
            if nxt == len(op.keys):
                return Reply("wrong", returned, f"value for {key[:80]!r}, not requested here")
            nxt += 1
            if value != value_for(key) or flags != flags_for(key):
                return Reply("wrong", returned, f"value or flags of {key[:80]!r} are not its own")
            returned.append(key)
    except MalformedReplyError as err:
        return Reply("wrong", returned, str(err))
    return Reply("values", returned)


def read_values(stream: ReplyStream, deadline: float) -> dict[bytes, tuple[int, bytes]]:
    """A memcached get reply read straight from a server: key -> (flags, value)."""
    try:
        return {
            key: (flags, value)
            for key, flags, value in value_blocks(stream, stream.line(deadline), deadline)
        }
    except MalformedReplyError as err:
        raise OSError(f"memcached: {err}") from None


class Probe:
    """Direct connections to the memcached servers, one per server, for reading replicas.

    Kept open (a connection per check would leave thousands of sockets in TIME_WAIT) and
    reopened after an error or when the server is a new process.
    """

    def __init__(self, addresses: list[tuple[str, int]], timeout_s: float = 2.0) -> None:
        self.addresses = addresses
        self.timeout_s = timeout_s
        self._conns: list[tuple[int, ReplyStream] | None] = [None] * len(addresses)

    def get(self, s: int, epoch: int, keys: list[bytes]) -> dict[bytes, tuple[int, bytes]]:
        """Reads `keys` from server `s`, which must still be the process of `epoch`.

        Raises OSError, ReplyTimeoutError or ReplyClosedError if it cannot; the connection is
        then dropped.
        """
        conn = self._conns[s]
        if conn is None or conn[0] != epoch:
            self.drop(s)
            sock = socket.create_connection(self.addresses[s], timeout=self.timeout_s)
            conn = (epoch, ReplyStream(sock))
            self._conns[s] = conn
        stream = conn[1]
        deadline = time.monotonic() + self.timeout_s
        found: dict[bytes, tuple[int, bytes]] = {}
        try:
            for i in range(0, len(keys), 64):  # memcached caps the length of a get line
                stream.sock.settimeout(self.timeout_s)
                stream.sock.sendall(get_request(keys[i : i + 64]))
                found.update(read_values(stream, deadline))
        except (OSError, ReplyTimeoutError, ReplyClosedError):
            self.drop(s)
            raise
        return found

    def drop(self, s: int) -> None:
        conn = self._conns[s]
        self._conns[s] = None
        if conn is not None:
            conn[1].sock.close()

    def close(self) -> None:
        for s in range(len(self._conns)):
            self.drop(s)


# --- tallies -----------------------------------------------------------------------------------

COUNTERS = (
    "requests",
    "replies",
    "lost",
    "out_of_order",
    "false_stored",
    "late",
    "missing_reads",
    "abandoned",
    "sets",
    "gets",
    "multigets",
    "bad_requests",
    "stored",
    "set_errors",
    "get_errors",
    "values_returned",
    "stored_checked",
    "stored_unverified",
    "slow_justified",
    "reconnects",
    "client_errors",
)
VIOLATIONS = ("lost", "out_of_order", "false_stored", "late", "missing_reads", "client_errors")


class Tally:
    """Counters shared by the client threads, plus every violation written to a log."""

    def __init__(self, t0: float, violations_log: Path | None = None) -> None:
        self._lock = threading.Lock()
        self.t0 = t0
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.max_latency_s = 0.0
        self.examples: list[dict[str, object]] = []
        self._slow: list[tuple[float, float, float, dict[str, object]]] = []
        self._log = violations_log.open("a") if violations_log else None

    def add(self, **counts: int) -> None:
        with self._lock:
            for k, v in counts.items():
                self.counts[k] += v

    def latency(self, seconds: float) -> None:
        with self._lock:
            self.max_latency_s = max(self.max_latency_s, seconds)

    def violation(self, kind: str, n: int = 1, **detail: object) -> None:
        """Counts `n` violations of `kind`; keeps the first few as examples, logs all."""
        record = {"kind": kind, "n": n, **detail}
        with self._lock:
            self.counts[kind] += n
            if len(self.examples) < MAX_EXAMPLES:
                self.examples.append(record)
            if self._log:
                self._log.write(json.dumps(record, default=str) + "\n")
                self._log.flush()

    def slow(self, ready: float, now: float, bound_s: float, **detail: object) -> None:
        """A reply that took longer than `bound_s`: late unless the soak or the machine stalled
        meanwhile. Judged by `judge_late` once every stall is known (a stall is only reported
        when the stalled probe runs again, which may be after the client saw the reply)."""
        with self._lock:
            self._slow.append((ready, now, bound_s, detail))

    def judge_late(self, stalls: StallProbe) -> None:
        """Counts each slow reply as late, or as justified by the stalls within it."""
        with self._lock:
            slow, self._slow = self._slow, []
        for ready, now, bound_s, detail in slow:
            blind = stalls.blind(ready, now)
            if now - ready <= bound_s + blind:
                self.add(slow_justified=1)
                continue
            self.violation(
                "late",
                ready_at=self.rel(ready),
                took_ms=round((now - ready) * 1000, 1),
                bound_ms=round((bound_s + blind) * 1000, 1),
                stalled_ms=round(blind * 1000, 1),
                **detail,
            )

    def rel(self, t: float) -> float:
        """Seconds since the load started, rounded for reports."""
        return round(t - self.t0, 3)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)

    def close(self) -> None:
        if self._log:
            self._log.close()


# A one-thread process that reports, as "due woke" lines of CLOCK_MONOTONIC seconds, every
# wake-up from a 10 ms sleep that came more than 50 ms late; it exits when its stdin closes.
_HOST_PROBE = """
import select, sys, time
print("ready", flush=True)
while True:
    due = time.monotonic() + 0.01
    if select.select([sys.stdin], [], [], 0.01)[0]:
        break
    woke = time.monotonic()
    if woke - due > 0.05:
        print(due, woke, flush=True)
"""


class StallProbe:
    """Measures when the soak and the machine could not run, so the oracle can tell the
    middleware being slow from nobody running at all.

    On a shared machine processes are sometimes not scheduled for a while (measured: up to
    1.4 s, with a load average of 25 on 2 cores and CPU pressure above 80 %). Two probes sleep
    10 ms at a time and record every wake-up more than 50 ms late as a blind interval:
    - a thread of the soak: a reply that arrives while the soak's process does not run is only
      timestamped when it runs again;
    - a separate one-thread process: it is scheduled like the middleware's watchdog and
      workers, so its stalls are the machine's. A middleware that is not scheduled enforces its
      deadlines late; when it runs again it finds them passed and times out at once.
    The blind time within a request's interval (the union of both probes' intervals) is added
    to its latency bound. A middleware that is slow while both probes run on time is still
    late. The probes report how much they excused (`summary`); a middleware that starved the
    machine itself would show there.
    """

    def __init__(self) -> None:
        self._own: list[tuple[float, float]] = []
        self._host: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._threads: list[threading.Thread] = []
        self._proc: subprocess.Popen[str] | None = None

    @property
    def host_pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        self._threads.append(threading.Thread(target=self._watch_self, daemon=True))
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _HOST_PROBE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        # Blind intervals only count from the probe's first wake-up: wait until it runs.
        assert self._proc.stdout is not None
        if self._proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the host stall probe did not start")
        self._threads.append(threading.Thread(target=self._read_host, daemon=True))
        for t in self._threads:
            t.start()

    def _watch_self(self) -> None:
        while True:
            due = time.monotonic() + 0.01
            if self._stop_event.wait(0.01):
                return
            woke = time.monotonic()
            if woke - due > 0.05:
                with self._lock:
                    self._own.append((due, woke))

    def _read_host(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            due, woke = (float(x) for x in line.split())
            with self._lock:
                self._host.append((due, woke))

    def stop(self) -> None:
        self._stop_event.set()
        if self._proc is not None:
            if self._proc.stdin is not None:
                self._proc.stdin.close()  # the probe exits on EOF
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for t in self._threads:
            t.join(timeout=5)

    def blind(self, t0: float, t1: float) -> float:
        """Seconds of [t0, t1] during which the soak or the machine was seen not running."""
        with self._lock:
            parts = [
                (max(a, t0), min(b, t1))
                for intervals in (self._own, self._host)
                for a, b in _recent(intervals, t0)
                if a < t1
            ]
        total, end = 0.0, t0
        for a, b in sorted(parts):
            if b > end:
                total += b - max(a, end)
                end = b
        return total

    def write_csv(self, path: Path, t0: float) -> None:
        """Every stall: which probe saw it, from and to (seconds since t0)."""
        with self._lock:
            rows = [("soak", a, b) for a, b in self._own] + [("host", a, b) for a, b in self._host]
        lines = ["probe,from_s,to_s"] + [f"{p},{a - t0:.3f},{b - t0:.3f}" for p, a, b in rows]
        path.write_text("\n".join(lines) + "\n")

    def summary(self) -> dict[str, object]:
        """For each probe: how many stalls, the longest and their total, in seconds."""
        with self._lock:
            lists = {"soak": list(self._own), "host": list(self._host)}
        return {
            name: {
                "stalls": len(v),
                "max_ms": round(max((b - a for a, b in v), default=0.0) * 1000, 1),
                "total_s": round(sum(b - a for a, b in v), 2),
            }
            for name, v in lists.items()
        }


def _recent(intervals: list[tuple[float, float]], t0: float) -> list[tuple[float, float]]:
    """The intervals (in time order) that end at or after t0."""
    out = []
    for a, b in reversed(intervals):
        if b < t0:
            break
        out.append((a, b))
    return out


def cpu_pressure_total_us() -> int | None:
    """Microseconds some task waited for a CPU since boot (Linux PSI), None without PSI."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(line.rsplit("total=", 1)[1])


# --- resources ---------------------------------------------------------------------------------


@dataclass
class Sample:
    t: float
    rss_kib: int
    threads: int
    fds: int


@dataclass
class ResourceBounds:
    """The ceilings the middleware process must stay under.

    - RSS: the soak runs the JVM with a fixed, pre-touched heap (`-Xms = -Xmx`,
      `AlwaysPreTouch`), so the heap is all resident from the start and RSS only moves with
      native memory: metaspace, JIT code, thread stacks, direct buffers, and the C2 compiler's
      arenas. Those arenas are the one large mover: when faults make new paths hot, C2 compiles
      them and briefly holds 100-200 MiB, which glibc keeps after it is freed (measured: RSS
      +120 MiB that then stays, and none of it with C1 only). The JVM is therefore asked to
      give freed native memory back every second (`TrimNativeHeapInterval`, where the JVM has
      it; without it the trend below allows 192 MiB), so RSS tracks what is really in use.
      The absolute cap is the heap plus 384 MiB, room for a compilation burst on top of the
      rest. The trend compares lower quartiles, which a burst does not move but a leak does:
      after warm-up, the lower quartile of RSS over the last quarter of the samples may exceed
      that over the first quarter by at most `rss_growth_mib`. A burst lasts 10-15 s, so a
      quarter must be longer for its lower quartile to ignore one: the trend is judged only
      when a quarter spans at least `TREND_QUARTER_S` (soaks of 90 s and more); shorter soaks
      are held to the caps alone.
    - Threads: fixed by design (net-thread, watchdog, collector, one per worker, the JVM's own).
      The cap is the count at the end of warm-up plus 8, room for the JIT's compiler threads,
      which the JVM starts and stops with demand.
    - File descriptors: at the end of warm-up the middleware holds every server connection of
      every worker, every client connection and its fixed files. Faults only ever close server
      connections before reopening them, so the count cannot legitimately exceed that level
      plus one per client (a client that reconnects, before the middleware sees the old
      connection close) plus 16 for files the JVM opens lazily. One leaked socket per fault
      would cross that within a few dozen faults.
    """

    rss_cap_mib: float
    threads_cap: int
    fds_cap: int
    rss_growth_mib: float = 64.0


def sample_process(pid: int) -> Sample | None:
    """RSS, threads and open descriptors of `pid` from /proc; None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir())
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss = int(fields.get("VmRSS", "0 kB").split()[0])
    return Sample(time.monotonic(), rss, int(fields["Threads"]), fds)


class ResourceMonitor(threading.Thread):
    """Samples the middleware's /proc entries every `interval_s` until told to stop."""

    def __init__(self, pid: int, interval_s: float = 0.5) -> None:
        super().__init__(name="resource-monitor", daemon=True)
        self.pid = pid
        self.interval_s = interval_s
        self.samples: list[Sample] = []
        self.baseline: Sample | None = None
        self._stop_event = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval_s)

    def sample(self) -> Sample | None:
        s = sample_process(self.pid)
        if s is not None:
            with self._lock:
                self.samples.append(s)
        return s

    def mark_baseline(self) -> Sample | None:
        """The end of warm-up: the level the caps on threads and descriptors start from."""
        self.baseline = self.sample()
        return self.baseline

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=5)

    def maxima(self) -> tuple[float, int, int]:
        with self._lock:
            if not self.samples:
                return 0.0, 0, 0
            return (
                max(s.rss_kib for s in self.samples) / 1024,
                max(s.threads for s in self.samples),
                max(s.fds for s in self.samples),
            )

    def write_csv(self, path: Path) -> None:
        """The samples: seconds since the first, RSS in KiB, threads, descriptors."""
        with self._lock:
            samples = list(self.samples)
        t0 = samples[0].t if samples else 0.0
        rows = ["t_s,rss_kib,threads,fds"]
        rows += [f"{s.t - t0:.2f},{s.rss_kib},{s.threads},{s.fds}" for s in samples]
        path.write_text("\n".join(rows) + "\n")

    def rss_growth(self) -> tuple[float, float] | None:
        """Lower quartile of RSS (MiB) over the first and the last quarter after warm-up; None
        if a quarter is shorter than TREND_QUARTER_S."""
        if self.baseline is None:
            return None
        with self._lock:
            after = [s for s in self.samples if s.t >= self.baseline.t]
        if len(after) < 8 or after[-1].t - after[0].t < 4 * TREND_QUARTER_S:
            return None
        q = len(after) // 4
        early = statistics.quantiles([s.rss_kib for s in after[:q]], n=4)[0] / 1024
        late = statistics.quantiles([s.rss_kib for s in after[-q:]], n=4)[0] / 1024
        return early, late

    def judge(self, bounds: ResourceBounds) -> list[str]:
        """Every way the samples broke the bounds, as sentences; empty if none."""
        with self._lock:
            samples = list(self.samples)
        problems = []
        for s in samples:
            if s.rss_kib / 1024 > bounds.rss_cap_mib:
                problems.append(f"RSS {s.rss_kib / 1024:.0f} MiB over {bounds.rss_cap_mib:.0f}")
                break
        for s in samples:
            if s.threads > bounds.threads_cap:
                problems.append(f"{s.threads} threads over {bounds.threads_cap}")
                break
        for s in samples:
            if s.fds > bounds.fds_cap:
                problems.append(f"{s.fds} file descriptors over {bounds.fds_cap}")
                break
        growth = self.rss_growth()
        if growth is not None and growth[1] - growth[0] > bounds.rss_growth_mib:
            problems.append(
                f"RSS (lower quartile) grew from {growth[0]:.0f} to {growth[1]:.0f} MiB after"
                f" warm-up (more than {bounds.rss_growth_mib:.0f})"
            )
        return problems
