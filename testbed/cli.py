"""Testbed subcommands of `mwlab`."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from testbed.tools import TOOLS, tool_version


@click.command("tools")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--check", is_flag=True, help="Exit 1 if a required tool is missing.")
def tools_command(as_json: bool, check: bool) -> None:
    """List the external tools the study uses and their versions."""
    found = {t.name: tool_version(t) for t in TOOLS}
    if as_json:
        click.echo(json.dumps(found, indent=2, sort_keys=True))
    else:
        table = Table(title="tools")
        for column in ("tool", "required", "version", "purpose"):
            table.add_column(column)
        for t in TOOLS:
            version = found[t.name]
            table.add_row(
                t.name,
                "yes" if t.required else "no",
                version if version is not None else "[red]missing[/red]",
                t.purpose,
            )
        Console().print(table)
    missing = [t.name for t in TOOLS if t.required and found[t.name] is None]
    if check and missing:
        click.echo(f"missing required tools: {', '.join(missing)}", err=True)
        sys.exit(1)


def register(group: click.Group) -> None:
    """Attach the testbed subcommands to the top-level group."""
    group.add_command(tools_command)
