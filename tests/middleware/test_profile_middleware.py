"""scripts/profile_middleware.py reads perf's output as perf writes it (fixtures recorded from
perf 6.1 on a profiled middleware), and says so when a counter is missing."""

from __future__ import annotations

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
