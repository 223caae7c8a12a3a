"""`mwlab delay-check`: how exact the emulated link delays are, and what they cost in CPU.

Three emulated hosts (client, middleware, server; the study's caps) and a memcached on the
server. Per one-way delay (every role pair the same; 0 is the baseline without nfdelay):
round trips client -> server by ICMP echo and by memcached `version` on an idle network,
then memcached round trips while the built-in load generator drives memcached through the
same delay. nfdelay runs afresh for the loaded phase, so its packet count and CPU time are
the loaded phase's: CPU per packet and its share of a core at that packet rate.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from common.paths import BUILD, REPO
from testbed import emulation, linkdelay
from testbed.drivers import loadgen_command
from testbed.hosts import NamespaceHost
from testbed.point import Caps, Delays
from testbed.services.memcached import memcached_command, wait_for_memcached

LEVELS_MS = (0.0, 0.5, 1.0, 2.5, 5.0)
# Load of the loaded phase: 2 threads x 8 connections, 4 KiB values, half SETs.
LOAD_FLAGS = ["-c", "8", "-t", "2", "--ratio=1:1", "--data-size=4096", "--key-maximum=10000"]


class DelayCheckError(RuntimeError):
    """The measurement could not be made."""


def summarize(rtts_us: list[float], target_ms: float) -> dict[str, Any]:
    """Percentiles of the round-trip times and of their excess over the target, in ms."""
    ms = sorted(r / 1e3 for r in rtts_us)
    if not ms:
        return {"n": 0}

    def pct(p: float) -> float:
        return ms[min(len(ms) - 1, int(p / 100 * len(ms)))]

    def excess(v: float) -> float:
        return round(v - target_ms, 4)

    return {
        "n": len(ms),
        "rtt_ms": {
            "p1": round(pct(1), 4),
            "median": round(statistics.median(ms), 4),
            "p99": round(pct(99), 4),
            "mean": round(statistics.fmean(ms), 4),
            "min": round(ms[0], 4),
        },
        "excess_ms": {
            "p1": excess(pct(1)),
            "median": excess(statistics.median(ms)),
            "p99": excess(pct(99)),
        },
        "below_target": sum(1 for v in ms if v < target_ms),
    }


def _probe(host: NamespaceHost, args: list[str], timeout: float) -> list[float]:
    command = ["ip", "netns", "exec", host.netns, sys.executable, "-m", "testbed.delayprobe"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env
    )
    if proc.returncode != 0:
        raise DelayCheckError(f"probe {' '.join(args)}: {proc.stderr.strip()[-500:]}")
    rtts: list[float] = json.loads(proc.stdout)
    return rtts


def _nfdelay_load(record: dict[str, Any], seconds: float) -> dict[str, Any]:
    packets = record.get("packets") or 0
    cpu = record.get("cpu_s")
    wall = record.get("wall_s") or seconds
    return {
        "packets": packets,
        "packets_per_s": round(packets / wall, 1) if wall else None,
        "cpu_s": cpu,
        "cpu_us_per_packet": record.get("cpu_us_per_packet"),
        "core_share": round(cpu / wall, 4) if cpu is not None and wall else None,
        "dropped": sum(p["dropped"] for p in record.get("pairs", {}).values()),
        "realtime_priority": record.get("realtime_priority"),
    }


def check(
    out: Path,
    build_dir: Path,
    base_port: int,
    samples: int,
    load_seconds: float,
    levels: tuple[float, ...] = LEVELS_MS,
    console: Console | None = None,
) -> dict[str, Any]:
    """Runs the measurement; writes and returns the JSON document."""
    console = console or Console(stderr=True)
    reason = emulation.available()
    if reason is not None:
        raise DelayCheckError(f"emulated hosts unavailable: {reason}")
    why = linkdelay.missing(build_dir)
    if why is not None:
        raise DelayCheckError(why)
    loadgen = build_dir / "loadgen.jar"
    if not loadgen.is_file():
        raise DelayCheckError(f"{loadgen} is missing: run `make build` first")
    logs = out.parent / (out.stem + "_logs")
    logs.mkdir(parents=True, exist_ok=True)
    emu = emulation.Emulation(f"mwd{secrets.token_hex(2)}", Caps().model_dump())
    active: linkdelay.LinkDelay | None = None
    result: dict[str, Any] = {
        "schema": 1,
        "kernel": platform.release(),
        "cores": os.cpu_count(),
        "samples": samples,
        "load_seconds": load_seconds,
        "load_flags": LOAD_FLAGS,
        "method": "round trips client -> server; every role pair delayed by the same one-way"
        " delay; target RTT = 2 x one-way",
        "levels": [],
    }
    try:
        client = emu.add_host("client1", "client", logs)
        middleware = emu.add_host("middleware1", "middleware", logs)
        server = emu.add_host("server1", "server", logs)
        hosts = [client, middleware, server]
        # memcached's own UDP setting: the check's probes and load use TCP only.
        cmd = memcached_command(server.address, base_port, disable_udp=False)
        mc = server.start(cmd, "memcached", "server")
        wait_for_memcached(server.address, base_port, 30.0, mc)
        gap = 0.001
        for level in levels:
            target = 2 * level
            delays = Delays(client_middleware=level, middleware_server=level, client_server=level)
            tag = f"oneway{level:g}ms"
            console.print(f"delay-check: one-way {level:g} ms (target RTT {target:g} ms)")
            entry: dict[str, Any] = {"one_way_ms": level, "target_rtt_ms": target}
            # Idle network.
            if level > 0:
                active = linkdelay.LinkDelay(hosts, delays, build_dir, logs / tag / "idle")
                active.start()
            guard = samples * (target / 1e3 + gap) * 3 + 60
            icmp = _probe(client, ["icmp", server.address, str(samples), str(gap)], guard)
            mem = _probe(
                client,
                ["memcached", server.address, str(samples), str(gap), str(base_port)],
                guard,
            )
            entry["idle"] = {"icmp": summarize(icmp, target), "memcached": summarize(mem, target)}
            if active is not None:
                entry["idle"]["nfdelay"] = _nfdelay_load(active.stop(), 0)
                active = None
            # Under load: the probe runs while the load generator does.
            if level > 0:
                active = linkdelay.LinkDelay(hosts, delays, build_dir, logs / tag / "loaded")
                active.start()
            seconds = max(1, round(load_seconds))
            flags = ["-s", server.address, "-p", str(base_port), "-P", "memcache_text"]
            flags += [*LOAD_FLAGS, f"--test-time={seconds}", "--json-out-file=result.json"]
            flags += ["--hide-histogram"]
            gen = client.start(loadgen_command(str(loadgen), flags), f"{tag}/load", "load")
            t0 = time.monotonic()
            time.sleep(min(1.5, seconds / 3))
            # As many probes as fit in the rest of the load's run.
            room = max(10, int((seconds * 0.6) / (target / 1e3 + gap + 2e-4)))
            loaded = _probe(
                client,
                ["memcached", server.address, str(min(samples, room)), str(gap), str(base_port)],
                seconds * 3 + 60,
            )
            if gen.wait(seconds + 60) is None:
                raise DelayCheckError("the load generator did not finish")
            elapsed = time.monotonic() - t0
            entry["loaded"] = {"memcached": summarize(loaded, target)}
            entry["loaded"]["load_ops_per_s"] = _load_ops(logs / tag / "load" / "result.json")
            if active is not None:
                entry["loaded"]["nfdelay"] = _nfdelay_load(active.stop(), elapsed)
                active = None
            result["levels"].append(entry)
    finally:
        if active is not None:
            active.stop()
        for host in emu.hosts:
            host.stop_all(grace_s=2.0)
        problems = emu.teardown()
        if problems:
            console.print(f"delay-check teardown: {'; '.join(problems)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return result


def _load_ops(path: Path) -> float | None:
    try:
        data = json.loads(path.read_text())
        return round(float(data["ALL STATS"]["Totals"]["Ops/sec"]), 1)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def table(result: dict[str, Any]) -> Table:
    t = Table(title="link delay: RTT client -> server minus target (ms); nfdelay CPU")
    for col in (
        "one-way",
        "target",
        "ping med [p1, p99]",
        "memcached med [p1, p99]",
        "loaded med [p1, p99]",
        "pkt/s",
        "CPU us/pkt",
        "core",
    ):
        t.add_column(col, justify="right")

    def cell(s: dict[str, Any], absolute: bool) -> str:
        if not s.get("n"):
            return "-"
        e = s["rtt_ms"] if absolute else s["excess_ms"]
        return f"{e['median']:.3f} [{e['p1']:.3f}, {e['p99']:.3f}]"

    for lv in result["levels"]:
        base = lv["one_way_ms"] == 0
        nf = lv["loaded"].get("nfdelay", {})
        t.add_row(
            f"{lv['one_way_ms']:g}",
            f"{lv['target_rtt_ms']:g}",
            cell(lv["idle"]["icmp"], base),
            cell(lv["idle"]["memcached"], base),
            cell(lv["loaded"]["memcached"], base),
            f"{nf['packets_per_s']:.0f}" if nf.get("packets_per_s") else "-",
            f"{nf['cpu_us_per_packet']:.1f}" if nf.get("cpu_us_per_packet") else "-",
            f"{nf['core_share']:.3f}" if nf.get("core_share") is not None else "-",
        )
    return t


def markdown(result: dict[str, Any]) -> str:
    """The table of `table` as Markdown (for READMEs and reports)."""

    def cell(s: dict[str, Any], absolute: bool) -> str:
        if not s.get("n"):
            return "-"
        e = s["rtt_ms"] if absolute else s["excess_ms"]
        return f"{e['median']:.3f} [{e['p1']:.3f}, {e['p99']:.3f}]"

    lines = [
        "| one-way ms | ping | memcached | memcached, loaded | packets/s | CPU µs/packet | core |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for lv in result["levels"]:
        base = lv["one_way_ms"] == 0
        nf = lv["loaded"].get("nfdelay", {})
        pps, per, core = nf.get("packets_per_s"), nf.get("cpu_us_per_packet"), nf.get("core_share")
        lines.append(
            f"| {lv['one_way_ms']:g}{' (RTT)' if base else ''}"
            f" | {cell(lv['idle']['icmp'], base)} | {cell(lv['idle']['memcached'], base)}"
            f" | {cell(lv['loaded']['memcached'], base)}"
            f" | {f'{pps:.0f}' if pps else '-'} | {f'{per:.1f}' if per else '-'}"
            f" | {f'{core:.3f}' if core is not None else '-'} |"
        )
    return "\n".join(lines)


@click.command("delay-check")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("results/default/delay_check.json"),
    show_default=True,
    help="JSON to write (logs go beside it, in <name>_logs/).",
)
@click.option("--samples", type=click.IntRange(10), default=1000, show_default=True)
@click.option("--load-seconds", type=click.FloatRange(1), default=6.0, show_default=True)
@click.option(
    "--levels",
    default=",".join(f"{v:g}" for v in LEVELS_MS),
    show_default=True,
    help="One-way delays in ms, comma-separated (0: the baseline without nfdelay).",
)
@click.option("--base-port", type=int, default=26900, show_default=True)
@click.option(
    "--build-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=BUILD,
    help="Where nfdelay and loadgen.jar are.",
)
def delay_check_command(
    out: Path, samples: int, load_seconds: float, levels: str, base_port: int, build_dir: Path
) -> None:
    """Measure the emulated link delays: RTT against the target, idle and under load, and
    nfdelay's CPU per packet. Needs root (network namespaces)."""
    try:
        parsed = tuple(float(v) for v in levels.split(","))
    except ValueError:
        raise click.BadParameter(
            f"not a list of numbers: {levels!r}", param_hint="--levels"
        ) from None
    if any(v < 0 or v > 1000 for v in parsed):
        raise click.BadParameter("delays must be 0..1000 ms", param_hint="--levels")
    try:
        result = check(out, build_dir, base_port, samples, load_seconds, parsed)
    except DelayCheckError as e:
        click.echo(f"delay-check: {e}", err=True)
        sys.exit(1)
    Console().print(table(result))
    click.echo(f"delay-check: {out}")
