"""Preflight of an ssh inventory: every machine checked before the first run of its study.

Each machine is reached over ssh with its host key pinned into the results folder (accepted
on first contact, strict afterwards), and asked in one call for its kernel, cores, memory,
clock and the version of every tool its role needs there. The links between roles are then
measured with iperf3. A machine that cannot be reached or lacks a tool fails the preflight at
once, naming the machine and the tool. What passes is written as a pinned inventory (the
runs' ssh checks the pinned keys strictly) and a record of every machine.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from testbed import linkcap
from testbed.drivers import resolve_driver
from testbed.hosts import HostError, SshHost
from testbed.inventory import Inventory, load_inventory
from testbed.services.pghost import REMOTE_BINDIR
from testbed.tools import TOOLS

# The client tool each load generator runs.
DRIVER_TOOLS = {"builtin": "java", "memtier": "memtier_benchmark", "memaslap": "memcaslap"}
# What each role runs, per system (testbed/stages/layout.py checks the same before a run).
ROLE_TOOLS = {
    "memcached": {"server": ("memcached", "java"), "middleware": ("java",), "client": ()},
    "simplemq": {"server": ("initdb",), "middleware": ("java",), "client": ("java",)},
}
# Every machine takes part in the link measurement.
COMMON_TOOLS = ("iperf3",)
# A first connection to a new machine, its key unknown: give it a while.
PROBE_TIMEOUT_S = 60.0
# The scratch port of the link measurement: a test or a run beside it uses others.
IPERF_PORT = 5399


class PreflightError(RuntimeError):
    """A machine of the inventory cannot run its part of the study."""


@dataclass
class MachineRecord:
    """What preflight found on one machine."""

    name: str
    role: str
    address: str
    kernel: str = ""
    cores: int = 0
    memory_mib: int = 0
    # Its clock minus this machine's, in ms, and how far the ssh round trip leaves it unsure.
    clock_offset_ms: float = 0.0
    clock_uncertainty_ms: float = 0.0
    # Each tool's first version line, None where it is missing.
    tools: dict[str, str | None] = field(default_factory=dict)


def needed_tools(system: str, drivers: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The tools each role needs for `system` with the load generators `drivers`."""
    if system not in ROLE_TOOLS:
        raise PreflightError(f"unknown system {system!r}: one of {', '.join(ROLE_TOOLS)}")
    needs = {role: (*tools, *COMMON_TOOLS) for role, tools in ROLE_TOOLS[system].items()}
    if system == "memcached":
        extra = tuple(sorted({DRIVER_TOOLS[resolve_driver(d)] for d in drivers}))
        needs["client"] = (*needs["client"], *(t for t in extra if t not in needs["client"]))
    return needs


def _probe_script(tools: Iterable[str]) -> str:
    """One shell call: `key=value` lines for the machine and each tool's version line."""
    lines = [
        'echo "kernel=$(uname -r)"',
        'echo "cores=$(nproc)"',
        "echo \"memory_kib=$(awk '/MemTotal/ {print $2}' /proc/meminfo)\"",
    ]
    by_name = {t.name: t for t in TOOLS}
    for name in tools:
        args = " ".join(shlex.quote(a) for a in by_name[name].version_args)
        if name == "initdb":
            find = f'p=$( ( {REMOTE_BINDIR} ) 2>/dev/null) && p="$p/initdb"'
        else:
            q = shlex.quote(name)
            find = f"p=$(command -v {q} || {{ test -x /usr/sbin/{q} && echo /usr/sbin/{q}; }})"
        lines.append(
            f'if {find}; then v=$("$p" {args} 2>&1 | grep -m1 . ); echo "tool.{name}=${{v:-?}}"; '
            f'else echo "tool.{name}="; fi'
        )
    lines.append('echo "clock=$(date +%s.%N)"')
    return "; ".join(lines)


def _parse(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def probe(host: SshHost, tools: Iterable[str]) -> MachineRecord:
    """Asks one machine for its record; raises PreflightError where ssh cannot reach it."""
    tools = list(tools)
    t0 = time.time()
    try:
        proc = host.run(_probe_script(tools), timeout=PROBE_TIMEOUT_S)
    except HostError as e:
        raise PreflightError(str(e)) from e
    t1 = time.time()
    if proc.returncode != 0:
        why = proc.stderr.strip() or "no answer"
        raise PreflightError(f"{host.name}: cannot reach {host.target} over ssh: {why}")
    got = _parse(proc.stdout)
    record = MachineRecord(name=host.name, role=host.role, address=host.address)
    record.kernel = got.get("kernel", "")
    record.cores = int(got.get("cores") or 0)
    record.memory_mib = int(got.get("memory_kib") or 0) // 1024
    if got.get("clock"):
        # The remote clock was read at the end of the call: set it against the call's middle,
        # so the answer's way back and the handshake bound what is left unsure.
        record.clock_offset_ms = round((float(got["clock"]) - (t0 + t1) / 2) * 1000, 1)
        record.clock_uncertainty_ms = round((t1 - t0) / 2 * 1000, 1)
    record.tools = {name: (got.get(f"tool.{name}") or None) for name in tools}
    return record


def pinned(inv: Inventory, known_hosts: Path) -> Inventory:
    """The inventory the runs use: host keys checked strictly against `known_hosts`."""
    return inv.model_copy(update={"known_hosts": known_hosts.resolve()})


def run_preflight(
    inventory: Path,
    system: str,
    drivers: Iterable[str],
    out: Path,
    counts: Mapping[str, int] | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Checks every machine of `inventory` for `system` and writes, into `out`, the pinned
    inventory (inventory.yaml), its host keys (known_hosts) and the record (preflight.json).
    `counts`: how many machines of each role the study's largest points use. Raises
    PreflightError naming every machine that cannot take part and why."""
    drivers = sorted(set(drivers))
    inv = load_inventory(inventory)
    short = [
        f"{n} {role} machines, the inventory has {len(inv.of_role(role))}"
        for role, n in (counts or {}).items()
        if len(inv.of_role(role)) < n
    ]
    if short:
        raise PreflightError(f"preflight of {inventory}: the study needs " + "; ".join(short))
    out.mkdir(parents=True, exist_ok=True)
    known = (out / "known_hosts").resolve()
    known.touch()
    # First contact adds a machine's key; a key that changed since is refused.
    first = inv.model_copy(update={"known_hosts": known, "accept_new": True})
    needs = needed_tools(system, drivers)
    hosts = [first.ssh_host(m, "preflight") for m in inv.machines]
    records: list[MachineRecord] = []
    problems: list[str] = []
    for host in hosts:
        say(f"preflight: {host.name} ({host.role}, {host.target})")
        try:
            record = probe(host, needs[host.role])
        except PreflightError as e:
            problems.append(str(e))
            continue
        records.append(record)
        missing = [t for t, v in record.tools.items() if v is None]
        if missing:
            problems.append(f"{host.name}: missing {', '.join(missing)} on its ssh PATH")
    if problems:
        raise PreflightError(f"preflight of {inventory} failed: " + "; ".join(problems))
    say("preflight: measuring the links between roles with iperf3")
    try:
        links = linkcap.measure("ssh", hosts, {}, IPERF_PORT, out / "links", cache=None)
    except HostError as e:
        raise PreflightError(f"preflight of {inventory}: link measurement failed: {e}") from e
    finally:
        for host in hosts:
            host.cleanup()
    record = {
        "inventory": str(inventory),
        "system": system,
        "drivers": sorted({resolve_driver(d) for d in drivers}),
        "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machines": [asdict(r) for r in records],
        "links_mbit": links,
    }
    runs = pinned(inv, known)
    (out / "inventory.yaml").write_text(
        yaml.safe_dump(runs.model_dump(mode="json", exclude={"accept_new"}), sort_keys=False)
    )
    (out / "preflight.json").write_text(json.dumps(record, indent=2) + "\n")
    return record
