"""The layers run one way: common imports no other package of the project, the testbed and
the analysis import common but not each other, the soaks (soak) import the testbed and common
but never the analysis, and only the front end (mwlab) imports all."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("common", "testbed", "analysis", "soak", "mwlab")
# What each package may import of the others.
ALLOWED = {
    "common": set(),
    "testbed": {"common"},
    "analysis": {"common"},
    "soak": {"common", "testbed"},
    "mwlab": {"common", "testbed", "analysis", "soak"},
}


def imported(path: Path) -> set[str]:
    """The project packages a module imports anywhere in it (functions included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out & set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported(path) - ALLOWED[package] - {package})
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from analysis.stability import check_run_dir\n")
    assert imported(module) == {"analysis"}
