"""run.json, the manifest of one run: built here for every writer, read by analysis.parse.

A run that never started (bad input, or the testbed died before writing one) gets a complete
manifest too, with `status: failed`, so the pipeline keeps it and validation flags it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from testbed.point import Point

SCHEMA = 1


def now() -> str:
    """The current time as ISO 8601 in UTC, to the millisecond."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def build_manifest(
    *,
    point: dict[str, Any],
    error: str | None,
    started_at: str,
    finished_at: str,
    duration_s: float,
    host_kind: str,
    driver: str,
    clients_total: int,
    hosts: Sequence[dict[str, Any]] = (),
    link_capacity_mbit: dict[str, float] | None = None,
    tools: dict[str, str | None] | None = None,
    processes: Sequence[dict[str, Any]] = (),
    warnings: Sequence[str] = (),
    signals: Sequence[dict[str, str]] = (),
    stage_s: dict[str, float] | None = None,
    cpu: dict[str, Any] | None = None,
    link_delay: dict[str, Any] | None = None,
    network: dict[str, Any] | None = None,
    link_settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest; `status` is `ok` exactly when there is no error."""
    return {
        "schema": SCHEMA,
        "status": "ok" if error is None else "failed",
        "error": error,
        "point": point,
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_s": round(duration_s, 3),
        "host_kind": host_kind,
        "driver": driver,
        "hosts": list(hosts),
        "link_capacity_mbit": dict(link_capacity_mbit or {}),
        "tools": dict(tools or {}),
        "processes": list(processes),
        "clients_total": clients_total,
        "warnings": list(warnings),
        "signals": list(signals),
        # Wall time per stage, teardown included: where a run's time goes.
        "stage_s": {k: round(v, 3) for k, v in (stage_s or {}).items()},
        # CPU budgets applied and CPU used per host and by the machine (testbed.cpuaccount).
        "cpu": cpu,
        # One-way delays between emulated roles as applied (testbed.linkdelay); None: none.
        "link_delay": link_delay,
        # TCP's retransmissions and timeouts and the link caps' drops over the measurement,
        # per emulated host (testbed.netcounters); None: not emulated, or not read.
        "network": network,
        # What the emulated hosts' routes and caps apply (testbed.emulation): `rto_min_ms`,
        # TCP's minimum RTO dilated by 1/s (null at s = 1: the kernel's 200 ms), `quickack`,
        # `tbf_latency_ms` of the caps' queues; None: not emulated.
        "link_settings": link_settings,
    }


def never_started(
    spec: dict[str, Any], error: str, started_at: str | None = None
) -> dict[str, Any]:
    """The failed manifest of a run that left none: the point as far as it validates."""
    try:
        point = Point.model_validate(spec)
    except ValidationError:
        # Bad input: the spec as given, so the manifest still says what was asked for.
        dump, kind, driver, clients = dict(spec), str(spec.get("hosts", "local")), "auto", 0
    else:
        dump, kind, driver = point.model_dump(mode="json"), point.hosts, point.driver
        clients = point.clients_total
    finished = now()
    return build_manifest(
        point=dump,
        error=error,
        started_at=started_at or finished,
        finished_at=finished,
        duration_s=0.0,
        host_kind=kind,
        driver=driver,
        clients_total=clients,
    )


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Writes run.json whole or not at all (a killed writer leaves no truncated file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    tmp.replace(path)
