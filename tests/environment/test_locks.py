"""The Python pins: one hashed closure for the runtime and one with the test extra, made by
`make lock` from pyproject.toml, agreeing with it and with each other."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from testbed.tools import LOCK_FILE, TEST_LOCK_FILE, lock_pins, normalise

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# What the project's own code may import (tests excepted): the runtime closure only.
CODE = ("mwlab", "testbed", "analysis", "common", "soak", "workflows", "scripts", "nix")


def pins(requirements: list[str]) -> dict[str, str]:
    return {normalise(r.split("==")[0]): r.split("==")[1] for r in requirements}


def entries(lock: Path) -> dict[str, str]:
    """Each pinned requirement of a lock with its continuation lines (markers, hashes)."""
    text = lock.read_text()
    found = {}
    for entry in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", entry)
        if m:
            found[normalise(m.group(1))] = re.sub(r"\s*#.*", "", entry).strip()
    return found


def test_every_pin_of_both_locks_carries_hashes() -> None:
    for lock in (LOCK_FILE, TEST_LOCK_FILE):
        found = entries(lock)
        assert len(found) > 50, lock.name
        assert [n for n, e in found.items() if "--hash=sha256:" not in e] == [], lock.name


def test_the_locks_hold_the_pyproject_pins() -> None:
    runtime, test = lock_pins(LOCK_FILE), lock_pins(TEST_LOCK_FILE)
    direct = pins(PYPROJECT["project"]["dependencies"])
    extra = pins(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert {n: runtime.get(n) for n in direct} == direct
    assert {n: test.get(n) for n in direct | extra} == direct | extra
    # Test-only packages stay out of the environment `make paper` and `make measure` build.
    assert not set(extra) & set(runtime)


def test_the_test_lock_shares_the_runtime_lock_artifacts() -> None:
    """Built on top of the runtime environment, the test extra changes none of its packages."""
    runtime, test = entries(LOCK_FILE), entries(TEST_LOCK_FILE)
    assert {n: test.get(n) for n in runtime} == runtime


def test_the_build_backend_is_the_locked_setuptools() -> None:
    """The project is installed without build isolation, by the lock's setuptools."""
    (backend,) = PYPROJECT["build-system"]["requires"]
    assert pins([backend]) == {"setuptools": lock_pins(LOCK_FILE)["setuptools"]}


def test_project_code_imports_no_test_only_package() -> None:
    extra = {
        normalise(r.split("==")[0]) for r in PYPROJECT["project"]["optional-dependencies"]["test"]
    }
    offenders = []
    for package in CODE:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                offenders += [
                    f"{path.relative_to(ROOT)}: {n}"
                    for n in names
                    if normalise(n.split(".")[0]) in extra
                ]
    assert offenders == []
