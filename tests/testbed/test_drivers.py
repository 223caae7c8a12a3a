"""Client commands of the drivers: the built-in generator's window length (--window-ms)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from analysis.parse import read_memtier
from testbed.drivers import Target, client_command, resolve_driver, stepped
from testbed.point import Point

TARGET = Target("127.0.0.1", 11211)


def command(driver: str, **point: object) -> list[str]:
    return client_command(driver, Point.model_validate(point), TARGET, "loadgen.jar", "cfg")


def test_window_ms_is_passed_to_the_builtin_generator_only_when_set():
    assert not any("--window-ms" in a for a in command("builtin"))
    assert not any("--window-ms" in a for a in command("builtin", client_window_ms=1000))
    cmd = command("builtin", client_window_ms=250)
    assert cmd[-1] == "--window-ms=250"
    assert "--window-ms=250" in stepped(cmd, (1, 2), 2.0)
    for driver in ("memtier", "memaslap"):
        assert not any("window" in a for a in command(driver, client_window_ms=250))


@pytest.mark.parametrize("bad", [0, 49, 60001])
def test_window_ms_out_of_range(bad):
    with pytest.raises(ValueError, match="client_window_ms"):
        Point.model_validate({"client_window_ms": bad})


def _run(jar: Path, port: int, directory: Path, window_ms: int) -> Path:
    point = Point.model_validate(
        {"duration_s": 2, "client_window_ms": window_ms, "workload": {"key_maximum": 200}}
    )
    cmd = client_command("builtin", point, Target("127.0.0.1", port), str(jar), "")
    r = subprocess.run(cmd, cwd=directory, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return directory / "result.json"


def test_default_command_runs_on_any_generator_build(loadgen_jar, memcached, tmp_path):
    res = read_memtier(_run(loadgen_jar, memcached, tmp_path, 1000))
    assert res.window_ms == 1000
    assert (res.windows["start_ms"] == res.start_ms + 1000 * res.windows["window"]).all()


def test_quarter_second_windows(loadgen_jar, memcached, tmp_path):
    res = read_memtier(_run(loadgen_jar, memcached, tmp_path, 250))
    assert res.window_ms == 250
    w = res.windows
    assert w["window"].max() >= 8  # two seconds are windows 0..7, then the last replies
    assert (w["start_ms"] == res.start_ms + 250 * w["window"]).all()


def test_a_point_runs_the_generator_it_names_whatever_is_installed(tmp_path, monkeypatch):
    """The same study on every path: memtier on PATH (as in `nix develop`) changes nothing."""
    fake = tmp_path / "memtier_benchmark"
    fake.write_text("#!/bin/sh\necho memtier_benchmark 2.1.0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert Point().driver == "builtin"
    assert resolve_driver(Point().driver) == "builtin"
    assert resolve_driver("memtier") == "memtier"
    # Datasets planned before drivers were named say `auto`: they ran the built-in generator.
    assert resolve_driver("auto") == "builtin"
