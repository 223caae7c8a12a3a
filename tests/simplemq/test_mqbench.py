"""`mwlab mq bench` (soak/mqbench.py) end to end, at its smallest grid: a real PostgreSQL 15,
the real River program (bench/mqbench, built with `go build`), real PgQ ticked by pgqd, and
SimpleMQ's real middleware and client. What a user relies on: a row for every system, each
having delivered every message it was sent in that row (after the drain), and the documented
fields in the JSON. Speed is never asserted here.

Skipped, saying how to install it, only when Go (for River's program) or PgQ (the extension
and pgqd) is missing: `make setup` installs PgQ on Debian, Go comes with the machine."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from soak.mqbench import GUARANTEE, INSTALL_GO, INSTALL_PGQ, SYSTEMS, go_available
from soak.mqbench import pgq_extension_available as pgq_available
from testbed.services.middleware import SIMPLEMQ_JAR

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {
    "system", "guarantee", "load", "producers", "consumers", "payload", "rounds",
    "delivered_per_s", "latency_p50_ms", "latency_p99_ms", "latency_measured",
    "db_cpu_s_per_message", "db_commits_per_s", "produced", "delivered", "duplicates", "lost",
    "all_delivered", "per_round", "settings", "cpu_s_per_message", "machine_busy_share",
    "steal_share", "cpu_split",
}  # fmt: skip


def test_every_system_delivers_every_message_of_its_row(tmp_path: Path) -> None:
    if not go_available():
        pytest.skip(f"Go is missing (River's program, bench/mqbench): {INSTALL_GO}")
    if not pgq_available() or shutil.which("pgqd") is None:
        pytest.skip(f"PgQ is missing (extension or pgqd): {INSTALL_PGQ}")
    if not SIMPLEMQ_JAR.exists():
        pytest.fail(f"{SIMPLEMQ_JAR} is missing: `make build` provides it")
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, "-m", "mwlab", "mq", "bench", "--loads", "2", "--payloads", "200",
         "--rounds", "1", "--seconds", "3", "--warmup", "1", "--out", str(tmp_path / "run"),
         "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert sorted(r["system"] for r in rows) == sorted(SYSTEMS)
    for r in rows:
        assert r.keys() >= FIELDS, (r["system"], FIELDS - r.keys())
        assert r["guarantee"] == GUARANTEE[r["system"]]
        assert (r["load"], r["producers"], r["consumers"], r["payload"]) == (2, 2, 2, 200)
        # Something was sent, and every message sent was delivered, once, by the drain's end.
        assert r["produced"] > 0, r
        assert r["delivered"] == r["produced"] and r["lost"] == 0, r
        assert r["duplicates"] == 0 and r["all_delivered"], r
        assert r["delivered_per_s"] > 0 and r["db_commits_per_s"] > 0, r
        assert r["db_cpu_s_per_message"] is not None and r["db_cpu_s_per_message"] > 0, r
        assert r["cpu_s_per_message"] > 0 and 0 <= r["steal_share"] < 1, r
        assert r["cpu_split"] is None, r  # all share the machine without --database-cores
        # Send to delivery, for every system; SimpleMQ's rows also give response times.
        assert r["latency_measured"] and r["latency_p99_ms"] >= r["latency_p50_ms"] >= 0, r
        assert r["per_round"][0]["latency_samples"] > 0
        if r["system"] not in ("river", "pgq"):
            assert r["per_round"][0]["pop_p50_ms"] is not None
    by = {r["system"]: r for r in rows}
    # Leases are read and acked (at-least-once); the -gc rows' middleware groups commits.
    assert by["simplemq-lease"]["guarantee"] == by["simplemq-lease-gc"]["guarantee"]
    assert by["simplemq-lease"]["guarantee"] == "at-least-once"
    assert by["simplemq-mw"]["guarantee"] == "at-most-once"
    for name in ("simplemq-mw-gc", "simplemq-lease-gc"):
        assert by[name]["settings"]["group_commit"] == "8", by[name]["settings"]
    assert by["simplemq-mw"]["settings"]["group_commit"] == "1"
    river = by["river"]
    # River's own table agrees: every job inserted is stored as completed.
    assert river["per_round"][0]["stored_completed"] == river["produced"]
    assert "load average" in done.stdout and "simplemq-direct" in done.stdout
