"""`mwlab mq soak`: SimpleMQ's exactly-once check under concurrency, with an optional crash.

It starts PostgreSQL with one pop strategy, two middlewares and shared-receiver clients in
two processes on local hosts, which send messages tagged (sender, sequence) to one receiver
and pop as it. At the end the oracle reads what the clients were acknowledged and popped, and
what the database still holds, and demands: popped and remaining together are what was sent,
nothing twice, each sender's messages in id order. With `kill_after_s`, one middleware is
killed with SIGKILL mid-soak: a pop whose reply died with it may have removed a message no
client received; such messages are counted (`lost_in_flight`), and may number no more than the
requests the clients saw go unanswered.
"""

from __future__ import annotations

import csv
import itertools
import json
import signal
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import click

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
    """The oracle's count; `ok` when nothing was popped twice and nothing went missing but
    what unanswered requests can explain."""

    strategy: str
    sent: int
    popped: int
    remaining: int
    duplicates: int
    lost: int
    lost_in_flight: int
    out_of_order: int
    empty_pops: int
    unanswered: int
    stored_unacknowledged: int

    @property
    def ok(self) -> bool:
        return self.duplicates == 0 and self.lost == 0 and self.out_of_order == 0


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
) -> Verdict:
    """`sent`: (sender, sequence, message id) of every acknowledged send; `popped`: of every
    pop a client received; `remaining`: of every row left in the database."""
    acknowledged = {(s, q): m for s, q, m in sent}
    seen = Counter((s, q) for s, q, _ in popped) + Counter((s, q) for s, q, _ in remaining)
    duplicates = sum(n - 1 for n in seen.values() if n > 1)
    missing = [k for k in acknowledged if k not in seen]
    # A message stored, but whose acknowledgement died with a middleware.
    stored_unacknowledged = sum(1 for k in seen if k not in acknowledged)
    # Each unanswered request removed at most one message no client received.
    in_flight = min(len(missing), unanswered)
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
        lost=len(missing) - in_flight,
        lost_in_flight=in_flight,
        out_of_order=out_of_order,
        empty_pops=empty_pops,
        unanswered=unanswered,
        stored_unacknowledged=stored_unacknowledged,
    )


def _remaining(db: PostgresServer) -> list[tuple[int, int, int]]:
    """(sender, sequence, id) of every message left; the sequence is read from the body's tag."""
    out = []
    for line in db.psql(
        "SELECT sender_id, split_part(body, ':', 2), id FROM messages"
    ).splitlines():
        sender, sequence, mid = line.split("\t")
        out.append((int(sender), int(sequence), int(mid)))
    return out


def soak(
    out: Path,
    strategy: str,
    messages: int,
    middlewares: int = 2,
    workers: int = DEFAULT_MQ_WORKERS,
    clients: int = 64,
    processes: int = 2,
    kill_after_s: float | None = None,
    timeout_s: float = 600.0,
) -> Verdict:
    """Runs one soak in `out` and returns the oracle's verdict."""
    if not SIMPLEMQ_JAR.exists():
        raise HostError(f"{SIMPLEMQ_JAR} missing: `make build` builds it")
    if clients % processes or messages % clients:
        raise ValueError("clients must split evenly over the processes, messages over clients")
    host = LocalHost(name="mq", role="server", address=LOOPBACK, base=out)
    db = PostgresServer(host, "postgres", free_port(), middlewares * workers + 10, strategy)
    db.admit(middlewares * workers)
    db.start()
    procs = []
    try:
        db.psql("SELECT add_queue()")
        ports = [free_port() for _ in range(middlewares)]
        mws = [
            start_simplemq(host, port, workers, db.url, f"middlewares/mw{i + 1}", i)
            for i, port in enumerate(ports)
        ]
        for port, mw in zip(ports, mws, strict=True):
            wait_simplemq(port, mw)
        per = clients // processes
        targets = ",".join(f"{LOOPBACK}:{p}" for p in ports)
        for k in range(processes):
            rel = f"clients/c{k + 1}"
            cmd = simplemq_client_command(
                SIMPLEMQ_JAR,
                ["--middleware", targets, "--first-client", str(1 + k * per),
                 "--clients", str(per), "--all-clients", str(clients),
                 "--workload", "shared-receiver", "--receiver", "1",
                 "--messages", str(messages // clients), "--test-time", "0",
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
        killed = False
        for p in procs:
            while p.poll() is None:
                if (
                    kill_after_s is not None
                    and not killed
                    and time.monotonic() - started > kill_after_s
                ):
                    mws[0].signal(signal.SIGKILL)
                    killed = True
                if time.monotonic() - started > timeout_s:
                    raise HostError(f"the soak did not finish in {timeout_s:.0f} s")
                time.sleep(0.05)
            if p.exit_code != 0:
                raise HostError(f"client {p.rel} exited with {p.exit_code}")
        for mw in mws:
            mw.signal(signal.SIGTERM)
            mw.wait(30.0)
        sent, popped, empty, unanswered = [], [], 0, 0
        for p in procs:
            d = out / p.rel
            sent += _rows(d / "sent.tsv")
            popped += _rows(d / "popped.tsv")
            report = json.loads((d / "result.json").read_text())["mwlab"]
            empty += int(report["replies"].get("pop_queue", {}).get("empty", 0))
            unanswered += int(report["unanswered"].get("pop_queue", 0))
        verdict = oracle(strategy, sent, popped, _remaining(db), empty, unanswered)
    finally:
        db.stop()
        host.stop_all()
    (out / "verdict.json").write_text(json.dumps(asdict(verdict) | {"ok": verdict.ok}) + "\n")
    return verdict


@click.group("mq")
def mq_group() -> None:
    """SimpleMQ, the message queue of the 2015 study: checks a user can run."""


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
    help="Messages sent in all (a multiple of --clients).",
)
@click.option("--middlewares", type=int, default=2, show_default=True)
@click.option(
    "--workers", type=int, default=DEFAULT_MQ_WORKERS, show_default=True, help="Per middleware."
)
@click.option("--clients", type=int, default=64, show_default=True)
@click.option("--kill-after", type=float, help="SIGKILL the first middleware after S seconds.")
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("results/mq-soak"), show_default=True
)
def soak_command(strategy: str, messages: int, middlewares: int, workers: int, clients: int,
                 kill_after: float | None, out: Path) -> None:  # fmt: skip
    """Exactly-once under concurrency: shared-receiver clients send and pop through the
    middlewares; the oracle then checks popped and remaining against sent. Prints one JSON
    line; exits 1 on a duplicate or a lost message."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        v = soak(out, strategy, messages, middlewares, workers, clients, 2, kill_after)
    except (HostError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(json.dumps(asdict(v)))
    if not v.ok:
        sys.exit(1)
