"""`mwlab mq soak`: SimpleMQ's pop under concurrency and under a crash, checked by identity.

The pop is at-most-once: it removes a message exactly once (in the transaction that deletes
its row) and delivers it at most once (its reply is written after the commit, and dies with a
middleware killed in between). The soak starts PostgreSQL with one pop strategy, two
middlewares and shared-receiver clients in two processes on local hosts, which send messages
tagged (sender, sequence) to one receiver and pop as it. At the end the oracle reads what the
clients were acknowledged and popped, and what the database still holds, and demands: nothing
twice, each sender's messages in id order, and every acknowledged message popped or still
stored. With `kill_middleware`, the first middleware runs its test-only commit hold: after
`hold_after` answered pops, each further pop that commits is journalled by message id and
never answered, and the soak kills the middleware with SIGKILL inside that window. Every
message then missing must be one the journal names (`lost_matched_to_unanswered`, at least
one, so the window was hit), none other (`unmatched_lost`), and the journal may name no more
than the pops the clients saw go unanswered.

With `delivery="lease"` (`lease_soak`) the clients send the same tagged messages and consume
them with read and ack instead (at-least-once): a read leases messages for a visibility
timeout, an ack deletes each. With `kill_middleware` the commit hold holds committed reads
unanswered (their ids journalled), the middleware is killed inside that window, the clients
move to the surviving middleware, and the held messages come back once their timeout passed;
the clients read until their reads have been empty for longer than the timeout. The oracle
then demands that nothing is lost (every acknowledged send acked exactly once in the end or
still stored) and that every duplicate delivery was a redelivery (a delivery count above 1).
"""

from __future__ import annotations

import csv
import itertools
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TypeVar

import click

from soak.mqbench import bench_command
from testbed.hosts import HostError, LocalHost
from testbed.services.middleware import (
    DEFAULT_MQ_WORKERS,
    SIMPLEMQ_JAR,
    simplemq_client_command,
    start_simplemq,
    wait_simplemq,
)
from testbed.services.ports import LOOPBACK, free_port
from testbed.services.postgres import STRATEGIES, PostgresServer


@dataclass(frozen=True)
class Verdict:
    """The oracle's count; `ok` when nothing was popped twice, nothing is out of order, and
    every missing message is one a pop removed and never answered (by id, from the commit
    hold's journal), no more of them than the pops the clients saw go unanswered."""

    strategy: str
    sent: int
    popped: int
    remaining: int
    duplicates: int
    lost: int
    lost_matched_to_unanswered: int
    unmatched_lost: int
    held: int
    held_delivered: int
    out_of_order: int
    empty_pops: int
    unanswered: int
    stored_unacknowledged: int
    # Idempotent sends: sent again after a lost reply; held by the commit hold (stored, never
    # answered); and of those, answered with the same message id when sent again.
    idempotent: bool = False
    resent: int = 0
    held_sends: int = 0
    held_sends_acknowledged: int = 0

    @property
    def ok(self) -> bool:
        return (
            self.duplicates == 0
            and self.unmatched_lost == 0
            and self.held_delivered == 0
            and self.held <= self.unanswered
            and self.out_of_order == 0
            and (
                not self.idempotent
                or (
                    self.stored_unacknowledged == 0
                    and self.held_sends_acknowledged == self.held_sends
                )
            )
        )


def _rows(path: Path) -> list[tuple[int, int, int]]:
    with path.open() as f:
        return [(int(r["sender"]), int(r["sequence"]), int(r["message_id"]))
                for r in csv.DictReader(f, delimiter="\t")]  # fmt: skip


def oracle(
    strategy: str,
    sent: list[tuple[int, int, int]],
    popped: list[tuple[int, int, int]],
    remaining: list[tuple[int, int, int]],
    empty_pops: int,
    unanswered: int,
    held: frozenset[int] = frozenset(),
) -> Verdict:
    """`sent`: (sender, sequence, message id) of every acknowledged send; `popped`: of every
    pop a client received; `remaining`: of every row left in the database; `held`: the ids
    the commit hold removed and never answered."""
    acknowledged = {(s, q): m for s, q, m in sent}
    seen = Counter((s, q) for s, q, _ in popped) + Counter((s, q) for s, q, _ in remaining)
    duplicates = sum(n - 1 for n in seen.values() if n > 1)
    missing = {acknowledged[k] for k in acknowledged if k not in seen}
    # A message stored, but whose acknowledgement died with a middleware.
    stored_unacknowledged = sum(1 for k in seen if k not in acknowledged)
    delivered = {m for _, _, m in popped} | {m for _, _, m in remaining}
    by_sender: dict[int, list[tuple[int, int]]] = {}
    for s, q, m in sent:
        by_sender.setdefault(s, []).append((q, m))
    out_of_order = 0
    for rows in by_sender.values():
        ids = [m for _, m in sorted(rows)]
        out_of_order += sum(1 for a, b in itertools.pairwise(ids) if b <= a)
    return Verdict(
        strategy=strategy,
        sent=len(acknowledged),
        popped=len(popped),
        remaining=len(remaining),
        duplicates=duplicates,
        lost=len(missing),
        lost_matched_to_unanswered=len(missing & held),
        unmatched_lost=len(missing - held),
        held=len(held),
        held_delivered=len(held & delivered),
        out_of_order=out_of_order,
        empty_pops=empty_pops,
        unanswered=unanswered,
        stored_unacknowledged=stored_unacknowledged,
    )


@dataclass(frozen=True)
class LeaseVerdict:
    """The lease oracle's count; `ok` when nothing is lost, nothing acked twice, and every
    delivery of a message beyond its first carried a higher delivery count (a redelivery)."""

    strategy: str
    sent: int
    acked: int
    remaining: int
    dead_lettered: int
    lost: int
    duplicates: int
    redelivered: int
    unexplained_duplicates: int
    acked_twice: int
    acked_unanswered: int
    held: int
    held_reads: int
    held_redelivered: int
    unanswered: int
    stored_unacknowledged: int

    @property
    def ok(self) -> bool:
        return (
            self.lost == 0
            and self.acked_twice == 0
            and self.unexplained_duplicates == 0
            and self.acked + self.remaining + self.dead_lettered == self.sent
            and self.held_reads <= self.unanswered
        )


def lease_oracle(
    strategy: str,
    sent: list[tuple[int, int, int]],
    delivered: list[tuple[int, int]],
    acks: list[tuple[int, str]],
    stored: set[int],
    dead: set[int],
    unanswered: int,
    held: frozenset[int] = frozenset(),
    held_reads: int = 0,
) -> LeaseVerdict:
    """`sent`: (sender, sequence, message id) of every acknowledged send; `delivered`:
    (message id, delivery count) of every message a client got from a read; `acks`: (message
    id, outcome) of every ack a client sent: ok, not_leased, or unanswered (the connection
    broke first); `stored`: the ids still in the queue (never read, or leased); `dead`: the
    dead-lettered ids; `held`: the ids of the reads the commit hold never answered.

    An ack that went unanswered may have committed: a message no ok-answered ack removed, no
    longer stored, whose client sent it an unanswered ack, was acked by that ack
    (`acked_unanswered`), as only an ack deletes a lease. Every other message gone is lost."""
    acknowledged = {m for _, _, m in sent}
    ok_acks = Counter(m for m, outcome in acks if outcome == "ok")
    tried = {m for m, outcome in acks if outcome == "unanswered"}
    kept = (stored | dead) & acknowledged
    acked = {m for m in acknowledged if ok_acks[m] > 0}
    by_unanswered = (tried & acknowledged) - acked - kept
    counts: dict[int, list[int]] = {}
    for m, n in delivered:
        counts.setdefault(m, []).append(n)
    redelivered_ids = {m for m, n in delivered if n > 1}
    return LeaseVerdict(
        strategy=strategy,
        sent=len(acknowledged),
        acked=len(acked | by_unanswered),
        remaining=len(stored & acknowledged),
        dead_lettered=len(dead & acknowledged),
        lost=len(acknowledged - acked - by_unanswered - kept),
        duplicates=sum(len(ns) - 1 for ns in counts.values()),
        redelivered=sum(1 for _, n in delivered if n > 1),
        # Two deliveries with one count are one lease delivered twice: never a redelivery.
        unexplained_duplicates=sum(len(ns) - len(set(ns)) for ns in counts.values()),
        acked_twice=sum(1 for n in ok_acks.values() if n > 1),
        acked_unanswered=len(by_unanswered),
        held=len(held),
        held_reads=held_reads,
        held_redelivered=len(held & redelivered_ids),
        unanswered=unanswered,
        stored_unacknowledged=len((stored | dead) - acknowledged),
    )


def client_groups(clients: int, processes: int, messages: int) -> list[tuple[int, int, int]]:
    """(first client, clients, messages each) of every client process: the clients split over
    the processes as evenly as they go, the messages over the clients, the first clients one
    more each where they do not divide; a process whose clients would send different counts
    is two. Clients that would send nothing are left out."""
    base, extra = divmod(messages, clients)
    size, bigger = divmod(clients, processes)
    groups, first = [], 1
    for k in range(processes):
        end = first + size + (1 if k < bigger else 0)  # one past the process's last client
        for lo, hi, each in (
            (first, min(end, extra + 1), base + 1),
            (max(first, extra + 1), end, base),
        ):
            if hi > lo and each > 0:
                groups.append((lo, hi - lo, each))
        first = end
    return groups


def _remaining(db: PostgresServer) -> list[tuple[int, int, int]]:
    """(sender, sequence, id) of every message left; the sequence is read from the body's tag."""
    out = []
    for line in db.psql(
        "SELECT sender_id, split_part(body, ':', 2), id FROM messages"
    ).splitlines():
        sender, sequence, mid = line.split("\t")
        out.append((int(sender), int(sequence), int(mid)))
    return out


def _ids(db: PostgresServer, sql: str) -> set[int]:
    return {int(line) for line in db.psql(sql).splitlines() if line}


def _tsv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def soak(
    out: Path,
    strategy: str,
    messages: int,
    middlewares: int = 2,
    workers: int = DEFAULT_MQ_WORKERS,
    clients: int = 64,
    processes: int = 2,
    kill_middleware: bool = False,
    hold_after: int | None = None,
    timeout_s: float = 600.0,
    group_commit: int = 1,
    idempotent_send: bool = False,
) -> Verdict:
    """Runs one soak in `out` and returns the oracle's verdict; `kill_middleware` kills the
    first middleware inside the window between a pop's commit and its reply, after
    `hold_after` answered pops (None: a tenth of the messages). With `idempotent_send` every
    send carries a key and is sent again when its reply is lost, and the hold also holds sends
    that stored their message: each must then be acknowledged, with that message's id, and
    stored once."""

    def judge(dirs: list[Path], db: PostgresServer, held: frozenset[int], _: int) -> Verdict:
        sent, popped, empty, unanswered, resent = [], [], 0, 0, 0
        for d in dirs:
            sent += _rows(d / "sent.tsv")
            popped += _rows(d / "popped.tsv")
            report = json.loads((d / "result.json").read_text())["mwlab"]
            empty += int(report["replies"].get("pop_queue", {}).get("empty", 0))
            unanswered += int(report["unanswered"].get("pop_queue", 0))
            resent += int(report.get("resent", 0))
        v = oracle(strategy, sent, popped, _remaining(db), empty, unanswered, held)
        if not idempotent_send:
            return v
        journal = out / "held.txt"
        lines = journal.read_text().splitlines() if journal.exists() else []
        held_sends = {int(x[5:]) for ln in lines for x in ln.split() if x.startswith("send:")}
        acknowledged = {m for _, _, m in sent}
        return replace(v, idempotent=True, resent=resent, held_sends=len(held_sends),
                       held_sends_acknowledged=len(held_sends & acknowledged))  # fmt: skip

    workload = ["--workload", "shared-receiver",
                *(("--idempotent-send",) if idempotent_send else ())]  # fmt: skip
    return _run(out, strategy, messages, middlewares, workers, clients, processes,
                kill_middleware, hold_after, timeout_s, workload, judge,
                group_commit)  # fmt: skip


def lease_soak(
    out: Path,
    strategy: str,
    messages: int,
    middlewares: int = 2,
    workers: int = DEFAULT_MQ_WORKERS,
    clients: int = 64,
    processes: int = 2,
    kill_middleware: bool = False,
    hold_after: int | None = None,
    timeout_s: float = 600.0,
    visibility_ms: int = 3000,
    read_batch: int = 2,
    group_commit: int = 1,
) -> LeaseVerdict:
    """The lease mode's soak in `out`: read and ack, leases of `visibility_ms`, up to
    `read_batch` messages a read; `kill_middleware` kills the first middleware between reads'
    commits and their replies, after `hold_after` answered deliveries (None: a tenth of the
    messages). The clients drain: they read until their reads found nothing for the
    visibility timeout and 2 s more."""

    def judge(
        dirs: list[Path], db: PostgresServer, held: frozenset[int], held_reads: int
    ) -> LeaseVerdict:
        sent, delivered, acks, unanswered = [], [], [], 0
        for d in dirs:
            sent += _rows(d / "sent.tsv")
            delivered += [(int(r["message_id"]), int(r["deliveries"]))
                          for r in _tsv(d / "delivered.tsv")]  # fmt: skip
            acks += [(int(r["message_id"]), r["status"]) for r in _tsv(d / "acked.tsv")]
            report = json.loads((d / "result.json").read_text())["mwlab"]
            unanswered += int(report["unanswered"].get("read", 0))
        stored = _ids(db, "SELECT id FROM messages UNION ALL SELECT id FROM leases")
        dead = _ids(db, "SELECT id FROM dead_letters")
        return lease_oracle(strategy, sent, delivered, acks, stored, dead, unanswered, held,
                            held_reads)  # fmt: skip

    workload = ["--workload", "lease", "--visibility-ms", str(visibility_ms),
                "--read-batch", str(read_batch)]  # fmt: skip
    return _run(out, strategy, messages, middlewares, workers, clients, processes,
                kill_middleware, hold_after, timeout_s, workload, judge,
                group_commit)  # fmt: skip


V = TypeVar("V", Verdict, LeaseVerdict)


def _run(
    out: Path,
    strategy: str,
    messages: int,
    middlewares: int,
    workers: int,
    clients: int,
    processes: int,
    kill_middleware: bool,
    hold_after: int | None,
    timeout_s: float,
    workload: list[str],
    judge: Callable[[list[Path], PostgresServer, frozenset[int], int], V],
    group_commit: int = 1,
) -> V:
    """Starts PostgreSQL, the middlewares and the client processes (`workload`: their
    workload's options), kills the first middleware inside the commit hold's window if asked,
    and hands the clients' directories, the database, the held ids and the held requests to
    `judge` before the database stops; writes its verdict to `verdict.json`. `group_commit`:
    the middlewares run up to that many requests in one transaction."""
    if not SIMPLEMQ_JAR.exists():
        raise HostError(f"{SIMPLEMQ_JAR} missing: `make build` builds it")
    if not 1 <= processes <= clients or messages < 1:
        raise ValueError("need at least one message, and a client in every process")
    host = LocalHost(name="mq", role="server", address=LOOPBACK, base=out)
    db = PostgresServer(host, "postgres", free_port(), middlewares * workers + 10, strategy)
    db.admit(middlewares * workers)
    db.start()
    procs = []
    try:
        db.psql("SELECT add_queue()")
        ports = [free_port() for _ in range(middlewares)]
        journal = out / "held.txt"
        journal.unlink(missing_ok=True)
        after = messages // 10 if hold_after is None else hold_after
        hold = ["--hold-after-commit", str(after), "--hold-journal", str(journal.resolve())]
        mws = [
            start_simplemq(
                host,
                port,
                workers,
                db.url,
                f"middlewares/mw{i + 1}",
                i,
                extra=[
                    *(hold if kill_middleware and i == 0 else ()),
                    *(("--group-commit", str(group_commit)) if group_commit > 1 else ()),
                ],
            )
            for i, port in enumerate(ports)
        ]
        for port, mw in zip(ports, mws, strict=True):
            wait_simplemq(port, mw)
        targets = ",".join(f"{LOOPBACK}:{p}" for p in ports)
        for k, (first, count, each) in enumerate(client_groups(clients, processes, messages)):
            rel = f"clients/c{k + 1}"
            cmd = simplemq_client_command(
                SIMPLEMQ_JAR,
                ["--middleware", targets, "--first-client", str(first),
                 "--clients", str(count), "--all-clients", str(clients),
                 *workload, "--receiver", "1",
                 "--messages", str(each), "--test-time", "0",
                 "--start-gate", "gate", "--message-log", ".", "--json-out-file", "result.json"],
            )  # fmt: skip
            procs.append(host.start(cmd, rel, "client", k))
        deadline = time.monotonic() + 120.0
        for p in procs:
            ready = out / p.rel / "gate.ready"
            while not ready.exists():
                if p.poll() is not None:
                    raise HostError(f"client {p.rel} exited with {p.exit_code} before its gate")
                if time.monotonic() > deadline:
                    raise HostError(f"client {p.rel} not at its gate after 120 s")
                time.sleep(0.05)
        # Client 1, the shared receiver, registered before any client opens its gate.
        for p in procs:
            (out / p.rel / "gate").touch()
        started = time.monotonic()
        killed, first_held = False, None
        for p in procs:
            while p.poll() is None:
                if kill_middleware and not killed and journal.exists():
                    # Once a pop is held, give the other workers a moment to commit and be
                    # held too, then kill inside the window.
                    first_held = first_held or time.monotonic()
                    lines = journal.read_text().count("\n")
                    if lines >= workers or time.monotonic() - first_held > 2.0:
                        mws[0].signal(signal.SIGKILL)
                        killed = True
                if time.monotonic() - started > timeout_s:
                    raise HostError(f"the soak did not finish in {timeout_s:.0f} s")
                time.sleep(0.05)
            if p.exit_code != 0:
                raise HostError(f"client {p.rel} exited with {p.exit_code}")
        if kill_middleware and not killed:
            raise HostError(
                f"no pop or read was held after {after} answered ones: raise --messages"
            )
        for mw in mws:
            mw.signal(signal.SIGTERM)
            mw.wait(30.0)
        text = journal.read_text() if killed else ""
        # One line per held worker: pops' and reads' ids, and held idempotent sends
        # ("send:<id>"), which stored their message.
        held = frozenset(int(x) for x in text.split() if not x.startswith("send:"))
        verdict = judge([out / p.rel for p in procs], db, held, text.count("\n"))
    finally:
        db.stop()
        host.stop_all()
    (out / "verdict.json").write_text(json.dumps(asdict(verdict) | {"ok": verdict.ok}) + "\n")
    return verdict


@click.group("mq")
def mq_group() -> None:
    """SimpleMQ, the message queue of the 2015 study: checks a user can run."""


mq_group.add_command(bench_command)


@mq_group.command("soak")
@click.option(
    "--strategy",
    type=click.Choice(STRATEGIES),
    default="skip_locked",
    show_default=True,
    help="The pop (broken: wrong on purpose, for the oracle).",
)
@click.option(
    "--messages",
    type=int,
    default=6400,
    show_default=True,
    help="Messages sent in all (split over the clients, the first ones one more each).",
)
@click.option("--middlewares", type=int, default=2, show_default=True)
@click.option(
    "--workers", type=int, default=DEFAULT_MQ_WORKERS, show_default=True, help="Per middleware."
)
@click.option("--clients", type=int, default=64, show_default=True)
@click.option(
    "--delivery",
    type=click.Choice(("pop", "lease")),
    default="pop",
    show_default=True,
    help="pop: at-most-once pops; lease: at-least-once read and ack (visibility timeout).",
)
@click.option(
    "--visibility-ms",
    type=int,
    default=3000,
    show_default=True,
    help="With --delivery lease: how long a read hides what it leased.",
)
@click.option(
    "--kill-middleware",
    is_flag=True,
    help="SIGKILL the first middleware between pops' (or reads') commits and their replies.",
)
@click.option(
    "--hold-after",
    type=int,
    help="With --kill-middleware: answered pops before the window opens (default: a tenth).",
)
@click.option(
    "--idempotent-send",
    is_flag=True,
    help="With --delivery pop: every send carries a key and is sent again when its reply is"
    " lost (the hold then holds stored sends too); exits 1 unless each is stored once and"
    " acknowledged.",
)
@click.option(
    "--group-commit",
    type=click.IntRange(1, 1024),
    default=1,
    show_default=True,
    help="Each middleware runs up to this many waiting requests in one transaction (1: each"
    " its own, the seed's).",
)
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("results/mq-soak"), show_default=True
)
def soak_command(strategy: str, messages: int, middlewares: int, workers: int, clients: int,
                 delivery: str, visibility_ms: int, kill_middleware: bool,
                 hold_after: int | None, idempotent_send: bool, group_commit: int,
                 out: Path) -> None:  # fmt: skip
    """The pop under concurrency (at-most-once: removed exactly once, delivered at most
    once): shared-receiver clients send and pop through the middlewares; the oracle then
    checks popped and remaining against sent, and a loss against the pops a killed middleware
    held unanswered. Prints one JSON line; exits 1 on a duplicate, or on a loss no held pop
    explains. With --delivery lease the clients read and ack (at-least-once), and it exits 1
    on a loss, or on a duplicate that was not a redelivery."""
    if idempotent_send and delivery == "lease":
        raise click.UsageError("--idempotent-send checks the pop soak's sends: use --delivery pop")
    out.mkdir(parents=True, exist_ok=True)
    v: Verdict | LeaseVerdict
    try:
        if delivery == "lease":
            v = lease_soak(out, strategy, messages, middlewares, workers, clients, 2,
                           kill_middleware, hold_after, visibility_ms=visibility_ms,
                           group_commit=group_commit)  # fmt: skip
        else:
            v = soak(out, strategy, messages, middlewares, workers, clients, 2, kill_middleware,
                     hold_after, group_commit=group_commit,
                     idempotent_send=idempotent_send)  # fmt: skip
    except (HostError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(json.dumps(asdict(v) | {"ok": v.ok}))
    if not v.ok:
        sys.exit(1)
