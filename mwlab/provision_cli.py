"""`mwlab provision`: plan, create (or, with --dry-run, only plan) and delete the study's
Azure VMs."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from common.paths import CATALOGUE, REPO
from mwlab.catalogue import expand, load_catalogue, load_profile
from testbed.provision import (
    CONFIRM_ENV,
    HOW_TO_CONFIRM,
    TOPOLOGIES,
    DryRunAz,
    Plan,
    ProvisionError,
    Settings,
    confirmed,
    delete_call,
    profile_config,
    provision,
    read_usages,
    real_az,
    run_seconds,
    write_inventory,
)


def profile_runs(config: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Study -> the specs of the profile's runs on ssh machines (what provisioned VMs run)."""
    catalogue = load_catalogue(REPO / config.get("catalogue", CATALOGUE))
    out: dict[str, list[dict[str, Any]]] = {}
    for run in expand(catalogue, load_profile(config, source=f"profile {config.get('profile')}")):
        if run.spec.get("hosts") == "ssh":
            out.setdefault(str(catalogue[run.family].study), []).append(run.spec)
    return out


def _say(message: str) -> None:
    click.echo(message, err=True)


def _pairs(items: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise click.BadParameter(f"{item!r}: KEY=VALUE", param_hint=option)
        out[key] = value
    return out


def _machines(items: tuple[str, ...]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for study_role, count in _pairs(items, "--machines").items():
        study, sep, role = study_role.partition(":")
        if not sep or not count.isdigit():
            raise click.BadParameter(f"{study_role}={count}: STUDY:ROLE=N", param_hint="--machines")
        out.setdefault(study, {})[role] = int(count)
    return out


@click.command("provision")
@click.option(
    "--study",
    "studies",
    multiple=True,
    type=click.Choice(sorted(TOPOLOGIES)),
    help="The study whose VMs to create (one), or, with --plan, to plan (repeatable; default:"
    " the profile's ssh studies, else every study).",
)
@click.option(
    "--profile",
    help="A profile (a name under workflows/profiles, or its folder): its `provision:` settings"
    " and, for the cost estimate, its runs. Options given here win.",
)
@click.option(
    "--inventory",
    "inventory_path",
    type=click.Path(path_type=Path),
    help="Where to write the inventory of the created VMs (YAML).",
)
@click.option(
    "--resource-group",
    help="The measurement's name [mwlab-study]: each study's group is NAME-<study>. With"
    " --delete: the group's full name (as the plan and the tags show it).",
)
@click.option("--location", help="Azure region [westeurope].")
@click.option(
    "--ssh-public-key",
    type=click.Path(path_type=Path),
    help="The key the VMs authorize [~/.ssh/id_ed25519.pub]; ssh uses the private key beside it.",
)
@click.option("--admin-user", help="The VMs' admin user, whom ssh logs in as [mwlab].")
@click.option(
    "--machines",
    multiple=True,
    metavar="STUDY:ROLE=N",
    help="Machines of a role instead of the study's (repeatable), e.g. 2018:server=2.",
)
@click.option("--remote-dir", help="Scratch directory on the VMs [/tmp/mwlab].")
@click.option(
    "--hours",
    multiple=True,
    metavar="STUDY=HOURS",
    help="Planned measurement hours of a study, for the estimate (default: from --profile).",
)
@click.option("--runs", multiple=True, metavar="STUDY=N", help="Its planned runs (shown).")
@click.option("--ready-timeout", type=float, help="Seconds each VM's cloud-init may take [1800].")
@click.option("--ready-poll", type=float, help="Seconds between cloud-init checks [15].")
@click.option(
    "--plan",
    "plan_only",
    is_flag=True,
    help="Only show the plan (VMs, quota, cost) and check that it is confirmed.",
)
@click.option(
    "--plan-out", type=click.Path(path_type=Path), help="With --plan: write the confirmed plan."
)
@click.option(
    "--confirm",
    is_flag=True,
    help=f"Confirm the plan: create the VMs (also {CONFIRM_ENV}=1, or the profile's"
    " `provision: {confirm: true}`).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the az calls and write an inventory with placeholder addresses.",
)
@click.option(
    "--delete",
    is_flag=True,
    help="Delete the resource group --resource-group (nothing else needed).",
)
@click.option(
    "--record-dir",
    type=click.Path(path_type=Path),
    help="Where to record the created group for teardown [<inventory's folder>/provisioned].",
)
def provision_command(
    studies: tuple[str, ...],
    profile: str | None,
    inventory_path: Path | None,
    resource_group: str | None,
    location: str | None,
    ssh_public_key: Path | None,
    admin_user: str | None,
    machines: tuple[str, ...],
    remote_dir: str | None,
    hours: tuple[str, ...],
    runs: tuple[str, ...],
    ready_timeout: float | None,
    ready_poll: float | None,
    plan_only: bool,
    plan_out: Path | None,
    confirm: bool,
    dry_run: bool,
    delete: bool,
    record_dir: Path | None,
) -> None:
    """Create the VMs of one study on Azure (one resource group, tagged with the study and the
    measurement, each VM with its role), wait until each one's cloud-init has finished, and
    write their inventory.

    Before anything is created it prints the plan: the VMs by size and region, their vCPUs
    against the subscription's quota (az vm list-usage) and an estimate of VM-hours and cost
    (workflows/azure-prices.yaml, dated). Nothing is created unless the plan is confirmed:
    --confirm, MWLAB_AZURE_CONFIRM=1, or `provision: {confirm: true}` in the profile (the
    pipeline's `snakemake --profile azure` reads the profile's); without it, it prints the
    plan and exits with status 2.

    The pipeline deletes the groups it created when it ends, succeeded or failed (its
    onsuccess/onerror handlers), unless `provision: {keep: true}`. `mwlab provision --delete
    --resource-group GROUP` deletes one (and its VMs), e.g. one a crashed pipeline left:
    `az group list --tag measurement=mwlab-study` finds them.
    """
    try:
        if delete:
            _delete(resource_group, studies, record_dir, dry_run)
            return
        code = _provision(
            studies, profile, inventory_path, resource_group, location, ssh_public_key,
            admin_user, machines, remote_dir, hours, runs, ready_timeout, ready_poll,
            plan_only, plan_out, confirm, dry_run, record_dir,
        )  # fmt: skip
    except ProvisionError as err:
        click.echo(f"provision: {err}", err=True)
        sys.exit(1)
    if code:
        sys.exit(code)


def _delete(
    resource_group: str | None, studies: tuple[str, ...], record_dir: Path | None, dry_run: bool
) -> None:
    if not resource_group:
        raise click.UsageError("--delete needs --resource-group GROUP")
    group = f"{resource_group}-{studies[0]}" if len(studies) == 1 else resource_group
    call = delete_call(group)
    click.echo(f"az {shlex.join(call)}")
    (DryRunAz() if dry_run else real_az)(call)
    if record_dir is not None:
        (record_dir / f"{group}.json").unlink(missing_ok=True)
    _say(f"provision: deleted resource group {group}")


def _provision(
    studies: tuple[str, ...],
    profile: str | None,
    inventory_path: Path | None,
    resource_group: str | None,
    location: str | None,
    ssh_public_key: Path | None,
    admin_user: str | None,
    machines: tuple[str, ...],
    remote_dir: str | None,
    hours: tuple[str, ...],
    runs: tuple[str, ...],
    ready_timeout: float | None,
    ready_poll: float | None,
    plan_only: bool,
    plan_out: Path | None,
    confirm: bool,
    dry_run: bool,
    record_dir: Path | None,
) -> int:
    config: dict[str, Any] = {}
    if profile:
        _, config = profile_config(profile)
    given: dict[str, Any] = dict(config.get("provision") or {})
    counts = {str(k): dict(v) for k, v in (given.get("machines") or {}).items()}
    for study, own in _machines(machines).items():
        counts.setdefault(study, {}).update(own)
    seconds = {s: float(h) * 3600 for s, h in _pairs(hours, "--hours").items()}
    run_counts = {s: int(n) for s, n in _pairs(runs, "--runs").items()}
    planned = profile_runs(config) if config and not seconds else {}
    for study, specs in planned.items():
        seconds[study], run_counts[study] = run_seconds(specs), len(specs)
    chosen = list(studies) or sorted(planned) or sorted(TOPOLOGIES)
    base = resource_group or given.get("resource_group") or "mwlab-study"
    key = ssh_public_key or Path(given.get("ssh_public_key") or "~/.ssh/id_ed25519.pub")
    settings = [
        Settings(
            study=study,
            resource_group=f"{base}-{study}",
            location=location or given.get("location") or "westeurope",
            admin_user=admin_user or given.get("admin_user") or "mwlab",
            ssh_public_key=key,
            machines=counts.get(study),
            measurement=str(given.get("measurement") or base),
            remote_dir=remote_dir or given.get("remote_dir") or "/tmp/mwlab",
            ready_timeout_s=ready_timeout or float(given.get("ready_timeout_s", 1800)),
            ready_poll_s=ready_poll or float(given.get("ready_poll_s", 15)),
        )
        for study in chosen
    ]
    if not plan_only and (len(settings) != 1 or inventory_path is None):
        raise click.UsageError(
            "creating needs one --study and --inventory (--plan shows the plan of several)"
        )
    if dry_run and not plan_only:
        return _dry_run(settings[0], inventory_path)
    plan = Plan(settings, seconds, run_counts)
    plan.check_sizes()
    ok = confirmed(confirm or bool(given.get("confirm")))
    key_path = key.expanduser()
    if not dry_run and (ok or not plan_only):
        settings[0].public_key()  # before any az call
    if dry_run:
        quota, short, note = [], [], "not checked (dry run)"
    else:
        try:
            quota, short = plan.quota(read_usages(plan, real_az))
            note = ""
        except ProvisionError as e:
            if ok:
                raise ProvisionError(f"cannot read the subscription's quota: {e}") from e
            quota, short, note = [], [], f"not checked: {e}"
    lines = plan.lines(quota, note)
    lines.append(
        f"ssh key: {key_path}" + ("" if key_path.is_file() else " (MISSING: create it first)")
    )
    click.echo("\n".join(lines))
    if short:
        message = "; ".join(short)
        if ok:
            raise ProvisionError(
                f"the quota is too small ({message}): ask for more (Azure portal, Quotas) or"
                " plan fewer machines (provision: {machines: ...})"
            )
        click.echo(f"provision: quota too small: {message}", err=True)
    if not ok and not dry_run:
        click.echo(f"provision: {HOW_TO_CONFIRM}", err=True)
        return 2
    if plan_only:
        if plan_out is not None:
            plan_out.parent.mkdir(parents=True, exist_ok=True)
            plan_out.write_text("\n".join(lines) + "\n")
        click.echo(f"provision: {'dry run' if dry_run else 'plan confirmed'}", err=True)
        return 0
    assert inventory_path is not None
    one = settings[0]
    inventory = provision(
        one,
        real_az,
        inventory_path.parent / f".provision-{one.study}",
        record_dir=record_dir or inventory_path.parent / "provisioned",
        inventory_path=inventory_path,
        say=_say,
    )
    write_inventory(inventory, inventory_path, one, dry_run=False)
    _say(f"provision: {len(inventory['machines'])} VMs -> {inventory_path}")
    return 0


def _dry_run(settings: Settings, inventory_path: Path | None) -> int:
    assert inventory_path is not None
    az = DryRunAz()
    workdir = inventory_path.parent / f".provision-{settings.study}"
    inventory = provision(settings, az, workdir, say=_say)
    for call in az.calls:
        click.echo(f"az {shlex.join(call)}")
    write_inventory(inventory, inventory_path, settings, dry_run=True)
    _say(f"provision: {len(inventory['machines'])} VMs -> {inventory_path} (dry run)")
    return 0
