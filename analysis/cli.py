"""Analysis subcommands of `mwlab`: queueing models, factorial designs, run parsing."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

# The numerical modules load numpy, scipy and pandas; they are imported inside the commands
# so that `mwlab --help` and the testbed's commands stay fast.


def _json_safe(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _emit(data: Mapping[str, object], as_json: bool, title: str) -> None:
    if as_json:
        click.echo(json.dumps(_json_safe(data), indent=2))
        return
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in data.items():
        if isinstance(value, Mapping):
            for sub, v in value.items():
                table.add_row(f"{key}[{sub}]", _fmt(v))
        else:
            table.add_row(key, _fmt(value))
    Console().print(table)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


@click.group("model")
def model_group() -> None:
    """Queueing models: M/M/1, M/M/m and exact MVA of closed networks."""


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


@model_group.command("mm1")
@click.option("--arrival-rate", type=float, required=True, help="λ, jobs per second.")
@click.option("--service-rate", type=float, required=True, help="μ, jobs per second.")
@json_option
def mm1_command(arrival_rate: float, service_rate: float, as_json: bool) -> None:
    """M/M/1 queue: every metric of Jain's Box 31.1 (times in seconds)."""
    from analysis.models import queueing as q

    try:
        result = q.mm1(arrival_rate, service_rate)
    except ValueError as err:
        _fail(str(err))
    data = result.to_dict()
    _emit(data, as_json, "M/M/1")


@model_group.command("mmm")
@click.option("--arrival-rate", type=float, required=True, help="λ, jobs per second.")
@click.option("--service-rate", type=float, required=True, help="μ per server, jobs per second.")
@click.option("--servers", type=int, required=True, help="m, number of servers.")
@json_option
def mmm_command(arrival_rate: float, service_rate: float, servers: int, as_json: bool) -> None:
    """M/M/m queue with Erlang C (times in seconds)."""
    from analysis.models import queueing as q

    try:
        result = q.mmm(arrival_rate, service_rate, servers)
    except ValueError as err:
        _fail(str(err))
    _emit(result.to_dict(), as_json, f"M/M/{servers}")


@model_group.command("mva")
@click.option(
    "--network",
    "network_file",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="YAML with a list 'stations' (name, kind queue|delay, service_time, visits, servers).",
)
@click.option("--clients", type=int, required=True, help="N, jobs in the closed network.")
@click.option("--think-time", type=float, default=0.0, show_default=True, help="Z in seconds.")
@json_option
def mva_command(network_file: Path, clients: int, think_time: float, as_json: bool) -> None:
    """Exact MVA of a closed network, with multi-server stations and bounds."""
    from analysis.models import mva

    try:
        network = mva.Network.load(network_file)
        result = mva.solve(network, clients, think_time)
        bounds = mva.bounds(network, clients, think_time)
    except ValueError as err:
        _fail(str(err))
    data = result.to_dict()
    data["bounds"] = {k: v for k, v in vars(bounds).items() if k not in ("clients",)}
    if as_json:
        _emit(data, True, "MVA")
        return
    table = Table(title=f"MVA, N={clients}, Z={think_time:g} s")
    for col in ("station", "kind", "m", "R/visit", "Q", "U", "X"):
        table.add_column(col, justify="right" if col not in ("station", "kind") else "left")
    for name, st in result.stations.items():
        table.add_row(
            name,
            st.kind,
            str(st.servers),
            _fmt(st.response_time),
            _fmt(st.queue_length),
            _fmt(st.utilization),
            _fmt(st.throughput),
        )
    console = Console()
    console.print(table)
    console.print(
        f"throughput {result.throughput:.6g}/s, response time {result.response_time:.6g} s, "
        f"bottleneck {result.bottleneck()}, knee N* = {bounds.knee:.4g}"
    )


def _parse_high(values: tuple[str, ...]) -> dict[str, str]:
    high = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected FACTOR=VALUE, got {item!r}", param_hint="--high")
        high[name] = value
    return high


@click.command("factorial")
@click.option(
    "--data",
    "data_file",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="CSV with one row per measurement.",
)
@click.option("--response", required=True, help="Response column.")
@click.option("--factors", required=True, help="Comma-separated factor columns, two values each.")
@click.option("--high", multiple=True, help="FACTOR=VALUE: the +1 level (default: larger value).")
@click.option(
    "--alpha",
    type=float,
    default=None,
    help="1 - confidence level [default: 1 - the report's level, analysis.aggregate.CI_LEVEL].",
)
@click.option("--multiplicative", is_flag=True, help="Fit the multiplicative (log10) model.")
@click.option("--order", "order_column", help="Column with the run order for residual plots.")
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write residual, QQ and run-order plots to this file.",
)
@json_option
def factorial_command(
    data_file: Path,
    response: str,
    factors: str,
    high: tuple[str, ...],
    alpha: float | None,
    multiplicative: bool,
    order_column: str | None,
    plot_file: Path | None,
    as_json: bool,
) -> None:
    """2^k·r factorial analysis: effects, allocation of variation, confidence intervals."""
    import pandas as pd

    from analysis.aggregate import CI_LEVEL
    from analysis.models import factorial as fact

    alpha = 1 - CI_LEVEL if alpha is None else alpha
    try:
        df = pd.read_csv(data_file)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        _fail(f"{data_file}: cannot read CSV: {err}")
    names = [f.strip() for f in factors.split(",") if f.strip()]
    try:
        result = fact.analyse(
            df,
            response,
            names,
            high=_parse_high(high),
            alpha=alpha,
            multiplicative=multiplicative,
            order=order_column,
        )
    except fact.DesignError as err:
        _fail(f"{data_file}: {err}")
    if plot_file:
        fact.plot_diagnostics(result, plot_file)
    if as_json:
        _emit(result.to_dict(), True, "factorial")
        return
    table = Table(title=f"2^{len(names)}·{result.replications} {result.model} model of {response}")
    for col in ("term", "effect", f"CI {1 - alpha:.0%}", "variation"):
        table.add_column(col, justify="right" if col != "term" else "left")
    for term, effect in result.effects.items():
        lo, hi = result.confidence_intervals[term]
        var = result.variation.get(term)
        table.add_row(
            term,
            _fmt(effect),
            f"[{lo:.4g}, {hi:.4g}]",
            "" if var is None else f"{var:.2%}",
        )
    table.add_row("error", "", "", f"{result.variation['error']:.2%}")
    Console().print(table)


@click.command("tidy")
@click.argument("runs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output dir."
)
@click.option("--warmup", type=float, default=0.0, show_default=True, help="Seconds cut first.")
@click.option("--cooldown", type=float, default=0.0, show_default=True, help="Seconds cut last.")
def tidy_command(runs: tuple[Path, ...], out: Path, warmup: float, cooldown: float) -> None:
    """Parse run directories into Parquet tables (windows, tidy, runs, ...)."""
    from analysis import aggregate, parse

    try:
        tables = parse.load_runs(list(runs))
    except (parse.ParseError, ValueError) as err:
        _fail(str(err))
    if warmup or cooldown:
        tables = dataclasses.replace(
            tables, windows=aggregate.trim(tables.windows, warmup, cooldown)
        )
    for name, path in tables.write_parquet(out).items():
        click.echo(f"{name}: {path}")


def _verdict_cell(f: Mapping[str, object]) -> str:
    est, lo, hi = (f.get(k) for k in ("estimate", "ci_low", "ci_high"))
    interval = ""
    if isinstance(est, float) and math.isfinite(est):
        interval = f" {est:+.3g}"
        if isinstance(lo, float) and math.isfinite(lo):
            interval += f" [{lo:+.3g}, {hi:+.3g}]"
    needed = f", needs {f['needed']}" if f.get("needed") else ""
    return f"{f['verdict']}{interval} (r={f.get('repetitions', 0)}{needed})"


@click.command("verdicts")
@click.argument("first", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("second", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def verdicts_command(first: Path, second: Path, as_json: bool) -> None:
    """Compare the findings' verdicts of two builds (their data/findings.json).

    Exits 1 when a finding is reproduced in one build and contradicted in the other: a
    verdict that flips between builds has to be inconclusive in at least one."""
    from analysis import findings

    try:
        a, b = (json.loads(p.read_text())["findings"] for p in (first, second))
    except (OSError, ValueError, KeyError, TypeError) as err:
        _fail(f"not a findings.json with a `findings` list: {err}")
    rows = findings.compare_builds(a, b)
    if as_json:
        click.echo(json.dumps(_json_safe([
            {"id": r.id, "first": r.first, "second": r.second, "flipped": r.flipped,
             "clash": r.clash} for r in rows
        ]), indent=2))  # fmt: skip
    else:
        table = Table(title=f"verdicts: {first} | {second}")
        for column in ("finding", "first", "second", ""):
            table.add_column(column)
        for r in rows:
            mark = "CLASH" if r.clash else ("flipped" if r.flipped else "")
            table.add_row(r.id, _verdict_cell(r.first), _verdict_cell(r.second), mark)
        Console().print(table)
    clashes = [r.id for r in rows if r.clash]
    if clashes:
        _fail(f"reproduced in one build and contradicted in the other: {', '.join(clashes)}")


@click.command("compare-builds")
@click.argument("first", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.argument("second", type=click.Path(file_okay=False, exists=True, path_type=Path))
def compare_builds_command(first: Path, second: Path) -> None:
    """Compare two builds of the report (results folders) file by file: every generated TeX
    input exactly, JSON and Parquet tables by value, figures as rendered pictures.

    Exits 1 when they differ, listing each file and its first difference: a refactoring that
    must not change the report is checked by building it from the same data before and
    after."""
    from analysis.report.build_diff import BuildDiffError, diff_builds

    try:
        differences = diff_builds(first, second)
    except BuildDiffError as err:
        _fail(str(err))
    for d in differences:
        click.echo(f"{d.path}: {d.what}")
    if differences:
        _fail(f"{len(differences)} files differ")
    click.echo(f"identical: {first} and {second}")


def register(group: click.Group) -> None:
    """Attach the analysis subcommands to the top-level group."""
    group.add_command(model_group)
    group.add_command(factorial_command)
    group.add_command(tidy_command)
    group.add_command(verdicts_command)
    group.add_command(compare_builds_command)
