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


def test_a_dev_shell_on_another_python_than_the_locks_fails(
    nixcheck, mutated, extended_allowlist
) -> None:
    """The venv `make setup` builds on the shell's interpreter must hold the locks' artifacts."""
    allowlist = extended_allowlist(
        "python312 pkgs/development/interpreters/python/default.nix bin=python3,python3.12\n"
    )
    flake = mutated("            python311\n", "            python312\n")
    proc = nixcheck("--flake", str(flake), "--allowlist", str(allowlist))
    assert proc.returncode == 1
    assert (
        "devShells.x86_64-linux.default has python3.12, but the locks are for Python 3.11"
        in proc.stderr
    )


def test_a_lock_without_hashes_or_its_python_is_reported(tmp_path, nix_check_module) -> None:
    check = nix_check_module
    lock = tmp_path / "requirements.lock"
    lock.write_text(
        "#    uv pip compile --python-version 3.11 pyproject.toml\n"
        "numpy==2.3.5 \\\n    --hash=sha256:00\n    # via pandas\npandas==2.3.3\n"
    )
    assert check.lock_problems(lock) == (
        "3.11",
        ["requirements.lock pins pandas without a hash: `make lock`"],
    )
    lock.write_text("numpy==2.3.5 \\\n    --hash=sha256:00\n")
    assert check.lock_problems(lock) == (
        None,
        ["requirements.lock does not say which Python it was locked for"],
    )
    assert check.lock_problems(tmp_path / "absent.lock")[1] == [
        "absent.lock is missing: `make lock` writes it"
    ]
