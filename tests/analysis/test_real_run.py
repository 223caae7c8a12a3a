"""The real middleware and the built-in generator, read back by the parsers."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from analysis import aggregate, parse
from testbed.services.memcached import memcached_command
from testbed.services.middleware import command_flags, middleware_command
from testbed.services.ports import LOOPBACK
from tests.analysis.test_parse import LOADGEN, ROOT, _wait_port


def _middleware_jar() -> Path:
    jars = [
        p
        for p in (
            ROOT / "build" / "middleware.jar",
            ROOT / "middleware" / "core" / "target" / "middleware.jar",
        )
        if p.exists()
    ]
    assert jars, "middleware.jar missing: run `make build`"
    return max(jars, key=lambda p: p.stat().st_mtime)


def test_middleware_and_client_sides_agree(tmp_path: Path) -> None:
    mc = subprocess.Popen(
        memcached_command(LOOPBACK, 24030, threads=None, memory_mib=None, connections=None)
    )
    mw = None
    try:
        _wait_port(24030, mc)
        flags = command_flags(
            [f"{LOOPBACK}:24030"], workers=4, sharded=False, stats_dir=str(tmp_path / "stats")
        )
        mw = subprocess.Popen(
            middleware_command(_middleware_jar(), LOOPBACK, 24031, flags),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_port(24031, mw, timeout=60)
        subprocess.run(
            [
                "java",
                "-jar",
                str(LOADGEN),
                "-s",
                "127.0.0.1",
                "-p",
                "24031",
                "-c",
                "2",
                "-t",
                "1",
                "--test-time=3",
                "--ratio=1:2",
                "-d",
                "128",
                "--key-maximum=300",
                f"--json-out-file={tmp_path / 'result.json'}",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
    finally:
        if mw is not None:
            mw.send_signal(signal.SIGTERM)
            mw.wait(timeout=30)
        mc.terminate()
        mc.wait(timeout=10)
    stats = parse.read_stats_dir(tmp_path / "stats")
    client = parse.read_memtier(tmp_path / "result.json")
    assert stats.summary.get("clean_shutdown") is True
    for kind in ("set", "get"):
        mw_count = stats.windows.loc[stats.windows["type"] == kind, "count"].sum()
        cl_count = client.totals.set_index("type").loc[kind, "count"]
        # Every request the client completed passed through the middleware.
        assert mw_count == cl_count > 0
    # Response time seen by the client includes the middleware's.
    mw_mean = (stats.windows["response_us_mean"] * stats.windows["count"]).sum() / stats.windows[
        "count"
    ].sum()
    cl = client.totals
    cl_mean = (cl["response_us_mean"] * cl["count"]).sum() / cl["count"].sum()
    assert cl_mean >= mw_mean
    assert not aggregate.trim(stats.windows, 1, 0).empty
