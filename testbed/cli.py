"""Testbed subcommands of `mwlab`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from testbed.point import Point, apply_overrides, load_point
from testbed.run import RunError, RunOptions, run_point
from testbed.tools import TOOLS, tool_version

# Flags that set fields of the point: option name -> dotted field path.
_POINT_FLAGS: dict[str, str] = {
    "name": "name",
    "hosts": "hosts",
    "inventory": "inventory",
    "servers": "servers",
    "middlewares": "middlewares",
    "client_machines": "client_machines",
    "instances_per_client": "instances_per_client",
    "threads": "threads",
    "virtual_clients": "virtual_clients",
    "driver": "driver",
    "ratio": "workload.ratio",
    "multiget": "workload.multiget",
    "data_size": "workload.data_size",
    "key_maximum": "workload.key_maximum",
    "key_size": "workload.key_size",
    "populate": "workload.populate",
    "workers": "middleware.workers",
    "sharded": "middleware.sharded",
    "replication": "middleware.replication",
    "read_balance": "middleware.read_balance",
    "window_ms": "middleware.window_ms",
    "duration": "duration_s",
    "repetition": "repetition",
    "cap_server": "caps_mbit.server",
    "cap_client": "caps_mbit.client",
    "cap_middleware": "caps_mbit.middleware",
}


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


@click.command("run")
@click.option(
    "--point",
    "point_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Point as a YAML or JSON file; the flags below override its fields.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Run directory to create (must not hold a run.json).",
)
@click.option("--name", help="Point id, used in logs.")
@click.option("--hosts", type=click.Choice(["local", "emulated", "ssh"]), help="Host kind.")
@click.option("--inventory", type=click.Path(exists=True, dir_okay=False), help="ssh inventory.")
@click.option("--servers", type=int, help="memcached server machines.")
@click.option("--middlewares", type=int, help="Middlewares (0: clients talk to the servers).")
@click.option("--client-machines", type=int, help="Client machines.")
@click.option("--instances-per-client", type=int, help="Load-generator processes per machine.")
@click.option("--threads", type=int, help="Threads per load-generator instance.")
@click.option("--virtual-clients", type=int, help="Connections per thread.")
@click.option(
    "--driver",
    type=click.Choice(["auto", "memtier", "builtin", "memaslap"]),
    help="Load generator (auto: memtier_benchmark if installed, else built-in).",
)
@click.option("--ratio", help="SET:GET ratio, memtier syntax (e.g. 1:0, 0:1, 1:6).")
@click.option("--multiget", type=int, help="Keys per multi-key GET (0: single GETs).")
@click.option("--data-size", type=int, help="Value size in bytes.")
@click.option("--key-maximum", type=int, help="Keys are 1..N.")
@click.option("--key-size", type=int, help="Key size in bytes (memaslap only).")
@click.option("--populate/--no-populate", default=None, help="Write every key before the run.")
@click.option("--workers", type=int, help="Worker threads per middleware.")
@click.option("--sharded/--not-sharded", default=None, help="Split multi-key GETs over servers.")
@click.option("--replication", type=int, help="Servers each SET goes to (default: all).")
@click.option("--read-balance", type=click.Choice(["round-robin", "least-outstanding"]))
@click.option("--window-ms", type=int, help="Middleware statistics window.")
@click.option("--duration", type=float, help="Run length of the clients, seconds.")
@click.option("--repetition", type=int, help="Repetition number (recorded).")
@click.option("--cap-server", type=float, help="Emulated egress cap of servers, Mbit/s.")
@click.option("--cap-client", type=float, help="Emulated egress cap of clients, Mbit/s.")
@click.option("--cap-middleware", type=float, help="Emulated egress cap of middlewares, Mbit/s.")
@click.option(
    "--base-port",
    type=int,
    default=21000,
    show_default=True,
    help="Servers listen on base+i, middlewares on base+100+i, iperf3 on base+200.",
)
@click.option(
    "--build-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where middleware.jar and loadgen.jar are (default: the repository's build/).",
)
@click.option(
    "--linkcap-cache",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="iperf3 results per topology (default: ~/.cache/mwlab/linkcap.json).",
)
@click.option("--netns-prefix", help="Name prefix of emulated namespaces and links (<= 9 chars).")
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
def run_command(
    point_file: Path | None,
    out: Path,
    base_port: int,
    build_dir: Path | None,
    linkcap_cache: Path | None,
    netns_prefix: str | None,
    progress: bool,
    **fields: object,
) -> None:
    """Run one experiment point and write its run directory.

    \b
    Starts the memcached servers (and populates them), the middlewares and all clients for
    the run length, stops the middlewares with SIGTERM, collects every log into OUT and
    writes OUT/run.json (status ok or failed, with the reason). Teardown always happens.
    Exit code: 0 ok, 1 the run failed, 2 bad input.
    """
    overrides = {_POINT_FLAGS[k]: v for k, v in fields.items() if v is not None}
    try:
        if point_file is not None:
            point = load_point(point_file, overrides)
        else:
            point = Point.model_validate(apply_overrides({}, overrides))
    except (ValueError, ValidationError) as e:
        click.echo(f"invalid point: {e}", err=True)
        sys.exit(2)
    options = RunOptions(out=out, base_port=base_port, netns_prefix=netns_prefix, progress=progress)
    if build_dir is not None:
        options.build_dir = build_dir
    if linkcap_cache is not None:
        options.linkcap_cache = linkcap_cache
    try:
        manifest = run_point(point, options)
    except RunError as e:
        click.echo(f"run: {e}", err=True)
        sys.exit(2)
    if manifest["status"] != "ok":
        click.echo(f"run failed: {manifest['error']} (manifest: {out / 'run.json'})", err=True)
        sys.exit(1)
    click.echo(f"run ok: {out / 'run.json'}")


def register(group: click.Group) -> None:
    """Attach the testbed subcommands to the top-level group."""
    group.add_command(tools_command)
    group.add_command(run_command)
