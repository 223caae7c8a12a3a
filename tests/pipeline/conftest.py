"""Fixtures of the pipeline tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

Mwlab = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def mwlab() -> Mwlab:
    """Runs `mwlab ARGS` in the checkout as a user would, with this interpreter's venv first
    on PATH; returns the finished process (output captured, never raising)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
        return subprocess.run(
            [sys.executable, "-m", "mwlab", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )

    return run
