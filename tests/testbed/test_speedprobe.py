"""The machine's speed probe (testbed.speedprobe): real probe processes, and the summary run.json
gives of their pieces."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.machinespeed import BIN_S
from testbed import speedprobe

ROOT = Path(__file__).resolve().parents[2]


def _rows(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:] if path.exists() else []


def _wait_for_pieces(files: list[Path], n: int, deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while any(len(_rows(f)) < n for f in files):
        assert time.monotonic() < end, f"probes wrote fewer than {n} pieces in {deadline_s} s"
        time.sleep(0.2)


def test_probes_run_pinned_on_every_cpu_and_stop_on_sigterm(tmp_path: Path) -> None:
    # Started the way a background job starts it: SIGINT ignored by the parent.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        procs = speedprobe.start(tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)
    cpus = sorted(os.sched_getaffinity(0))
    files = [tmp_path / speedprobe.DIR / f"speed.cpu{c}.tsv" for c in cpus]
    try:
        assert len(procs) == len(cpus)
        _wait_for_pieces(files, 3)
        for p, cpu in zip(procs, cpus, strict=True):
            allowed = Path(f"/proc/{p.pid}/status").read_text()
            assert f"Cpus_allowed_list:\t{cpu}\n" in allowed
    finally:
        problems = speedprobe.stop(procs)
    assert problems == []
    assert all(p.returncode is not None for p in procs)
    pieces = speedprobe.read(tmp_path)
    assert len(pieces) >= 3 * len(cpus)
    assert all(us > 0 for _, us in pieces)
    s = speedprobe.summary(pieces, min(t for t, _ in pieces), max(t for t, _ in pieces))
    assert s["pieces"] == len(pieces) and s["piece_us_median"] > 0


def test_a_probe_stops_when_its_parent_is_gone(tmp_path: Path) -> None:
    out = tmp_path / "speed.tsv"
    # A parent that starts a probe and exits at once, leaving it to init.
    parent = (
        "import subprocess, sys;"
        "import os;"
        f"p = subprocess.Popen([sys.executable, '-m', 'testbed.speedprobe', {str(out)!r},"
        " '--cpu', str(min(os.sched_getaffinity(0))), '--parent', str(os.getpid())],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL);"
        "print(p.pid)"
    )
    done = subprocess.run(
        [sys.executable, "-c", parent], cwd=ROOT, capture_output=True, text=True, check=True
    )
    pid = int(done.stdout)
    end = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        assert time.monotonic() < end, "the probe outlived its parent by a minute"
        time.sleep(0.2)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_bad_flags_get_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "testbed.speedprobe", str(tmp_path / "x.tsv"), "--cpu", "4096"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--cpu 4096: not one of this process' CPUs" in done.stderr
    assert not (tmp_path / "x.tsv").exists()


def test_summary_gives_the_spread_of_the_speed_over_the_window() -> None:
    t0 = 1000.0
    # Two CPUs, four bins: the third bin's pieces took twice the CPU time (half the speed).
    pieces = [
        (t0 + b * BIN_S + k * 0.5, 2000.0 if b == 2 else 1000.0)
        for b in range(4)
        for k in range(4)
        for _cpu in range(2)
    ]
    pieces += [(t0 - 5, 9000.0), (t0 + 4 * BIN_S + 10, 9000.0)]  # outside the window
    s = speedprobe.summary(pieces, t0, t0 + 4 * BIN_S - 0.01)
    assert s["pieces"] == 32 and s["bins"] == 4
    assert s["piece_us_median"] == 1000.0
    assert s["slowest"] == pytest.approx(0.5) and s["fastest"] == pytest.approx(1.0)
    # p90 - p10 of (1, 1, 0.5, 1) over the median 1.
    assert s["spread"] == pytest.approx(1 - (0.5 + 0.3 * 0.5))
    one_bin = speedprobe.summary(pieces, t0, t0 + 1.0)
    assert one_bin["bins"] == 1 and one_bin["spread"] is None
    assert speedprobe.summary([], t0, t0 + 1)["piece_us_median"] is None
