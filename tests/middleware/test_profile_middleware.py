"""scripts/profile_middleware.py reads perf's output as perf writes it (fixtures recorded from
perf 6.1 on a profiled middleware), and says so when a counter is missing."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from ..pipeline.scripts import REPO, load_file

FIXTURES = Path(__file__).resolve().parent / "fixtures"


pm = load_file(REPO / "scripts" / "profile_middleware.py", "profile_middleware")


def test_flat_report_rows_keep_thread_object_and_java_signature() -> None:
    rows = pm.parse_report((FIXTURES / "perf-report-flat.txt").read_text())
    assert len(rows) == 8  # the header lines are not rows
    first = rows[0]
    assert (first.share, first.samples, first.thread, first.dso, first.kernel) == (
        pytest.approx(0.072),
        34,
        "C2 CompilerThre",
        "libjvm.so",
        False,
    )
    assert first.symbol == "PhaseIdealLoop::build_loop_late"
    jit = [r for r in rows if r.thread == "net-thread"]
    assert jit[0].dso == "[JIT] tid 26684"
    assert jit[0].symbol == "java.lang.Object java.util.HashMap.get(java.lang.Object)"
    assert [r.kernel for r in rows if r.dso == "[kernel.kallsyms]"] == [True, True, True]


def test_places_and_thread_groups() -> None:
    assert pm.place("[kernel.kallsyms]", True) == "kernel"
    assert pm.place("[JIT] tid 26684", False) == "JIT code"
    assert pm.place("perf-26684.map", False) == "JIT code"
    assert pm.place("libjvm.so", False).startswith("JVM")
    assert pm.place("libc.so.6", False) == "libc"
    assert pm.place("libnio.so", False) == "JDK natives and other libraries"
    assert pm.thread_group("worker-17") == "worker-*"
    assert pm.thread_group("GC Thread#1") == "GC Thread#*"
    assert pm.thread_group("net-thread") == "net-thread"


def test_stat_counts_and_a_missing_counter() -> None:
    counts = pm.parse_stat((FIXTURES / "perf-stat.txt").read_text())
    assert set(counts) == {"task-clock", "context-switches", "cpu-migrations"}
    assert counts["task-clock"] > 0
    unsupported = "   <not supported>      context-switches\n   1.50 msec task-clock\n"
    with pytest.raises(pm.ProfileError, match="context-switches"):
        pm.parse_stat(unsupported)


def test_context_switches_are_split_by_thread_group() -> None:
    """Two threads named as the JVM names its workers sleep 50 times each: their group counts
    at least those 100 switches, the one started after the first snapshot from zero."""
    n_sleeps, ops = 50, 100

    def sleeper(index: int, started: threading.Event) -> None:
        Path(f"/proc/self/task/{threading.get_native_id()}/comm").write_text(f"sleeper-{index}")
        started.set()
        go.wait()
        for _ in range(n_sleeps):
            time.sleep(0.001)
        done.release()
        hold.wait()

    go, hold, done = threading.Event(), threading.Event(), threading.Semaphore(0)
    started = [threading.Event() for _ in range(2)]
    threads = [threading.Thread(target=sleeper, args=(i, e)) for i, e in enumerate(started)]
    try:
        threads[0].start()
        started[0].wait()
        before = pm.thread_switches(os.getpid())
        threads[1].start()
        started[1].wait()
        go.set()
        done.acquire()
        done.acquire()
        after = pm.thread_switches(os.getpid())
    finally:
        go.set()
        hold.set()
        for t in threads:
            t.join()
    assert {"sleeper-0", "sleeper-1"} <= {name for name, _ in after.values()}
    per_op = pm.switches_by_group(before, after, ops)
    assert per_op["sleeper-*"] >= 2 * n_sleeps / ops
    assert list(per_op) == sorted(per_op, key=lambda g: -per_op[g])
