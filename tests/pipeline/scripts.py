"""The project's scripts as modules, for tests that call their functions: the pipeline's
Snakemake scripts and the scripts of scripts/."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "workflows" / "scripts"


def load_file(path: Path, name: str) -> ModuleType:
    """The Python file `path` imported as the module `name` without running its main part,
    registered under that name (its dataclasses look their module up by it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_script(name: str) -> ModuleType:
    """workflows/scripts/<name>.py, imported without running its Snakemake part."""
    return load_file(SCRIPTS / f"{name}.py", f"pipeline_script_{name}")
