"""Runs nix/check.py (the offline evaluation of flake.nix behind `make check-nix`)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "nix" / "check.py"
FLAKE = ROOT / "flake.nix"
ALLOWLIST = ROOT / "nix" / "nixpkgs-allowlist.txt"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Whether this machine had a Nix store before the session's evaluation ran nix/check.py (this
# module is imported when the tests are collected, before any fixture runs).
NIX_AT_START = Path("/nix").exists()


def run_check(
    *args: str, env: dict[str, str] | None = None, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, str(CHECK), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )


def evaluate(flake: Path, tmp_path: Path, allowlist: Path = ALLOWLIST) -> dict[str, Any]:
    """The evaluated outputs of a flake that passes the check."""
    out = tmp_path / "outputs.json"
    proc = run_check("--flake", str(flake), "--allowlist", str(allowlist), "--json-out", str(out))
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def mutate(tmp_path: Path, old: str, new: str, source: Path = FLAKE) -> Path:
    """A copy of the flake with one edit; the edited text must be there."""
    text = source.read_text()
    assert old in text, f"{old!r} is no longer in {source.name}: update the test"
    path = tmp_path / "flake.nix"
    path.write_text(text.replace(old, new))
    return path


@pytest.fixture(scope="session")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The evaluated outputs of the project's flake.nix."""
    return evaluate(FLAKE, tmp_path_factory.mktemp("flake"))


@pytest.fixture
def nixcheck() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_check


@pytest.fixture
def evaluated(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    return lambda flake, allowlist=ALLOWLIST: evaluate(flake, tmp_path, allowlist)


@pytest.fixture
def mutated(tmp_path: Path) -> Callable[..., Path]:
    return lambda old, new, source=FLAKE: mutate(tmp_path, old, new, source)


@pytest.fixture
def extended_allowlist(tmp_path: Path) -> Callable[[str], Path]:
    """The allowlist with extra lines, as someone adding an attribute would write them."""

    def make(lines: str) -> Path:
        path = tmp_path / "allowlist.txt"
        path.write_text(ALLOWLIST.read_text() + lines)
        return path

    return make


@pytest.fixture(scope="session")
def nix_check_module() -> ModuleType:
    """nix/check.py as a module, to call its functions directly."""
    spec = importlib.util.spec_from_file_location("nix_check", CHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
