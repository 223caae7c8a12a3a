"""SimpleMQ's middleware throughput against the database's own, in one interleaved run.

One PostgreSQL (skip_locked pops) on loopback; rounds alternate between clients that call the
procedures over their own JDBC connections (the seed's database baseline) and clients that go
through one middleware, for staticsmall and staticlarge messages. Prints each round and the
ratio middleware / database per size, with the rounds' spread: the seed's middleware peaked at
0.95 of its database's. The database is emptied between rounds, as the seed's started empty.

What bounds the throughput is measured beside it: what the active backends wait on, sampled
every 50 ms (CPU when they wait on nothing; WAL sync and write for commit latency; Lock and
LWLock for locks), and the WAL syncs per commit and their mean time (pg_stat_wal).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testbed.hosts import LocalHost  # noqa: E402
from testbed.services.middleware import (  # noqa: E402
    DEFAULT_MQ_WORKERS,
    SIMPLEMQ_JAR,
    simplemq_client_command,
    start_simplemq,
    wait_simplemq,
)
from testbed.services.ports import LOOPBACK, free_port  # noqa: E402
from testbed.services.postgres import PostgresServer  # noqa: E402


def clients(target: list[str], workload: str, n: int, seconds: int, out: Path) -> float:
    """Successful operations per second of `n` closed-loop clients."""
    command = simplemq_client_command(
        SIMPLEMQ_JAR,
        [*target, "--clients", str(n), "--workload", workload, "--test-time", str(seconds),
         "--json-out-file", str(out)],
    )  # fmt: skip
    subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120, check=True)
    return float(json.loads(out.read_text())["ALL STATS"]["Totals"]["Ops/sec"])


def wal(db: PostgresServer) -> tuple[float, float, float]:
    """Commits, WAL syncs and milliseconds spent syncing, so far."""
    query = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
    commits = float(db.rows(query)[0][0])
    syncs, sync_ms = (
        float(v) for v in db.rows("SELECT wal_sync, wal_sync_time FROM pg_stat_wal")[0]
    )
    return commits, syncs, sync_ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--workers", type=int, default=DEFAULT_MQ_WORKERS)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    if not SIMPLEMQ_JAR.exists():
        sys.exit(f"{SIMPLEMQ_JAR} missing: `make build` builds it")
    ratios: dict[str, list[float]] = {}
    bounds: dict[tuple[str, str], dict[str, int]] = {}
    flushes: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-mq-") as tmp:
        work = Path(tmp)
        host = LocalHost(name="bench", role="server", address=LOOPBACK, base=work)
        db = PostgresServer(host, "postgres", free_port(), args.workers + args.clients + 10)
        # The middleware's workers stay connected while the direct clients run.
        db.admit(args.workers + args.clients)
        db.start()
        try:
            db.psql("SELECT add_queue()")
            port = free_port()
            mw = start_simplemq(host, port, args.workers, db.url, "middleware")
            wait_simplemq(port, mw)
            print(f"{'workload':>12} {'round':>5} {'database ops/s':>15} {'middleware ops/s':>17}"
                  f" {'ratio':>6}")  # fmt: skip
            for workload in ("staticsmall", "staticlarge"):
                for r in range(1, args.rounds + 1):
                    result = {}
                    # Alternate the order so neither side always meets a warmer server.
                    order = ("db", "mw") if r % 2 else ("mw", "db")
                    for side in order:
                        db.psql("TRUNCATE messages; DELETE FROM clients")
                        target = ["--db", db.url] if side == "db" else [
                            "--middleware", f"{LOOPBACK}:{port}"]  # fmt: skip
                        out = work / f"{workload}-{r}-{side}.json"
                        before = wal(db)
                        sampler = db.sample_waits()
                        result[side] = clients(target, workload, args.clients, args.seconds, out)
                        seen = db.waits(sampler)
                        after = wal(db)
                        for k, v in seen.items():
                            bounds.setdefault((workload, side), {}).setdefault(k, 0)
                            bounds[(workload, side)][k] += v
                        flushes.setdefault((workload, side), []).append(
                            tuple(b - a for a, b in zip(before, after, strict=True))
                        )
                    ratio = result["mw"] / result["db"]
                    ratios.setdefault(workload, []).append(ratio)
                    print(f"{workload:>12} {r:>5} {result['db']:>15.0f} {result['mw']:>17.0f}"
                          f" {ratio:>6.2f}")  # fmt: skip
        finally:
            db.stop()
            host.stop_all()
    for workload, values in ratios.items():
        spread = statistics.stdev(values) if len(values) > 1 else float("nan")
        print(f"{workload}: middleware / database {statistics.mean(values):.2f}"
              f" (sd {spread:.2f} over {len(values)} rounds; seed 003: 0.95)")  # fmt: skip
    print("\nwhat the active backends waited on (share of samples), and the WAL per commit:")
    for (workload, side), seen in sorted(bounds.items()):
        total = sum(seen.values()) or 1
        top = sorted(seen.items(), key=lambda kv: -kv[1])[:4]
        commits, syncs, sync_ms = (sum(f[i] for f in flushes[(workload, side)]) for i in range(3))
        print(f"{workload:>12} {side:>3}: "
              + ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in top)
              + f"; {syncs / max(commits, 1):.2f} syncs per commit,"
              f" {sync_ms / max(syncs, 1):.2f} ms each")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
