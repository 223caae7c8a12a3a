"""Testbed subcommands of `mwlab`."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click
import yaml

from common.stages import RUN_STAGES
from testbed.delaycheck import delay_check_command
from testbed.point import DEFAULT_WORKERS, Point, apply_overrides, describe_error, load_point
from testbed.run import RunError, RunOptions, run_exit_code, run_point
from testbed.series import SeriesOptions, SeriesRunner, StabilityCheck
from testbed.signals import SignalRecorder
from testbed.tools_cli import tools_command

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
    "design": "middleware.design",
    "workers": "middleware.workers",
    "sharded": "middleware.sharded",
    "replication": "middleware.replication",
    "read_balance": "middleware.read_balance",
    "window_ms": "middleware.window_ms",
    "duration": "duration_s",
    "repetition": "repetition",
    "delay_client_middleware": "delays_ms.client_middleware",
    "delay_middleware_server": "delays_ms.middleware_server",
    "delay_client_server": "delays_ms.client_server",
    "cap_server": "caps_mbit.server",
    "cap_client": "caps_mbit.client",
    "cap_middleware": "caps_mbit.middleware",
    "budget_server": "budgets_cores.server",
    "budget_client": "budgets_cores.client",
    "budget_middleware": "budgets_cores.middleware",
}


# Options of both `mwlab run` and `mwlab run-series`, declared once.
base_port_option = click.option(
    "--base-port",
    type=int,
    default=21000,
    show_default=True,
    envvar="MWLAB_BASE_PORT",
    help="Servers listen on base+i, middlewares on base+100+i, iperf3 on base+200"
    " (default from $MWLAB_BASE_PORT: pipelines side by side each take their own range).",
)
netns_prefix_option = click.option(
    "--netns-prefix", help="Name prefix of emulated namespaces and links (<= 9 chars)."
)
progress_option = click.option(
    "--progress/--no-progress", default=True, help="Show a progress bar."
)


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
    type=click.Choice(["builtin", "memtier", "memaslap"]),
    help="Load generator, the same on every machine (default: builtin).",
)
@click.option("--ratio", help="SET:GET ratio, memtier syntax (e.g. 1:0, 0:1, 1:6).")
@click.option("--multiget", type=int, help="Keys per multi-key GET (0: single GETs).")
@click.option("--data-size", type=int, help="Value size in bytes.")
@click.option("--key-maximum", type=int, help="Keys are 1..N.")
@click.option("--key-size", type=int, help="Key size in bytes (memaslap only).")
@click.option("--populate/--no-populate", default=None, help="Write every key before the run.")
@click.option(
    "--design",
    type=click.Choice(["2018", "2016"]),
    help="Middleware design: 2018 (one shared queue) or 2016 (read and write queues per server).",
)
@click.option(
    "--workers",
    type=int,
    help="Worker threads per middleware (2016: read threads per server)"
    f" [default: {DEFAULT_WORKERS}].",
)
@click.option("--sharded/--not-sharded", default=None, help="Split multi-key GETs over servers.")
@click.option("--replication", type=int, help="Servers each SET goes to (default: all).")
@click.option("--read-balance", type=click.Choice(["round-robin", "least-outstanding"]))
@click.option("--window-ms", type=int, help="Middleware statistics window.")
@click.option("--duration", type=float, help="Run length of the clients, seconds.")
@click.option("--repetition", type=int, help="Repetition number (recorded).")
@click.option("--delay-client-middleware", type=float, help="Emulated one-way delay, ms.")
@click.option("--delay-middleware-server", type=float, help="Emulated one-way delay, ms.")
@click.option("--delay-client-server", type=float, help="Emulated one-way delay, ms.")
@click.option("--cap-server", type=float, help="Emulated egress cap of servers, Mbit/s.")
@click.option("--cap-client", type=float, help="Emulated egress cap of clients, Mbit/s.")
@click.option("--cap-middleware", type=float, help="Emulated egress cap of middlewares, Mbit/s.")
@click.option("--budget-server", type=float, help="CPU budget of each emulated server, cores.")
@click.option("--budget-client", type=float, help="CPU budget of each emulated client, cores.")
@click.option(
    "--budget-middleware", type=float, help="CPU budget of each emulated middleware, cores."
)
@base_port_option
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
@netns_prefix_option
@progress_option
# Test hooks: fail at a stage, or wait at stages until a signal arrives.
@click.option("--fail-at", type=click.Choice(RUN_STAGES), hidden=True)
@click.option("--pause-at", type=click.Choice(RUN_STAGES), multiple=True, hidden=True)
def run_command(
    point_file: Path | None,
    out: Path,
    base_port: int,
    build_dir: Path | None,
    linkcap_cache: Path | None,
    netns_prefix: str | None,
    progress: bool,
    fail_at: str | None,
    pause_at: tuple[str, ...],
    **fields: object,
) -> None:
    """Run one experiment point and write its run directory.

    \b
    Starts the memcached servers (and populates them), the middlewares and all clients for
    the run length, stops the middlewares with SIGTERM, collects every log into OUT and
    writes OUT/run.json (status ok or failed, with the reason). Teardown always happens.
    A point of `system: simplemq` (a --point file) runs PostgreSQL, SimpleMQ's middlewares
    and its clients instead, and keeps the database's counters (testbed/README.md).
    SIGINT, SIGTERM and SIGHUP stop the run: it tears down, writes run.json (failed, with
    every signal received) and exits 128 + the signal's number.
    Exit code: 0 ok, 1 the run failed, 2 bad input, 130/143/129 SIGINT/SIGTERM/SIGHUP.
    """
    # Recorded from here on, whatever the inherited dispositions: a signal during teardown
    # must not cut it short.
    with SignalRecorder() as signals:
        point = _point(point_file, fields)
        if point is None:
            code = 2
        else:
            options = RunOptions(
                out=out,
                base_port=base_port,
                netns_prefix=netns_prefix,
                progress=progress,
                fail_at=fail_at,
                pause_at=pause_at,
            )
            if build_dir is not None:
                options.build_dir = build_dir
            if linkcap_cache is not None:
                options.linkcap_cache = linkcap_cache
            code = _run(point, options, signals)
    sys.exit(code)


def _point(point_file: Path | None, fields: dict[str, object]) -> Point | None:
    """The point to run, or None (said on stderr) when it is invalid."""
    overrides = {_POINT_FLAGS[k]: v for k, v in fields.items() if v is not None}
    try:
        if point_file is not None:
            return load_point(point_file, overrides)
        return Point.model_validate(apply_overrides({}, overrides))
    except ValueError as e:  # pydantic's ValidationError too
        click.echo(f"invalid point: {describe_error(e)}", err=True)
        return None


def _run(point: Point, options: RunOptions, signals: SignalRecorder) -> int:
    out = options.out
    try:
        manifest = run_point(point, options, signals=signals)
    except RunError as e:
        click.echo(f"run: {e}", err=True)
        return 2
    if manifest["status"] != "ok":
        click.echo(f"run failed: {manifest['error']} (manifest: {out / 'run.json'})", err=True)
    else:
        click.echo(f"run ok: {out / 'run.json'}")
    return run_exit_code(manifest)


@click.command("run-series")
@click.option(
    "--plan",
    "plan_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML list of {point: <point>, out: <run directory>}, one per point.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The series' own directory (raw outputs, earlier attempts, its run.json).",
)
@base_port_option
@netns_prefix_option
@click.option("--reruns", type=int, default=2, show_default=True,
              help="Further measurements of a step that failed or was unstable.")  # fmt: skip
@click.option("--longest-rerun", type=click.FloatRange(min=1.0), default=1.0, show_default=True,
              help="How many times its measured interval a rerun of an imprecise step may"
                   " last; a step that even this long a rerun could not make precise is not"
                   " measured again.")  # fmt: skip
@click.option("--stability-check/--no-stability-check", default=True, show_default=True)
@progress_option
@click.pass_obj
def run_series_command(
    frontend: Frontend | None,
    plan_file: Path,
    out: Path,
    base_port: int,
    netns_prefix: str | None,
    reruns: int,
    longest_rerun: float,
    stability_check: bool,
    progress: bool,
) -> None:
    """Run the points of one topology as one series (testbed/series.py).

    \b
    Sets the topology up once, measures every point as a step, and writes each point's run
    directory (run.json and its outputs) as `mwlab run` would. Exit code: 0 when every
    point's run.json says ok, 1 when some failed, 2 bad input, 128 + N on signal N.
    """
    check = None
    if stability_check:
        if frontend is None:
            raise click.UsageError("this front end has no stability check: --no-stability-check")
        check = frontend.stability
    with SignalRecorder() as signals:
        code = _run_series(plan_file, out, base_port, netns_prefix, reruns, check, progress,
                           signals, longest_rerun)  # fmt: skip
    sys.exit(code)


def _run_series(
    plan_file: Path,
    out: Path,
    base_port: int,
    netns_prefix: str | None,
    reruns: int,
    stability: StabilityCheck | None,
    progress: bool,
    signals: SignalRecorder,
    longest_rerun: float = 1.0,
) -> int:
    try:
        raw = yaml.safe_load(plan_file.read_text())
        if not isinstance(raw, list) or not raw:
            raise ValueError("the plan must be a non-empty list of {point, out}")
        points = [(Point.model_validate(e["point"]), Path(e["out"])) for e in raw]
        options = SeriesOptions(
            out=out,
            base_port=base_port,
            netns_prefix=netns_prefix,
            progress=progress,
            reruns=reruns,
            longest_rerun=longest_rerun,
        )
        runner = SeriesRunner(points, options, signals=signals, stability=stability)
    except (ValueError, KeyError, TypeError, OSError, yaml.YAMLError) as e:
        why = describe_error(e) if isinstance(e, ValueError) else str(e)
        click.echo(f"invalid series plan {plan_file}: {why}", err=True)
        return 2
    try:
        manifest = runner.run()
    except RunError as e:
        click.echo(f"run-series: {e}", err=True)
        return 2
    failed = [s.point.name for s in runner.steps if s.error is not None]
    if manifest["status"] != "ok":
        click.echo(f"series failed: {manifest['error']}", err=True)
    elif failed:
        click.echo(f"series ok, {len(failed)} points failed: {', '.join(failed)}", err=True)
    else:
        click.echo(f"series ok: {len(runner.steps)} points")
    code = run_exit_code(manifest)
    return code if code != 0 else (1 if failed else 0)


@dataclass(frozen=True)
class Frontend:
    """What the front end (mwlab) gives the testbed's commands as their context object: the
    stability check a series applies after each step, which is the analysis' (the testbed
    does not import the analysis)."""

    stability: StabilityCheck


def register(group: click.Group) -> None:
    """Attach the testbed subcommands to the top-level group, whose context object is a
    `Frontend`."""
    group.add_command(tools_command)
    group.add_command(run_command)
    group.add_command(run_series_command)
    group.add_command(delay_check_command)
