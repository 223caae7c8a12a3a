"""`mwlab preflight`: check the machines of an ssh inventory before a study runs on them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from testbed.preflight import DRIVER_TOOLS, ROLE_TOOLS, PreflightError, run_preflight


@click.command("preflight")
@click.option(
    "--inventory",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    required=True,
    help="The machines to check (the inventory format: testbed/README.md).",
)
@click.option("--system", type=click.Choice(sorted(ROLE_TOOLS)), default="memcached",
              show_default=True, help="What the study runs on them.")  # fmt: skip
@click.option(
    "--driver",
    "drivers",
    multiple=True,
    type=click.Choice(sorted(DRIVER_TOOLS)),
    help="A load generator the study's points use (repeatable).",
)
@click.option(
    "--need",
    "needs",
    multiple=True,
    metavar="ROLE=N",
    help="The study's largest points use N machines of ROLE (repeatable).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Where the pinned inventory, its known_hosts and preflight.json go.",
)
def preflight_command(
    inventory: Path, system: str, drivers: tuple[str, ...], needs: tuple[str, ...], out: Path
) -> None:
    """Reach every machine (pinning its host key), check its tools, cores, memory, kernel and
    clock, and measure the links between roles; exits 1 naming each machine that fails."""
    counts: dict[str, int] = {}
    for need in needs:
        role, sep, n = need.partition("=")
        if not sep or role not in ("server", "middleware", "client") or not n.isdigit():
            raise click.BadParameter(f"{need!r}: ROLE=N, ROLE one of server, middleware, client")
        counts[role] = int(n)
    try:
        record = run_preflight(inventory, system, drivers, out, counts)
    except (PreflightError, ValueError) as e:
        click.echo(f"mwlab preflight: {e}", err=True)
        sys.exit(1)
    links = ", ".join(f"{r} {v:g} Mbit/s" for r, v in record["links_mbit"].items())
    click.echo(
        f"preflight: {len(record['machines'])} machines ready ({links}); "
        f"pinned inventory {out / 'inventory.yaml'}"
    )
