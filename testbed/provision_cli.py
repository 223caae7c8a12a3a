"""`mwlab provision`: create (or, with --dry-run, only plan) the study's Azure VMs."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from testbed.provision import (
    TOPOLOGIES,
    DryRunAz,
    ProvisionError,
    Settings,
    deprovision_plan,
    provision,
    real_az,
    write_inventory,
)


@click.command("provision")
@click.option(
    "--study",
    type=click.Choice(sorted(TOPOLOGIES)),
    required=True,
    help="Which study's topology to create.",
)
@click.option(
    "--inventory",
    "inventory_path",
    type=click.Path(path_type=Path),
    required=True,
    help="Where to write the inventory of the created VMs (YAML).",
)
@click.option("--resource-group", default="mwlab-study", show_default=True)
@click.option("--location", default="westeurope", show_default=True)
@click.option(
    "--ssh-public-key",
    type=click.Path(path_type=Path),
    default=Path("~/.ssh/id_ed25519.pub"),
    show_default=True,
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the az calls and write an inventory with placeholder addresses.",
)
@click.option("--delete", is_flag=True, help="Delete the resource group instead.")
def provision_command(
    study: str,
    inventory_path: Path,
    resource_group: str,
    location: str,
    ssh_public_key: Path,
    dry_run: bool,
    delete: bool,
) -> None:
    """Create the VMs of one study on Azure and write their inventory."""
    settings = Settings(
        study=study,
        resource_group=f"{resource_group}-{study}",
        location=location,
        ssh_public_key=ssh_public_key,
    )
    az = DryRunAz() if dry_run else real_az
    try:
        if delete:
            for call in deprovision_plan(settings):
                click.echo(f"az {shlex.join(call)}")
                az(call)
            return
        inventory = provision(settings, az, inventory_path.parent / f".provision-{study}")
    except ProvisionError as err:
        click.echo(f"provision: {err}", err=True)
        sys.exit(1)
    if isinstance(az, DryRunAz):
        for call in az.calls:
            click.echo(f"az {shlex.join(call)}")
    write_inventory(inventory, inventory_path, settings, dry_run=isinstance(az, DryRunAz))
    click.echo(f"provision: {len(inventory['machines'])} VMs -> {inventory_path}", err=True)
