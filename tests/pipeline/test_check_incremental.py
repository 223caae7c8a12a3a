"""scripts/check_incremental.py never modifies the checkout, however it is stopped.

It runs in a clone of this repository with the script as it is now. A stand-in `snakemake`
comes first on PATH: its first dry run reports a finished profile (no job), and it hangs in
the second one, which comes after the script's first edit. The script is stopped there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path("scripts/check_incremental.py")

pytestmark = pytest.mark.timeout(300)

FAKE_SNAKEMAKE = """#!/bin/sh
echo "$PWD" >> "$DRY_RUNS"
if [ "$(wc -l < "$DRY_RUNS")" -ge 2 ]; then exec sleep 600; fi
exit 0
"""


@dataclass
class Checkout:
    root: Path
    dry_runs: Path
    env: dict[str, str]

    def status(self) -> str:
        return subprocess.run(
            ["git", "status", "--porcelain"], cwd=self.root, capture_output=True, text=True,
            check=True,
        ).stdout  # fmt: skip

    def dry_run_dirs(self) -> list[str]:
        return self.dry_runs.read_text().splitlines() if self.dry_runs.exists() else []


@pytest.fixture
def checkout(tmp_path) -> Iterator[Checkout]:
    """A clone of this repository whose last commit holds the script as it is now."""
    root = tmp_path / "clone"
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost"]
    subprocess.run(["git", "clone", "-q", str(ROOT), str(root)], check=True, timeout=120)
    shutil.copy2(ROOT / SCRIPT, root / SCRIPT)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-am", "script"], cwd=root, check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "snakemake").write_text(FAKE_SNAKEMAKE)
    (bin_dir / "snakemake").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env["DRY_RUNS"] = str(tmp_path / "dry-runs")
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    out = Checkout(root, tmp_path / "dry-runs", env)
    assert out.status() == ""
    yield out


def start(checkout: Checkout) -> subprocess.Popen[str]:
    # Its own session: the test can stop the script and the stand-in together.
    return subprocess.Popen(
        [sys.executable, str(checkout.root / SCRIPT), "smoke"],
        cwd=checkout.root, env=checkout.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip


def wait_for_second_dry_run(checkout: Checkout, proc: subprocess.Popen[str]) -> None:
    """Until the script is in its second dry run, after its first edit (a hang guard only)."""
    deadline = time.monotonic() + 120
    while len(checkout.dry_run_dirs()) < 2:
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "the script never reached its second dry run"
        time.sleep(0.05)


def test_killing_the_check_mid_way_leaves_the_checkout_unmodified(checkout):
    proc = start(checkout)
    try:
        wait_for_second_dry_run(checkout, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert checkout.status() == ""
    # The dry runs ran elsewhere: in a copy.
    assert all(Path(d) != checkout.root for d in checkout.dry_run_dirs())


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stopped_check_removes_its_copy(checkout, name):
    proc = start(checkout)
    try:
        wait_for_second_dry_run(checkout, proc)
        # Only the script is signalled (SIGINT inherited as ignored or not, it stops).
        proc.send_signal(signal.Signals[name])
        proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + signal.Signals[name]
    assert checkout.status() == ""
    copy = Path(checkout.dry_run_dirs()[-1])
    assert copy != checkout.root and not copy.exists()
