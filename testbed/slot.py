"""One measurement at a time on each machine, whoever starts it.

The pipeline's measurement jobs hold Snakemake's slots (`testbed`, or one per set of ssh
machines), but a scheduler that starts two anyway, or a second pipeline (another profile) on
the same machine, would make two runs share the CPUs their budgets assume. Every pipeline
measurement job therefore takes locks (flocks on files in the temporary directory) for its
whole run: this machine's, where its processes run here, or one per machine of its ssh
inventory, so that runs on disjoint machines measure at the same time and runs that share a
machine never overlap.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from testbed.inventory import load_inventory


def lock_path() -> Path:
    """$MWLAB_SLOT_LOCK, else `mwlab-measurement.lock` in the temporary directory."""
    own = os.environ.get("MWLAB_SLOT_LOCK")
    return Path(own) if own else Path(tempfile.gettempdir()) / "mwlab-measurement.lock"


@contextmanager
def measurement_slot(path: Path | None = None) -> Iterator[float]:
    """Holds the machine's measurement slot; yields the seconds spent waiting for it."""
    path = path or lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        t0 = time.monotonic()
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - t0
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def machine_lock(machine: str) -> Path:
    """The lock of one ssh machine (`user@address` or an ssh alias), beside this machine's."""
    safe = re.sub(r"[^A-Za-z0-9.@_-]", "_", machine)
    return lock_path().with_name(f"mwlab-machine-{safe}.lock")


def slot_locks(spec: Mapping[str, Any]) -> list[Path]:
    """The locks a run of the point `spec` holds: one per machine of its ssh inventory, in one
    order for every run (so two runs never wait on each other in a circle), else this
    machine's. An ssh point whose inventory cannot be read holds this machine's: its run
    fails on that, and fails alone."""
    if spec.get("hosts") == "ssh" and spec.get("inventory"):
        try:
            inv = load_inventory(Path(str(spec["inventory"])))
        except (OSError, ValueError):
            return [lock_path()]
        return sorted({machine_lock(m.ssh or f"{inv.user}@{m.address}") for m in inv.machines})
    return [lock_path()]


@contextmanager
def measurement_slots(paths: list[Path]) -> Iterator[float]:
    """Holds every lock of `paths`, taken in their order; yields the seconds spent waiting."""
    t0 = time.monotonic()
    with ExitStack() as stack:
        for path in paths:
            stack.enter_context(measurement_slot(path))
        yield time.monotonic() - t0
