"""SimpleMQ's side of a run: what its database holds before the clients start (the queue,
the registered clients, preloaded messages) and its clients' command-line flags."""

from __future__ import annotations

from testbed.point import Point, QueueSettings
from testbed.services.postgres import PostgresServer

# Every client of a run sends to and pops from this queue (the seed's queue 1); the harness
# creates it, as the first queue of an empty database.
QUEUE = 1
# shared_receiver: the one receiver every client sends to and pops as.
SHARED_RECEIVER = 1
# Preloaded messages carry sequence numbers from here on, far from any a client reaches in a
# run, so that they are told apart from the clients' own in a message log.
PRELOAD_SEQUENCE = 1_000_000_000
# The client's --workload for each mix; its --size sets the body either way.
CLIENT_WORKLOAD = {"static": "staticsmall", "shared_receiver": "shared-receiver"}


def prepare(db: PostgresServer, clients: int, q: QueueSettings) -> None:
    """Creates the queue, registers clients 1..`clients` (the clients then start with
    --no-register: every id exists before any client sends, which a preloaded message
    needs as well) and preloads `q.preload` messages."""
    created = db.rows("SELECT add_queue()")
    if created != [[str(QUEUE)]]:
        raise ValueError(f"the run's queue is {created}, not {QUEUE}: the database was not empty")
    db.psql(f"INSERT INTO clients (id) SELECT generate_series(1, {clients})")
    if q.preload:
        db.psql(preload_sql(clients, q))


def preload_sql(clients: int, q: QueueSettings) -> str:
    """Inserts `q.preload` messages as the clients would have sent them: bodies tagged
    `<sender>:<sequence>:` and padded with 'x' to the message size (a client checks that of
    every message it pops), addressed round-robin to the receivers the mix pops as."""
    if q.mix == "shared_receiver":
        receiver = str(SHARED_RECEIVER)
        sender = f"1 + g % {clients}"
    else:
        # Client c sends to c + 1 (wrapping to 1), so receiver r's sender is r - 1.
        receiver = f"1 + g % {clients}"
        sender = f"1 + (g % {clients} + {clients} - 1) % {clients}"
    return (
        "INSERT INTO messages (sender_id, receiver_id, queue_id, sent_at, body)"
        f" SELECT s, r, {QUEUE}, now(),"
        f" rpad(s || ':' || ({PRELOAD_SEQUENCE} + g) || ':', {q.message_size}, 'x')"
        f" FROM generate_series(0, {q.preload - 1}) AS g,"
        f" LATERAL (SELECT {sender} AS s, {receiver} AS r) AS who"
    )


# Priming rounds of a direct client: pgjdbc prepares a statement on the server from its fifth
# execution (prepareThreshold 5), so six rounds run every procedure prepared at least once.
PRIME_ROUNDS = 6


def primes(point: Point) -> bool:
    """Whether the point's clients prime their connections at the start gate: those straight
    to the database, on hosts of this machine (an ssh run has no start gate, and a real
    machine no CPU budget that would stretch a connection's first calls)."""
    return point.middlewares == 0 and point.hosts != "ssh"


def client_flags(
    point: Point, first_client: int, clients: int, target: list[str], out: str = "result.json"
) -> list[str]:
    """One client process's flags: `clients` closed-loop clients from id `first_client` on,
    over `target` (`--middleware HOST:PORT,...` or `--db URL`), for the point's duration."""
    q = point.queue_settings
    return [
        *target,
        "--first-client", str(first_client),
        "--clients", str(clients),
        "--all-clients", str(point.clients_total),
        "--workload", CLIENT_WORKLOAD[q.mix],
        "--size", str(q.message_size),
        "--queue", str(QUEUE),
        "--receiver", str(SHARED_RECEIVER),
        "--test-time", f"{point.duration_s:g}",
        "--window-ms", str(point.client_window_ms),
        "--no-register",
        # Clients straight to the database prime their own connection's procedures first (the
        # middleware's connections are primed by its warm-up).
        "--prime", str(PRIME_ROUNDS if primes(point) else 0),
        "--json-out-file", out,
    ]  # fmt: skip
