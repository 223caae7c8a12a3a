"""The pipeline's Snakemake scripts as modules, for tests that call their functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "workflows" / "scripts"


def load_script(name: str) -> ModuleType:
    """workflows/scripts/<name>.py, imported without running its Snakemake part."""
    spec = importlib.util.spec_from_file_location(f"pipeline_script_{name}", SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
