"""Processes on this machine outside any host (the soaks, the benchmarks, the tests): started
with their output in a log file, stopped as a user stops them. A run's processes are started
by `testbed.hosts` instead, which keeps a log directory per process on every kind of host."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path


def spawn(
    command: list[str], log: Path | None = None, *, append: bool = False, new_session: bool = False
) -> subprocess.Popen[bytes]:
    """Starts `command` with stdout and stderr in `log` (appended to with `append`), or where
    this process's go without one. `new_session` keeps the terminal's signals away from it,
    for a caller that stops its processes itself."""
    if log is None:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=new_session)
    # The child holds its own descriptor of the log; ours is closed at once.
    with log.open("ab" if append else "wb") as out:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=new_session,
        )


def terminate(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """SIGTERM, then SIGKILL if it has not exited after `timeout` s; returns its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
