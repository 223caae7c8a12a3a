"""Inventory of ssh machines: which machine plays which role, and how to reach it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from testbed.hosts import SshHost


class Machine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    role: Literal["server", "middleware", "client"]
    # The address other machines use to reach this one (e.g. a private IP).
    address: str
    # How this machine reaches it over ssh; defaults to user@address.
    ssh: str | None = None
    # Scratch directory on the machine; defaults to the inventory's `remote_dir`. Machines
    # that share a file system need their own: a host's cleanup kills what runs under it.
    remote_dir: str | None = None


class Inventory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = "root"
    port: int = 22
    identity: Path | None = None
    ssh_options: list[str] = Field(default_factory=list)
    remote_dir: str = "/tmp/mwlab"
    # The machines' pinned host keys (mwlab preflight writes them): checked strictly, unless
    # `accept_new` (preflight's first contact) adds the keys of machines not yet in the file.
    known_hosts: Path | None = None
    accept_new: bool = False
    machines: list[Machine]

    def of_role(self, role: str) -> list[Machine]:
        return [m for m in self.machines if m.role == role]

    def ssh_host(self, machine: Machine, run_id: str) -> SshHost:
        options = ["-p", str(self.port), "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
        if self.identity is not None:
            options += ["-i", str(self.identity)]
        if self.known_hosts is not None:
            # Before the inventory's own options: ssh keeps the first value of an option.
            strict = "accept-new" if self.accept_new else "yes"
            options += ["-o", f"UserKnownHostsFile={self.known_hosts}"]
            options += ["-o", f"StrictHostKeyChecking={strict}"]
        options += self.ssh_options
        return SshHost(
            name=machine.name,
            role=machine.role,
            address=machine.address,
            target=machine.ssh or f"{self.user}@{machine.address}",
            ssh_options=options,
            remote_base=f"{machine.remote_dir or self.remote_dir}/{run_id}",
        )


def load_inventory(path: Path) -> Inventory:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"cannot read inventory {path}: {e}") from e
    inv = Inventory.model_validate(data)
    if inv.identity is not None and not inv.identity.is_absolute():
        inv.identity = (path.parent / inv.identity).resolve()
    if inv.known_hosts is not None and not inv.known_hosts.is_absolute():
        inv.known_hosts = (path.parent / inv.known_hosts).resolve()
    return inv
