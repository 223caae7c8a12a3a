"""One measurement at a time on this machine, whoever starts it.

The pipeline's measurement jobs hold Snakemake's `testbed` resource, but a scheduler that
starts two anyway, or a second pipeline (another profile) on the same machine, would make
two runs share the CPUs their budgets assume. Every pipeline measurement job therefore takes
this machine-wide lock (an flock on a file in the temporary directory) for its whole run.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
