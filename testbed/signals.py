"""SIGINT, SIGTERM and SIGHUP, handled by the process itself whatever it inherited.

A process started from a background job or a script inherits SIGINT ignored, and Python
then installs no Ctrl-C handler, so the handlers are always installed explicitly.

Two ways to handle them:
- `install_raising()`: the signal raises `Interrupted` at once. For the start of a command,
  before it has started anything that would need stopping.
- `SignalRecorder`: the signal is only recorded. A run asks `check()` at points where
  stopping leaves nothing half-started; teardown and writing the manifest never ask, so a
  second signal cannot cut them short, and every signal is listed in the manifest.
"""

from __future__ import annotations

import datetime as dt
import signal
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from types import FrameType, TracebackType
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A handled signal stops the command. Like KeyboardInterrupt a BaseException, so
    `except Exception` passes it on."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {self.name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """What a shell reports for a process killed by the signal: 128 + its number."""
        return exit_code(self.name)


def exit_code(name: str) -> int:
    """128 + the number of the signal called `name` (SIGINT 130, SIGTERM 143, SIGHUP 129)."""
    return 128 + int(signal.Signals[name])


def install_raising() -> None:
    """Handlers that raise `Interrupted` in the main thread (a no-op in other threads)."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    _install(handler)


def _install(handler: Callable[[int, FrameType | None], Any]) -> dict[int, Any]:
    """Installs `handler` for every handled signal with delivery held back meanwhile, so a
    signal arriving half-way goes to the new handler; returns the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return {}  # Python runs signal handlers in the main thread only
    previous: dict[int, Any] = {}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    try:
        for sig in HANDLED:
            previous[sig] = signal.signal(sig, handler)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return previous


@dataclass(frozen=True)
class Received:
    signal: str  # e.g. "SIGTERM"
    at: str  # ISO 8601, UTC
    stage: str  # what the run was doing

    def as_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class SignalRecorder:
    """Records handled signals while entered (`with SignalRecorder() as signals:`)."""

    stage: str = "start"
    received: list[Received] = field(default_factory=list)
    _previous: dict[int, Any] = field(default_factory=dict)

    def __enter__(self) -> SignalRecorder:
        self._previous = _install(self._record)
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        if not self._previous:
            return
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        try:
            for sig, old in self._previous.items():
                # None: the previous handler was not set from Python; the default is closest.
                signal.signal(sig, signal.SIG_DFL if old is None else old)
        finally:
            self._previous = {}
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _record(self, signum: int, _frame: FrameType | None) -> None:
        now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
        self.received.append(Received(signal.Signals(signum).name, now, self.stage))

    @property
    def first(self) -> Received | None:
        return self.received[0] if self.received else None

    def check(self) -> None:
        """Raises `Interrupted` for the first signal received, if any."""
        if self.received:
            raise Interrupted(signal.Signals[self.received[0].signal])
