"""The `mwlab tools` subcommand reports what is installed and fails when a tool is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from testbed.drivers import memaslap_binary
from testbed.tools import TEST_LOCK_FILE, TOOLS, lock_pins

ROOT = Path(__file__).resolve().parents[2]


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
    pins = lock_pins(TEST_LOCK_FILE)
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


def test_paper_checks_only_what_the_report_needs(tmp_path: Path) -> None:
    """A machine that only rebuilds the report lacks the systems; `--for paper` asks for TeX."""
    (tmp_path / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = run_mwlab("tools", "--check", "--for", "paper", env=env)
    assert proc.returncode == 1
    assert "missing required tools of make paper: latexmk, pdflatex" in proc.stderr
    assert "memcached" not in proc.stderr
    # ruff is the test extra's: the report's environment does not hold it.
    assert "ruff" not in proc.stderr


def recorded(tmp_path: Path, **changes: str | None) -> Path:
    """A dataset folder whose environment is this machine's, with some versions changed."""
    versions = json.loads(run_mwlab("tools", "--json", env=venv_path_env()).stdout)
    (tmp_path / "environment").mkdir(parents=True)
    (tmp_path / "environment" / "tools.json").write_text(json.dumps(versions | changes))
    return tmp_path


def test_against_a_dataset_measured_with_the_same_tools(tmp_path: Path) -> None:
    proc = run_mwlab("tools", "--against", str(recorded(tmp_path)), env=venv_path_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"tools: the same versions as {tmp_path}"


def test_against_names_every_difference_and_fails_on_a_measured_tool(tmp_path: Path) -> None:
    here = json.loads(run_mwlab("tools", "--json", env=venv_path_env()).stdout)
    dataset = recorded(tmp_path, snakemake="9.13.7", seaborn="0.13.2")
    proc = run_mwlab("tools", "--check", "--against", str(dataset), env=venv_path_env())
    # Only tools the runs do not depend on differ: named, and the check passes.
    assert proc.returncode == 0, proc.stderr
    assert f"snakemake (not measured): {here['snakemake']} here, 9.13.7 in {dataset}" in proc.stdout
    assert f"seaborn (not measured): not installed here, 0.13.2 in {dataset}" in proc.stdout

    other = recorded(tmp_path / "b", memcached="memcached 1.6.21", snakemake="9.13.7")
    proc = run_mwlab("tools", "--against", str(other), env=venv_path_env())
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    # Measured tools first.
    assert (
        lines[0] == f"memcached (measured): {here['memcached']} here, memcached 1.6.21 in {other}"
    )
    assert any(line.startswith("snakemake (not measured)") for line in lines[1:])
    assert "1 measured tool(s) differ" in proc.stderr


def test_against_a_folder_without_a_record_is_refused(tmp_path: Path) -> None:
    proc = run_mwlab("tools", "--against", str(tmp_path))
    assert proc.returncode == 1
    assert f"{tmp_path}: no environment/tools.json" in proc.stderr
