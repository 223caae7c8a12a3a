"""A SimpleMQ run's database counters (`servers/<host>/counters.json`, written by the testbed's
SimpleMQ stage) as one flat row: what the clients' run added to PostgreSQL's statistics
(`delta`, by part), the queue's state after it, and how often an active backend was seen in
each wait event (`waits`, one sample every 50 ms).

A run without a database (every memcached run) has no counters file and gives no row; the
table then still has every fixed column, so a family's `db_counters` is schema-valid empty."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.parse.errors import ParseError, read_json_object

FILE = "counters.json"
# Parts of `delta` and their columns (testbed/services/postgres.py, counters()).
DATABASE = ("xact_commit", "xact_rollback", "deadlocks", "blks_read", "blks_hit",
            "tup_inserted", "tup_deleted", "conflicts", "temp_files")  # fmt: skip
TABLE = ("n_live_tup", "n_dead_tup", "n_tup_ins", "n_tup_del", "vacuum_count",
         "autovacuum_count")  # fmt: skip
TABLES = ("messages", "clients", "queues")
QUEUE = ("messages", "sent")

# Wait events grouped by what a backend waits for: a heavyweight lock (a row or another
# transaction, as a pop that wants a locked message does), the WAL (its insertion, its write
# and the flush a commit waits on), the CPU (active, waiting on nothing), and the rest.
WAIT_GROUPS = ("lock", "wal", "cpu", "client", "other")


def wait_group(event: str) -> str:
    """The group of a `<wait_event_type>/<wait_event>` sample."""
    kind, _, name = event.partition("/")
    if kind == "Lock":
        return "lock"
    if kind == "CPU":
        return "cpu"
    if kind == "Client":
        return "client"
    if "WAL" in name:
        return "wal"
    return "other"


ID = ("run", "point", "repetition", "server", "pop", "max_connections")
COLUMNS = (
    *ID,
    *(f"database.{c}" for c in DATABASE),
    *(f"{t}.{c}" for t in TABLES for c in TABLE),
    *(f"queue.{c}" for c in QUEUE),
    "after.messages.n_dead_tup",
    "after.queue.messages",
    "wait_samples",
    *(f"wait_{g}" for g in WAIT_GROUPS),
)


def _int(path: Path, where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseError(path, f"{where}: expected an integer, got {value!r}")
    return value


def read_counters(path: str | Path) -> dict[str, Any]:
    """One counters.json as a flat row (without the run's identity): `<part>.<column>` of its
    delta, the messages and dead tuples left after the run, and the wait samples per event
    (`waits.<type>/<event>`) and per group (`wait_<group>`, `wait_samples` their sum)."""
    path = Path(path)
    doc = read_json_object(path)
    for key in ("delta", "after", "waits"):
        if not isinstance(doc.get(key), dict):
            raise ParseError(path, f"lacks the object {key!r}")
    row: dict[str, Any] = {
        "pop": str(doc.get("pop", "")),
        "max_connections": doc.get("max_connections"),
    }
    delta = doc["delta"]
    for part, columns in (("database", DATABASE), ("queue", QUEUE)):
        values = delta.get(part)
        if not isinstance(values, dict):
            raise ParseError(path, f"delta lacks the part {part!r}")
        for c in columns:
            row[f"{part}.{c}"] = _int(path, f"delta.{part}.{c}", values.get(c))
    for table in TABLES:
        # A table the schema did not create (an older schema) has no statistics row.
        values = delta.get(table) or {}
        for c in TABLE:
            row[f"{table}.{c}"] = (
                _int(path, f"delta.{table}.{c}", values[c]) if c in values else None
            )
    after = doc["after"]
    row["after.messages.n_dead_tup"] = (after.get("messages") or {}).get("n_dead_tup")
    row["after.queue.messages"] = (after.get("queue") or {}).get("messages")
    groups = dict.fromkeys(WAIT_GROUPS, 0)
    for event, count in doc["waits"].items():
        n = _int(path, f"waits.{event}", count)
        row[f"waits.{event}"] = n
        groups[wait_group(str(event))] += n
    row |= {f"wait_{g}": n for g, n in groups.items()}
    row["wait_samples"] = sum(groups.values())
    return row


def table(runs: Iterable[tuple[str, str, object, Path]]) -> pd.DataFrame:
    """The `db_counters` table of runs given as (run, point, repetition, run directory): one
    row per database server with a counters file; none for a run without one."""
    rows = []
    for run, point, repetition, directory in runs:
        for path in sorted(Path(directory).glob(f"servers/*/{FILE}")):
            ident = {"run": run, "point": point, "repetition": repetition,
                     "server": path.parent.name}  # fmt: skip
            rows.append(ident | read_counters(path))
    frame = pd.DataFrame(rows, columns=None if rows else list(COLUMNS))
    for column in COLUMNS:
        if column not in frame.columns:
            frame[column] = pd.NA
    ordered = [*COLUMNS, *sorted(c for c in frame.columns if c not in COLUMNS)]
    frame = frame[ordered]
    text = ("run", "point", "server", "pop")
    numeric = [c for c in frame.columns if c not in (*text, "repetition")]
    frame[numeric] = frame[numeric].apply(pd.to_numeric, errors="coerce").astype(float)
    # An event a run never sampled was seen 0 times, not an unknown number of times.
    waits = [c for c in frame.columns if c.startswith("waits.")]
    frame[waits] = frame[waits].fillna(0.0)
    frame["repetition"] = pd.to_numeric(frame["repetition"]).astype("Int64")
    for c in text:
        frame[c] = frame[c].astype("string")
    return frame
