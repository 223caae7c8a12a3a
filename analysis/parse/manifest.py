"""The testbed's run.json manifest."""

from __future__ import annotations

from pathlib import Path

from analysis.parse.errors import ParseError, read_json_object

REQUIRED = {
    "schema": int,
    "status": str,
    "point": dict,
    "started_at": str,
    "finished_at": str,
    "duration_s": (int, float),
    "host_kind": str,
    "hosts": list,
    "link_capacity_mbit": dict,
    "tools": dict,
    "processes": list,
    "clients_total": int,
}


def read_manifest(path: str | Path) -> dict[str, object]:
    """Reads and checks run.json (schema 1)."""
    path = Path(path)
    data = read_json_object(path, "missing (the run never finished writing its manifest)")
    for key, kind in REQUIRED.items():
        if key not in data:
            raise ParseError(path, f"lacks {key!r}")
        if not isinstance(data[key], kind) or isinstance(data[key], bool):
            raise ParseError(path, f"{key!r} has the wrong type: {data[key]!r}")
    if data["schema"] != 1:
        raise ParseError(path, f"unsupported schema {data['schema']} (expected 1)")
    if data["status"] not in ("ok", "failed"):
        raise ParseError(path, f"status must be 'ok' or 'failed', got {data['status']!r}")
    error = data.get("error")
    if error is not None and not isinstance(error, str):
        raise ParseError(path, f"'error' has the wrong type: {error!r}")
    if data["status"] == "failed" and not error:
        raise ParseError(path, "status 'failed' without an error saying why")
    # Signals the run received (SIGINT, SIGTERM, SIGHUP), in order; absent in older runs.
    signals = data.get("signals", [])
    if not isinstance(signals, list) or not all(
        isinstance(s, dict) and isinstance(s.get("signal"), str) for s in signals
    ):
        raise ParseError(path, f"'signals' must list {{'signal': ...}} records: {signals!r}")
    return data
