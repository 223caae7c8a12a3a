"""Shared helpers for the analysis tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis.report import figures as fg

DATA = Path(__file__).parent / "data"
MARK = "@@JSON@@"


def run_octave(body: str) -> object:
    """Runs one Octave script with the queueing package; the script prints `MARK` + JSON."""
    if shutil.which("octave") is None:
        pytest.fail("GNU Octave is required (Debian packages octave octave-queueing)")
    script = f"pkg load queueing;\nwarning('off', 'all');\n{body}\n"
    proc = subprocess.run(
        ["octave", "--no-gui", "--quiet", "--no-window-system", "--eval", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    assert lines, f"octave failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(lines[-1][len(MARK) :])


def rel_diff(a: float, b: float) -> float:
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, fg.plt.Figure]]:
    """Every figure `fg.save` is given, by its path (not written, closed after the test)."""
    figures: dict[str, fg.plt.Figure] = {}
    monkeypatch.setattr(fg, "save", lambda fig, path: figures.__setitem__(str(path), fig))
    yield figures
    for fig in figures.values():
        fg.plt.close(fig)
