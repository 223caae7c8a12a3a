"""The dev shell's hook, run as `nix develop` runs it: from a subdirectory it still finds the
project root, JAVA_HOME is the JDK's home, and PyPI wheels find the C++ runtime and zlib."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

STORE = r"/nix/store/[0-9a-f]{32}-"


def run_hook(hook: str, tmp_path: Path) -> dict[str, str]:
    """Runs the hook in bash from paper/sections of a project tree; the variables it leaves."""
    root = tmp_path / "project"
    sub = root / "paper" / "sections"
    sub.mkdir(parents=True)
    (root / "flake.nix").write_text("{ }\n")
    names = ("PATH", "PYTHONPATH", "JAVA_HOME", "LD_LIBRARY_PATH")
    script = hook + "\n" + "".join(f'printf "%s\\0" "${{{n}:-}}"\n' for n in names)
    env = {**os.environ, "PYTHONPATH": "/preset/py", "LD_LIBRARY_PATH": "/preset/lib"}
    proc = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        cwd=sub,
        env=env,
        timeout=60,
        check=True,
    )
    return dict(zip(names, proc.stdout.split("\0"), strict=False)) | {"root": str(root)}


def shell(outputs) -> dict:
    return outputs["devShells"]["x86_64-linux"]["default"]


def jdk17(outputs) -> dict:
    return next(p for p in shell(outputs)["args"]["packages"] if p.get("attr") == "jdk17")


def test_hook_finds_the_root_from_a_subdirectory(outputs, tmp_path) -> None:
    env = run_hook(shell(outputs)["args"]["shellHook"], tmp_path)
    root = env["root"]
    assert env["PATH"].split(":")[0] == f"{root}/.venv/bin"
    assert env["PYTHONPATH"] == f"{root}:/preset/py"


def test_java_home_is_the_jdk_home(outputs, tmp_path) -> None:
    env = run_hook(shell(outputs)["args"]["shellHook"], tmp_path)
    home = jdk17(outputs)["home"]
    assert home.endswith("/lib/openjdk")
    assert env["JAVA_HOME"] == home


def test_java_home_of_the_bare_jdk_path_is_caught(outputs, mutated, evaluated, tmp_path) -> None:
    flake = mutated("export JAVA_HOME=${pkgs.jdk17.home}", "export JAVA_HOME=${pkgs.jdk17}")
    wrong = evaluated(flake)
    env = run_hook(shell(wrong)["args"]["shellHook"], tmp_path)
    assert env["JAVA_HOME"] != jdk17(wrong)["home"]


def test_wheels_find_the_cxx_runtime_and_zlib(outputs, tmp_path) -> None:
    env = run_hook(shell(outputs)["args"]["shellHook"], tmp_path)
    dirs = env["LD_LIBRARY_PATH"].split(":")
    assert re.fullmatch(STORE + r"stdenv\.cc\.cc-lib/lib", dirs[0]), dirs
    assert re.fullmatch(STORE + r"zlib/lib", dirs[1]), dirs
    assert dirs[2:] == ["/preset/lib"]
