"""`mwlab tools`: what is installed, whether it is what a command needs, and how it differs from
what a measurement recorded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from common.environment import TOOLS_RECORD
from testbed.tools import (
    COMMANDS,
    TOOLS,
    Found,
    PythonPackage,
    differences,
    find_python_package,
    find_tool,
    interpreter,
    lock_for,
    lock_pins,
    missing_tools,
    normalise,
    python_mismatches,
    python_packages,
    versions,
)


def recorded_tools(source: Path) -> dict[str, str | None]:
    """The tool versions a dataset or results folder recorded, or a tools.json itself."""
    path = source / TOOLS_RECORD if source.is_dir() else source
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise click.ClickException(
            f"{source}: no {TOOLS_RECORD} (name a dataset, a results folder or a tools.json)"
        ) from None
    except (OSError, json.JSONDecodeError) as err:
        raise click.ClickException(f"{path}: cannot read tool versions: {err}") from None
    if not isinstance(data, dict):
        raise click.ClickException(f"{path}: not a name -> version mapping")
    return {str(k): None if v is None else str(v) for k, v in data.items()}


@click.command("tools")
@click.option("--json", "as_json", is_flag=True, help="Print name -> version as JSON.")
@click.option(
    "--check",
    is_flag=True,
    help="Exit 1 if a required tool is missing or a Python package is not the pinned version.",
)
@click.option(
    "--for",
    "command",
    type=click.Choice(COMMANDS),
    default="test",
    show_default=True,
    help="The make command whose tools and packages count: paper rebuilds the report only,"
    " measure runs the systems, test needs everything.",
)
@click.option(
    "--against",
    type=click.Path(exists=True, path_type=Path),
    help="A dataset (or results folder, or tools.json): print every tool whose version differs"
    " from what it recorded, and exit 1 when a measured one does.",
)
def tools_command(as_json: bool, check: bool, command: str, against: Path | None) -> None:
    """List the tools and Python packages the study uses: version and full path of each."""
    found = {t.name: find_tool(t) for t in TOOLS}
    packages = python_packages(command)
    python = {p.name: find_python_package(p) for p in packages}
    lock = lock_for(command)
    pins = lock_pins(lock)
    if as_json:
        click.echo(json.dumps(versions(), indent=2, sort_keys=True))
    elif against is None:
        _print_tools(found, packages, python, pins, lock.name)
    failed = False
    missing = [t.name for t in missing_tools(command)]
    if check and missing:
        click.echo(f"missing required tools of make {command}: {', '.join(missing)}", err=True)
        failed = True
    mismatched = python_mismatches(python, pins, command)
    if check and mismatched:
        click.echo(f"Python packages differ from {lock.name}: {'; '.join(mismatched)}", err=True)
        failed = True
    if against is not None:
        failed |= _compare(versions(), recorded_tools(against), str(against))
    if failed:
        sys.exit(1)


def _compare(here: dict[str, str | None], recorded: dict[str, str | None], source: str) -> bool:
    """Print each difference; True when a measured tool differs."""
    found = differences(here, recorded)
    if not found:
        click.echo(f"tools: the same versions as {source}")
        return False
    measured = [d for d in found if d.measured]
    for d in found:
        click.echo(d.describe(source))
    if measured:
        click.echo(
            f"tools: {len(measured)} measured tool(s) differ from {source}: a measurement here"
            " is not the one it holds",
            err=True,
        )
    return bool(measured)


def _print_tools(
    found: dict[str, Found],
    packages: tuple[PythonPackage, ...],
    python: dict[str, Found],
    pins: dict[str, str],
    lock: str,
) -> None:
    paths = [f.path or "" for f in (*found.values(), *python.values(), interpreter())]
    console = Console()
    # Full paths never wrap (they are to be copied); the other columns give way.
    needed = max(map(len, paths)) + max(len(t.name) for t in TOOLS) + 48
    if console.width < needed:
        console = Console(width=needed)
    table = Table(title="tools")
    table.add_column("tool", no_wrap=True)
    table.add_column("version")
    table.add_column("path", no_wrap=True)
    table.add_column("purpose")
    for t in TOOLS:
        f = found[t.name]
        missing = "[red]missing[/red]" if t.required else "absent (optional)"
        table.add_row(t.name, f.version or missing, f.path or "", t.purpose)
    console.print(table)
    table = Table(title=f"python ({lock})")
    table.add_column("package", no_wrap=True)
    table.add_column("version")
    table.add_column("pinned")
    table.add_column("path", no_wrap=True)
    py = interpreter()
    table.add_row("(interpreter)", py.version, "", py.path)
    for p in packages:
        f = python[p.name]
        pin = pins.get(normalise(p.name), "")
        version = f.version or ("[red]missing[/red]" if pin else "absent")
        if f.version and pin and f.version != pin:
            version = f"[red]{f.version}[/red]"
        table.add_row(p.name, version, pin, f.path or "")
    console.print(table)
