"""One source of Python versions: the dev shell brings the interpreter only, .venv (from
requirements.lock) brings the packages on both paths, and the Makefile hands Snakemake's script
jobs that environment with the caller's PYTHONPATH kept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_dev_shell_has_the_interpreter_and_no_python_packages(outputs) -> None:
    for system in ("x86_64-linux", "aarch64-linux"):
        packages = outputs["devShells"][system]["default"]["args"]["packages"]
        bins = {b for p in packages for b in p["bins"]}
        assert "python3" in bins
        assert not bins & {"snakemake", "ruff", "pytest"}
        assert not [p for p in packages if p["kind"] == "withPackages" and "python" in p["name"]]


def test_nixpkgs_snakemake_in_the_dev_shell_is_rejected(
    nixcheck, mutated, extended_allowlist
) -> None:
    allowlist = extended_allowlist(
        "snakemake pkgs/by-name/sn/snakemake/package.nix bin=snakemake\n"
        "ruff pkgs/by-name/ru/ruff/package.nix bin=ruff\n"
    )
    flake = mutated(
        "            python311\n",
        "            python311\n            snakemake\n            ruff\n",
    )
    proc = nixcheck("--flake", str(flake), "--allowlist", str(allowlist))
    assert proc.returncode == 1
    assert "provides ruff, snakemake, which would shadow .venv's" in proc.stderr


def test_a_python_env_from_nixpkgs_is_rejected(nixcheck, mutated, extended_allowlist) -> None:
    allowlist = extended_allowlist(
        "python311.withPackages pkgs/development/interpreters/python/with-packages.nix"
        " fn=withPackages ps=python311Packages\n"
        "python311Packages.pandas pkgs/development/python-modules/pandas/default.nix\n"
    )
    flake = mutated(
        "            python311\n", "            (python311.withPackages (ps: [ ps.pandas ]))\n"
    )
    proc = nixcheck("--flake", str(flake), "--allowlist", str(allowlist))
    assert proc.returncode == 1
    assert "Python packages come from .venv" in proc.stderr


def test_snakemake_script_jobs_keep_the_callers_pythonpath(tmp_path) -> None:
    """Through the Makefile's environment, a Snakemake `script:` job runs .venv's interpreter,
    imports the project and pandas, and still sees a PYTHONPATH set before make."""
    preset = tmp_path / "preset"
    preset.mkdir()
    (preset / "preset_marker.py").write_text("MARK = 'preset'\n")
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "Snakefile").write_text('rule all:\n    output: "seen.json"\n    script: "probe.py"\n')
    (probe / "probe.py").write_text(
        "import json, os, sys\n"
        "import pandas\n"
        "import preset_marker\n"
        "import testbed.tools\n"
        "json.dump({'executable': sys.executable, 'prefix': sys.prefix,\n"
        "           'pythonpath': os.environ.get('PYTHONPATH', ''),\n"
        "           'pandas': pandas.__version__, 'mark': preset_marker.MARK,\n"
        "           'testbed': testbed.tools.__file__}, open(snakemake.output[0], 'w'))\n"
    )
    make = shutil.which("make")
    assert make is not None
    env = {**os.environ, "PYTHONPATH": str(preset)}
    proc = subprocess.run(
        [
            make,
            "--no-print-directory",
            "-f",
            "Makefile",
            "-f",
            str(FIXTURES / "probe.mk"),
            "probe-snakemake",
            f"PROBE_DIR={probe}",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads((probe / "seen.json").read_text())
    assert seen["pythonpath"].split(":") == [str(ROOT), str(preset)]
    assert seen["mark"] == "preset"
    assert Path(seen["prefix"]) == ROOT / ".venv"
    assert Path(seen["testbed"]).resolve() == ROOT / "testbed" / "tools.py"
