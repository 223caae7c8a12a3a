"""`make check-nix`: flake.nix evaluates, offline, against the nixpkgs attributes of the allowlist,
for every system and down to the arguments of every derivation; anything else is rejected."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.capabilities import need

from .conftest import NIX_AT_START

ROOT = Path(__file__).resolve().parents[2]
ALLOWLIST = ROOT / "nix" / "nixpkgs-allowlist.txt"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SYSTEMS = ("x86_64-linux", "aarch64-linux")


def test_flake_evaluates_for_both_systems(outputs) -> None:
    for system in SYSTEMS:
        assert {"middleware", "twemproxy", "memaslap", "default"} <= outputs["packages"][
            system
        ].keys()
        shell = outputs["devShells"][system]["default"]
        assert shell["kind"] == "mkShell"
        # Store paths are per system, as they are in nixpkgs.
    x86, arm = (outputs["packages"][s]["twemproxy"]["storePath"] for s in SYSTEMS)
    assert x86 != arm


def test_twemproxy_is_built_from_the_0_5_0_release(outputs) -> None:
    tw = outputs["packages"]["x86_64-linux"]["twemproxy"]
    assert tw["kind"] == "mkDerivation"
    assert tw["bins"] == ["nutcracker"]
    src = tw["args"]["src"]
    assert src["kind"] == "fetchFromGitHub"
    assert (src["args"]["owner"], src["args"]["repo"]) == ("twitter", "twemproxy")
    assert src["args"]["rev"] == "894d78378c0720642184e5bbfcb718bb179dd7ce"
    assert src["args"]["hash"] == "sha256-XdIBbNNfm6fthgPts3F79uxWMWQqUBABo+GM5F5Gc3A="
    hooks = [d.get("attr") for d in tw["args"]["nativeBuildInputs"]]
    assert "autoreconfHook" in hooks
    # nutcracker links the bundled libyaml.a, which stdenv's --disable-static would not build.
    assert tw["args"]["dontDisableStatic"] is True


def test_derivation_arguments_are_evaluated(outputs) -> None:
    """References inside derivations are forced: the overridden libmemcached's own inputs."""
    mem = outputs["packages"]["aarch64-linux"]["memaslap"]
    assert mem["attr"] == "libmemcached"
    assert "--enable-memaslap" in mem["args"]["configureFlags"]
    assert [d["attr"] for d in mem["args"]["buildInputs"]] == ["libevent"]
    mw = outputs["packages"]["x86_64-linux"]["middleware"]
    assert mw["kind"] == "buildMavenPackage"
    assert mw["args"]["mvnJdk"]["attr"] == "jdk17"
    assert "/bin/java" in mw["args"]["installPhase"]


def test_broken_fixture_flake_is_rejected(nixcheck) -> None:
    proc = nixcheck("--flake", str(FIXTURES / "broken-flake.nix"))
    assert proc.returncode == 1, proc.stdout
    assert "undefined variable 'twemproxy'" in proc.stderr
    assert "broken-flake.nix" in proc.stderr


def test_the_project_flake_needs_every_allowlisted_attribute_it_uses(nixcheck, tmp_path) -> None:
    """Without its allowlist line, an attribute the flake uses makes evaluation fail."""
    lines = ALLOWLIST.read_text().splitlines(keepends=True)
    smaller = tmp_path / "allowlist.txt"
    smaller.write_text("".join(ln for ln in lines if not ln.startswith("memtier-benchmark ")))
    proc = nixcheck("--allowlist", str(smaller))
    assert proc.returncode == 1
    assert "memtier-benchmark" in proc.stderr


def test_unknown_allowlist_option_is_a_clear_error(nixcheck, extended_allowlist) -> None:
    proc = nixcheck("--allowlist", str(extended_allowlist("hello pkgs/x.nix binaries=hello\n")))
    assert proc.returncode == 1
    assert "'binaries=hello' is not one of" in proc.stderr
    assert "line" in proc.stderr


def test_evaluation_writes_no_store(outputs) -> None:
    """Offline and store-free: /nix is not created by the evaluation (nix-bin would make it)."""
    assert outputs["allowlistSize"] > 0
    if not NIX_AT_START:
        # The session's evaluation (the outputs fixture) has run: a /nix now is its doing.
        assert not Path("/nix").exists(), "nix/check.py created /nix"
        proc = subprocess.run(
            [sys.executable, str(ROOT / "nix" / "check.py")],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert not Path("/nix").exists(), "nix/check.py created /nix"
        return
    # A machine with a Nix store: hide it behind an empty tmpfs in a private mount namespace,
    # evaluate there, and see that nothing was written into it.
    need(
        os.geteuid() == 0 and shutil.which("unshare") is not None,
        "an existing /nix can be hidden only in a private mount namespace, as root",
    )
    check = ROOT / "nix" / "check.py"
    script = f"mount -t tmpfs none /nix && {sys.executable} {check} >/dev/null && ls -A /nix"
    proc = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"nix/check.py wrote into /nix: {proc.stdout[-500:]}"


def test_check_nix_fails_clearly_without_nix_instantiate(tmp_path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = {**os.environ, "PATH": str(bin_dir)}
    make = shutil.which("make")
    assert make is not None
    proc = subprocess.run(
        [make, "--no-print-directory", "check-nix"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode != 0
    assert "nix-instantiate not found" in proc.stderr
    assert "nix-bin" in proc.stderr
