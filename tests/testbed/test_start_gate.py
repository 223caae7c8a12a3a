"""The built-in generator's start gate: connected, it sends nothing until the gate opens, so
CPU budgets can bind after its JVM has started."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import memcached_stats

pytestmark = pytest.mark.timeout(300)


def loadgen(jar: Path, port: int, workdir: Path, *extra: str) -> subprocess.Popen[bytes]:
    cmd = ["java", "-jar", str(jar), "-s", "127.0.0.1", "-p", str(port), "-t", "2", "-c", "3"]
    cmd += ["--ratio", "1:0", "-d", "64", "--key-maximum", "100", "--test-time", "1"]
    cmd += ["--json-out-file", "result.json", *extra]
    return subprocess.Popen(
        cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )


def wait_for(path: Path, proc: subprocess.Popen[bytes], limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_nothing_is_sent_before_the_gate_opens(tmp_path, memcached, loadgen_jar):
    proc = loadgen(loadgen_jar, memcached, tmp_path, "--start-gate", "go")
    try:
        wait_for(tmp_path / "go.ready", proc)
        # Connected (all six connections open) and waiting: not one request yet.
        stats = memcached_stats(memcached)
        assert stats["curr_connections"] >= 6
        assert stats["cmd_set"] == 0
        time.sleep(0.5)
        assert memcached_stats(memcached)["cmd_set"] == 0 and proc.poll() is None
        opened = time.time()
        (tmp_path / "go").touch()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    result = json.loads((tmp_path / "result.json").read_text())
    sets = result["ALL STATS"]["Sets"]["Count"]
    assert sets > 0 and memcached_stats(memcached)["cmd_set"] >= sets
    # The measurement starts when the gate opens, not when the JVM started.
    assert result["ALL STATS"]["Runtime"]["Start time"] >= int(opened * 1000) - 50


def test_a_gate_that_never_opens_fails_the_generator_with_the_reason(
    tmp_path, memcached, loadgen_jar
):
    proc = loadgen(
        loadgen_jar, memcached, tmp_path, "--start-gate", "go", "--start-gate-timeout", "1"
    )
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert b"did not open within 1 s" in err
    assert memcached_stats(memcached)["cmd_set"] == 0
