"""Fixtures of the testbed suite: real memcached servers, ports 22000-23999, `mwt` namespaces."""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from analysis.parse.manifest import read_manifest
from testbed import emulation
from testbed.services.local import spawn, terminate
from testbed.services.memcached import memcached_command, wait_for_memcached
from testbed.services.memcached import memcached_stats as read_stats
from testbed.services.ports import LOOPBACK
from tests.capabilities import need

REPO = Path(__file__).resolve().parents[2]
LOADGEN = REPO / "build" / "loadgen.jar"
# Each test takes a block of 25 ports; the suite's range is 22000-23999. A run listens on
# base+i (servers), base+100+i (middlewares) and base+200 (iperf3): those reach into later
# blocks, which is harmless as the tests run one at a time, and stay inside the range. The
# blocks start over once the range is used up: every test leaves no process behind, and the
# servers listen with SO_REUSEADDR, so a block is free again by then.
RUN_PORT_SPAN = 201
_PORT_BLOCKS = itertools.cycle(range(22000, 24000 - RUN_PORT_SPAN, 25))


@pytest.fixture
def base_port() -> int:
    return next(_PORT_BLOCKS)


@pytest.fixture(scope="session")
def loadgen_jar() -> Path:
    if not LOADGEN.is_file():
        pytest.fail(f"{LOADGEN} is missing: run `make build` first")
    return LOADGEN


@pytest.fixture
def memcached(base_port: int) -> Iterator[int]:
    """A memcached server on 127.0.0.1; yields its port."""
    port = base_port
    proc = spawn(
        memcached_command(LOOPBACK, port, memory_mib=256, disable_udp=False, connections=None)
    )
    try:
        # Our memcached, answering the protocol: not whatever else may hold the port.
        wait_for_memcached(LOOPBACK, port, 60.0, proc)
        yield port
    finally:
        terminate(proc, 60)


def memcached_stats(port: int) -> dict[str, int]:
    return parse_stats(read_stats(LOOPBACK, port, timeout=60))


def parse_stats(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "STAT" and parts[2].isdigit():
            out[parts[1]] = int(parts[2])
    return out


@pytest.fixture
def netns_prefix() -> str:
    """A unique prefix for this test's namespaces and links; checked clean afterwards."""
    reason = emulation.available()
    need(reason is None, f"emulated hosts unavailable: {reason}")
    return f"mwt{secrets.token_hex(2)}"


def no_leftovers(prefix: str) -> None:
    assert emulation.leftovers(prefix) == [], "namespaces or links left behind"


def processes_matching(pattern: str) -> list[str]:
    """Command lines of processes containing `pattern` (besides this check itself)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if pattern in line and "ps -eo" not in line]


def processes_in(directory: Path) -> list[str]:
    """Processes whose working directory lies in `directory`: every process a run starts on
    local and emulated hosts works in the run directory."""
    root = str(directory.resolve())
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = str((proc / "cwd").readlink())
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + "/"):
            found.append(f"{proc.name} {args}")
    return found


def have(tool: str) -> bool:
    return shutil.which(tool) is not None or shutil.which(tool, path="/usr/sbin") is not None


EXIT = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


class MwlabRun:
    """`mwlab run` as a child process; its log is read line by line as it comes."""

    def __init__(self, args: list[str], sigint: signal.Handlers = signal.SIG_IGN) -> None:
        def disposition() -> None:
            signal.signal(signal.SIGINT, sigint)

        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mwlab", "run", "--no-progress", *args],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=disposition,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, text: str, timeout: float = 180.0) -> None:
        """Blocks until a log line contains `text`; fails if the run ends first."""
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                pytest.fail(f"no {text!r} after {timeout} s:\n" + "\n".join(self.lines))
            if line is None:
                pytest.fail(f"mwlab run ended before {text!r}:\n" + "\n".join(self.lines))
            self.lines.append(line)
            if text in line:
                return

    def send(self, name: str) -> None:
        self.proc.send_signal(signal.Signals[name])

    def finish(self, timeout: float = 180.0) -> int:
        code = self.proc.wait(timeout)
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        return code

    def stop(self) -> None:
        """After a failed test: signals until the run has torn down (it may be paused)."""
        for _ in range(5):
            if self.proc.poll() is not None:
                return
            self.send("SIGTERM")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(30)
        self.proc.kill()
        self.proc.wait(30)


@pytest.fixture
def mwlab_run() -> Iterator[Callable[..., MwlabRun]]:
    """Starts `mwlab run` children (see MwlabRun); none outlives the test."""
    runs: list[MwlabRun] = []

    def start(args: list[str], sigint: signal.Handlers = signal.SIG_IGN) -> MwlabRun:
        runs.append(MwlabRun(args, sigint))
        return runs[-1]

    yield start
    for run in runs:
        run.stop()


def assert_interrupted(out: Path, code: int, log: str, signals: list[tuple[str, str]]) -> dict:
    """Exit code of the first signal, run.json valid and failed, every signal listed."""
    first, stage = signals[0]
    assert code == EXIT[first], log
    manifest = read_manifest(out / "run.json")
    assert manifest["status"] == "failed"
    assert f"interrupted by {first} during {stage}" in str(manifest["error"])
    assert [(s["signal"], s["stage"]) for s in manifest["signals"]] == signals
    assert all(p["exit_code"] is not None for p in manifest["processes"])
    return manifest
