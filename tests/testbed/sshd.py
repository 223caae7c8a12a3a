"""Machines reached over ssh, for the tests: sshd runs inside emulated hosts (network
namespaces of 198.18.0.0/15), reached as root with a generated key."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

from testbed.emulation import Emulation
from testbed.services.ports import wait_for_port
from tests.capabilities import provided

from .conftest import have, no_leftovers


def path_without(where: Path, tool: str) -> Path:
    """A PATH directory (`where`) with every executable of /usr/bin and /usr/sbin but `tool`:
    a machine's ssh PATH that lacks it, until a link to it is added there."""
    where.mkdir()
    for d in (Path("/usr/sbin"), Path("/usr/bin")):
        for exe in d.iterdir():
            if exe.name != tool and not (where / exe.name).exists():
                (where / exe.name).symlink_to(exe)
    return where


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, timeout=30
    )


@contextlib.contextmanager
def ssh_machines(
    tmp_path: Path,
    prefix: str,
    roles: list[tuple[str, str]],
    trusted: bool = True,
    paths: dict[str, str] | None = None,
) -> Iterator[tuple[Path, Path]]:
    """Emulated hosts (name, role) each running sshd; yields (inventory, the root of their
    scratch directories). The namespaces share this machine's file system, so each machine
    gets a directory of its own, as separate machines would have. That root lies under /tmp,
    open to other users as a remote machine's /tmp is: PostgreSQL's user (`mwlab-pg`, as ssh
    logs in as root) keeps its cluster in a machine's scratch directory.

    `trusted`: the inventory skips host-key checks; else each machine has a host key of its
    own that nothing trusts beforehand, as new machines do. `paths`: a machine's PATH in its
    ssh sessions, by name (default: sshd's)."""
    provided(have("sshd") and have("ssh"), "the openssh server or client", "make setup")
    keys = tmp_path / "keys"
    keys.mkdir()
    _keygen(keys / "id")
    _keygen(keys / "host")
    (keys / "authorized_keys").write_text((keys / "id.pub").read_text())
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
    emu = Emulation(prefix, {"server": 100, "client": 200, "middleware": 800})
    remote = Path(tempfile.mkdtemp(prefix="mwlab-ssh-", dir="/tmp"))
    remote.chmod(0o755)
    try:
        machines = []
        for name, role in roles:
            host = emu.add_host(name, role, tmp_path / "sshd")
            host_key = keys / "host"
            if not trusted:
                host_key = keys / f"host-{name}"
                _keygen(host_key)
            env = ["-o", f"SetEnv=PATH={paths[name]}"] if paths and name in paths else []
            sshd = host.start(
                ["/usr/sbin/sshd", "-D", "-e", "-f", "/dev/null",
                 "-o", f"ListenAddress={host.address}", "-o", "Port=22",
                 "-o", f"HostKey={host_key}", *env,
                 "-o", f"AuthorizedKeysFile={keys}/authorized_keys",
                 "-o", "StrictModes=no", "-o", "PermitRootLogin=prohibit-password",
                 "-o", "PasswordAuthentication=no", "-o", "KbdInteractiveAuthentication=no",
                 "-o", "UsePAM=no", "-o", "PidFile=none",
                 "-o", "Subsystem=sftp internal-sftp"],
                name, "sshd",
            )  # fmt: skip
            wait_for_port(host.address, 22, 60.0, sshd)
            machines.append(
                {
                    "name": name,
                    "role": role,
                    "address": host.address,
                    "remote_dir": str(remote / name),
                }
            )
        inventory = tmp_path / "inventory.yaml"
        options = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
        options = options if trusted else []
        inventory.write_text(
            yaml.safe_dump(
                {
                    "user": "root",
                    "port": 22,
                    "identity": str(keys / "id"),
                    "ssh_options": [*options, "-o", "LogLevel=ERROR"],
                    "machines": machines,
                }
            )
        )
        yield inventory, remote
    finally:
        problems = emu.teardown()
        shutil.rmtree(remote, ignore_errors=True)
        assert problems == []
        no_leftovers(prefix)
