"""The server settings every SimpleMQ database starts with, beyond those a run chooses
(connections, commit delay): the testbed passes them to `postgres`, the report states them.

Autovacuum. A pop deletes a row, so `messages` gains a dead tuple per message until a vacuum
removes it. At PostgreSQL's defaults (wake every 60 s, vacuum a table once 50 + 20 % of its
rows are dead) a run here, 24 s long and 4.8 s of the study's time at s = 0.2, ends before
its first vacuum: its throughput falls through the run as dead tuples pile up from an empty
table (measured 2026-11-26, 99 clients through two middlewares: Kendall's tau -0.38 over the
windows, 5,808 dead tuples at the end). The seed's runs lasted minutes and averaged over
autovacuum's cycle. So the database vacuums a table as soon as `VACUUM_THRESHOLD` rows are
dead, checking every `NAPTIME_S`: each run measures the steady state of a table kept small,
and the vacuums' CPU is charged to the database's budget, as it was on the seed's machine
(the same point: no trend, 9 autovacuums, 13 % less throughput than without them)."""

from __future__ import annotations

NAPTIME_S = 1
VACUUM_THRESHOLD = 500


def server_options() -> list[str]:
    """`-c name=value` arguments for `postgres`."""
    settings = {
        "autovacuum_naptime": f"{NAPTIME_S}s",
        "autovacuum_vacuum_threshold": str(VACUUM_THRESHOLD),
        "autovacuum_vacuum_scale_factor": "0",
    }
    return [arg for name, value in settings.items() for arg in ("-c", f"{name}={value}")]
