"""Each command installs the Debian packages it needs and no others, from one list that the
tools, the setup script and the README's requirements table all follow."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from testbed.tools import COMMANDS, DEBIAN_PACKAGES, TOOLS, debian_packages, needed_by

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup-debian.sh"


def fake_debian(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """PATH where dpkg knows no package and apt-get records what it is asked to install."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    asked = tmp_path / "apt-get.args"
    (bin_dir / "dpkg-query").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {asked}\n')
    (bin_dir / "useradd").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "id").write_text("#!/bin/sh\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}, asked


@pytest.mark.skipif(os.geteuid() != 0, reason="the script installs as root (else with sudo)")
@pytest.mark.parametrize("command", COMMANDS)
def test_setup_installs_exactly_the_packages_of_its_command(tmp_path, command) -> None:
    env, asked = fake_debian(tmp_path)
    proc = subprocess.run(
        [str(SETUP), command], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    install = [ln for ln in asked.read_text().splitlines() if " install " in f" {ln} "]
    assert len(install) == 1
    wanted = {p for p, cmds in debian_packages().items() if command in cmds}
    assert set(install[0].split()) - {"install", "-y", "-q", "--no-install-recommends"} == wanted
    assert f"for make {command}" in proc.stdout


def test_paper_needs_no_system_of_the_study() -> None:
    paper = {p for p, cmds in debian_packages().items() if "paper" in cmds}
    assert "texlive-latex-base" in paper and "python3-venv" in paper
    assert not paper & {"openjdk-17-jdk-headless", "postgresql-15", "octave", "nix-bin"}
    assert all(cmds <= {"paper", "measure", "test"} for cmds in debian_packages().values())
    # `make test` runs everything: every package is one of its.
    assert all("test" in cmds for cmds in debian_packages().values())


def test_an_unknown_command_is_refused() -> None:
    proc = subprocess.run([str(SETUP), "report"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown command 'report' (paper, measure or test)" in proc.stderr


def test_every_tool_names_a_listed_package() -> None:
    packages = debian_packages()
    for tool in TOOLS:
        if tool.debian is None:
            # No Debian package: only the Nix shell has it, so nothing may require it.
            assert not tool.required, tool.name
        else:
            assert tool.debian in packages, f"{tool.name}: {tool.debian} not in {DEBIAN_PACKAGES}"
    assert needed_by(next(t for t in TOOLS if t.name == "pdflatex"), "paper")
    assert not needed_by(next(t for t in TOOLS if t.name == "memcached"), "paper")


def test_the_readme_table_says_which_command_needs_which_package() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| What | Debian 12 package(s) |") :].split("\n\n")[0]
    packages = debian_packages()
    seen: set[str] = set()
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        named = [p for p in re.findall(r"`([^`]+)`", cells[1]) if p in packages]
        seen |= set(named)
        if named:
            commands = set().union(*(packages[p] for p in named))
            assert {c.strip() for c in cells[3].split(",")} == commands, row
    assert seen == set(packages)
