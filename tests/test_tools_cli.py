"""The `mwlab tools` subcommand reports what is installed and fails when a tool is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
