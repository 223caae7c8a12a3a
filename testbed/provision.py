"""Provisioning of the study's Azure VMs with the `az` CLI, and the inventory it produces.

The plan is data (a list of `az` invocations), so a dry run prints it and produces an
inventory with placeholder addresses from 198.18.0.0/15, without touching Azure.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

# Machine counts per study: the 2018 study used three client, two middleware and three
# server VMs; the 2016 study up to five clients, one middleware and seven servers; the 2015
# study (seed 003, SimpleMQ) up to three client machines, two middlewares and one database.
TOPOLOGIES: dict[str, dict[str, int]] = {
    "2018": {"client": 3, "middleware": 2, "server": 3},
    "2016": {"client": 5, "middleware": 1, "server": 7},
    "2015": {"client": 3, "middleware": 2, "server": 1},
}

# The memcached studies' original Basic A1/A2/A4 sizes are retired; these have the same
# cores per role.
_MEMCACHED_SIZES: dict[str, str] = {
    "client": "Standard_A2_v2",
    "middleware": "Standard_A8_v2",
    "server": "Standard_A1_v2",
}
# Seed 003 ran every role on an AWS EC2 M4 with "two virtualized CPU cores, 8GB of main
# memory" and an SSD (its §2.1: an m4.large; workflows/machines.yaml, aws_m4):
# Standard_D2s_v3 is Azure's general-purpose size of 2 vCPU and 8 GiB, on premium SSD disks.
_SIMPLEMQ_SIZE = "Standard_D2s_v3"
DEFAULT_SIZES: dict[str, dict[str, str]] = {
    "2018": _MEMCACHED_SIZES,
    "2016": _MEMCACHED_SIZES,
    "2015": {role: _SIMPLEMQ_SIZE for role in TOPOLOGIES["2015"]},
}

# What each study's VMs install. The packages' own services would run beside the study's
# (which the testbed starts per run, on other ports): disabled. The 2015 study's database is
# Ubuntu 22.04's PostgreSQL, version 14; what the runs use of it (pg_stat_wal,
# track_wal_io_timing) arrived in 14, SKIP LOCKED in 9.5, and a run checks the version.
_MEMCACHED_CLOUD_INIT = """#cloud-config
package_update: true
packages: [openjdk-17-jre-headless, memcached, libmemcached-tools, iperf3, rsync]
runcmd:
  - [systemctl, disable, --now, memcached]
"""
CLOUD_INIT: dict[str, str] = {
    "2018": _MEMCACHED_CLOUD_INIT,
    "2016": _MEMCACHED_CLOUD_INIT,
    "2015": """#cloud-config
package_update: true
packages: [openjdk-17-jre-headless, postgresql, iperf3]
runcmd:
  - [systemctl, disable, --now, postgresql]
""",
}


class ProvisionError(RuntimeError):
    """An `az` call failed; the message names the call and what Azure said."""


@dataclass(frozen=True)
class VmSpec:
    name: str
    role: str
    size: str


@dataclass(frozen=True)
class Settings:
    study: str
    resource_group: str = "mwlab-study"
    location: str = "westeurope"
    admin_user: str = "mwlab"
    ssh_public_key: Path = Path("~/.ssh/id_ed25519.pub")
    image: str = "Ubuntu2204"
    # VM size per role; None: the study's (DEFAULT_SIZES).
    sizes: dict[str, str] | None = None

    def _known(self) -> None:
        if self.study not in TOPOLOGIES:
            raise ProvisionError(
                f"unknown study {self.study!r}; known: {', '.join(sorted(TOPOLOGIES))}"
            )

    def vms(self) -> list[VmSpec]:
        self._known()
        sizes = self.sizes or DEFAULT_SIZES[self.study]
        return [
            VmSpec(f"mw{self.study}-{role}{i + 1}", role, sizes[role])
            for role, count in TOPOLOGIES[self.study].items()
            for i in range(count)
        ]

    @property
    def cloud_init(self) -> str:
        """The cloud-init file of the study's VMs: the packages they install."""
        self._known()
        return CLOUD_INIT[self.study]


class AzureCli(Protocol):
    def __call__(self, args: Sequence[str]) -> dict[str, Any]: ...


def real_az(args: Sequence[str]) -> dict[str, Any]:
    """Runs one `az` command and returns its JSON output."""
    if shutil.which("az") is None:
        raise ProvisionError("the Azure CLI `az` is not installed; use --dry-run to see the plan")
    proc = subprocess.run(
        ["az", *args, "--output", "json"], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ProvisionError(f"az {shlex.join(args)} failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


@dataclass
class DryRunAz:
    """Records the plan and answers like `az vm create` with placeholder addresses."""

    calls: list[list[str]] = field(default_factory=list)

    def __call__(self, args: Sequence[str]) -> dict[str, Any]:
        self.calls.append(list(args))
        if list(args[:2]) == ["vm", "create"]:
            n = sum(1 for c in self.calls if c[:2] == ["vm", "create"])
            return {"privateIpAddress": f"198.18.1.{n}", "publicIpAddress": f"198.19.1.{n}"}
        return {}


def plan(settings: Settings) -> list[list[str]]:
    """Every `az` call, in order, that creates the study's VMs."""
    group = ["--resource-group", settings.resource_group]
    vnet = f"{settings.resource_group}-vnet"
    calls = [
        ["group", "create", "--name", settings.resource_group, "--location", settings.location],
        [
            "network",
            "vnet",
            "create",
            *group,
            "--name",
            vnet,
            "--address-prefix",
            "10.0.0.0/16",
            "--subnet-name",
            "study",
            "--subnet-prefix",
            "10.0.0.0/24",
        ],
    ]
    for vm in settings.vms():
        calls.append(
            ["vm", "create", *group, "--name", vm.name, "--image", settings.image,
             "--size", vm.size, "--admin-username", settings.admin_user,
             "--ssh-key-values", str(settings.ssh_public_key.expanduser()),
             "--vnet-name", vnet, "--subnet", "study", "--public-ip-sku", "Standard",
             "--custom-data", "cloud-init.yaml", "--tags", f"role={vm.role}",
             f"study={settings.study}"]
        )  # fmt: skip
    return calls


def provision(settings: Settings, az: AzureCli, workdir: Path) -> dict[str, Any]:
    """Creates the VMs and returns the inventory of what was created."""
    vms = {vm.name: vm for vm in settings.vms()}
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "cloud-init.yaml").write_text(settings.cloud_init)
    hosts: list[dict[str, Any]] = []
    for call in plan(settings):
        call = [str(workdir / a) if a == "cloud-init.yaml" else a for a in call]
        answer = az(call)
        if call[:2] == ["vm", "create"]:
            vm = vms[call[call.index("--name") + 1]]
            try:
                private, public = answer["privateIpAddress"], answer["publicIpAddress"]
            except KeyError as err:
                raise ProvisionError(f"az vm create {vm.name}: no {err} in its answer") from err
            hosts.append(
                {"name": vm.name, "role": vm.role, "address": private,
                 "ssh": f"{settings.admin_user}@{public}"}
            )  # fmt: skip
    # The layout of testbed.inventory.Inventory, which the ssh hosts read.
    return {
        "user": settings.admin_user,
        "identity": str(settings.ssh_public_key.expanduser().with_suffix("")),
        "remote_dir": "/tmp/mwlab",
        "machines": hosts,
    }


def deprovision_plan(settings: Settings) -> list[list[str]]:
    return [["group", "delete", "--name", settings.resource_group, "--yes", "--no-wait"]]


def write_inventory(
    inventory: dict[str, Any], path: Path, settings: Settings, dry_run: bool
) -> None:
    header = (
        f"# Inventory of study {settings.study}, resource group {settings.resource_group}"
        + (" (dry run: placeholder addresses)" if dry_run else "")
        + "\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + yaml.safe_dump(inventory, sort_keys=False))
