"""One name per tool on both paths: the dev shell provides every tool testbed/tools.py names
(by the executables nixpkgs' packages install, per the allowlist), and Debian's setup script
installs the package each one comes from."""

from __future__ import annotations

from pathlib import Path

from testbed.tools import TOOLS, Tool

ROOT = Path(__file__).resolve().parents[2]


def shell_bins(outputs, system: str) -> set[str]:
    return {
        b for p in outputs["devShells"][system]["default"]["args"]["packages"] for b in p["bins"]
    }


def test_dev_shell_provides_every_tool_under_its_debian_name(outputs) -> None:
    for system in ("x86_64-linux", "aarch64-linux"):
        bins = shell_bins(outputs, system)
        assert {t.name for t in TOOLS} <= bins
        # nixpkgs' own names stay off PATH: code that called them would fail on Debian.
        assert not {"memaslap", "memcp", "memcat"} & bins


def test_debian_names_link_to_the_memaslap_build(outputs) -> None:
    farm = outputs["packages"]["x86_64-linux"]["debian-names"]
    mem = outputs["packages"]["x86_64-linux"]["memaslap"]
    links = {e["name"]: e["path"] for e in farm["args"]["entries"]}
    assert links == {
        "bin/memcaslap": f"{mem['storePath']}/bin/memaslap",
        "bin/memccp": f"{mem['storePath']}/bin/memcp",
        "bin/memccat": f"{mem['storePath']}/bin/memcat",
    }
    assert {"memaslap", "memcp", "memcat"} <= set(mem["bins"])


def test_a_dev_shell_without_the_debian_names_fails(nixcheck, mutated) -> None:
    flake = mutated("            (mkDebianNames pkgs)\n", "")
    proc = nixcheck("--flake", str(flake))
    assert proc.returncode == 1
    assert "does not provide memcaslap, memccp, memccat (testbed/tools.py)" in proc.stderr


def test_a_link_to_an_executable_the_package_does_not_install_fails(nixcheck, mutated) -> None:
    """Without --enable-memaslap nixpkgs' libmemcached installs no memaslap to link to."""
    flake = mutated('[ "--enable-memaslap" ]', "[ ]")
    proc = nixcheck("--flake", str(flake))
    assert proc.returncode == 1
    assert "bin/memcaslap ->" in proc.stderr
    assert "installs memcapable, memcat" in proc.stderr


def test_a_tool_added_to_tools_py_alone_fails(outputs, monkeypatch, nix_check_module) -> None:
    check = nix_check_module
    assert check.check(outputs) == []
    monkeypatch.setattr(check, "TOOLS", (*TOOLS, Tool("valkey-server", ("--version",), "x")))
    problems = check.check(outputs)
    assert len(problems) == 2  # one per system
    assert all("does not provide valkey-server" in p for p in problems)
