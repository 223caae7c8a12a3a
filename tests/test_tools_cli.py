"""The `mwlab tools` subcommand reports what is installed and fails when a tool is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from testbed.drivers import memaslap_binary
from testbed.tools import TOOLS, lock_pins

ROOT = Path(__file__).resolve().parents[1]


def run_mwlab(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mwlab", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )


def test_tools_json_reports_installed_memcached() -> None:
    proc = run_mwlab("tools", "--json")
    assert proc.returncode == 0, proc.stderr
    versions = json.loads(proc.stdout)
    assert versions["memcached"].startswith("memcached ")
    assert versions["java"] is not None


def test_tools_check_fails_when_a_tool_is_missing(tmp_path: Path) -> None:
    # Only python on PATH: every required tool is missing.
    (tmp_path / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = run_mwlab("tools", "--check", env=env)
    assert proc.returncode == 1
    assert "missing required tools" in proc.stderr
    assert "memcached" in proc.stderr


def venv_path_env(tmp_path: Path | None = None) -> dict[str, str]:
    """PATH as make sets it: .venv/bin first (and, if given, a directory before even that)."""
    first = [str(tmp_path)] if tmp_path else []
    path = os.pathsep.join([*first, str(Path(sys.executable).parent), os.environ["PATH"]])
    return {**os.environ, "PATH": path}


def test_tools_table_shows_full_paths_unbroken() -> None:
    proc = run_mwlab("tools", env={**venv_path_env(), "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    memcached = shutil.which("memcached")
    assert memcached is not None
    assert any(memcached in line for line in proc.stdout.splitlines())
    assert str(Path(sys.executable).parent / "snakemake") in proc.stdout


def test_tools_json_reports_the_pinned_python_versions() -> None:
    versions = json.loads(run_mwlab("tools", "--json", env=venv_path_env()).stdout)
    pins = lock_pins()
    for name in ("pandas", "numpy", "statsmodels", "scipy", "snakemake", "ruff", "pydantic"):
        assert versions[name] == pins[name], name
    assert versions["python"] == ".".join(map(str, sys.version_info[:3]))


def test_tools_check_passes_with_the_venv_on_path() -> None:
    proc = run_mwlab("tools", "--check", env=venv_path_env())
    assert proc.returncode == 0, proc.stderr


def test_tools_check_fails_when_another_snakemake_comes_first(tmp_path: Path) -> None:
    """As nixpkgs' snakemake would in a dev shell that put it on PATH before .venv's."""
    fake = tmp_path / "snakemake"
    fake.write_text("#!/bin/sh\necho 8.25.5\n")
    fake.chmod(0o755)
    proc = run_mwlab("tools", "--check", env=venv_path_env(tmp_path))
    assert proc.returncode == 1
    pin = lock_pins()["snakemake"]
    assert f"snakemake 8.25.5 at {fake} (pinned {pin})" in proc.stderr


def test_lock_pins_normalise_names(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text("# comment\nPyYAML==6.0.3\ntyping_extensions==4.16.0\n\n")
    assert lock_pins(lock) == {"pyyaml": "6.0.3", "typing-extensions": "4.16.0"}
    assert lock_pins(tmp_path / "absent.lock") == {}


def test_drivers_call_tools_by_their_tools_py_names() -> None:
    """One name on both paths: the driver runs the executable tools.py checks for."""
    assert memaslap_binary() in {t.name for t in TOOLS}
