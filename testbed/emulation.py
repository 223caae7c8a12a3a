"""Emulated hosts: network namespaces on a bridge, egress capped with tc tbf per role."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import random
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from testbed.hosts import NamespaceHost

# RFC 2544's benchmarking range; each emulation takes one /24 of it.
BENCH_NET = ipaddress.ip_network("198.18.0.0/15")


class EmulationError(RuntimeError):
    """Namespaces, links or qdiscs could not be set up."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and proc.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    return proc


def available() -> str | None:
    """None if namespaces can be created here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    name = f"mwprobe{os.getpid()}"
    try:
        proc = _ip("netns", "add", name, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot run ip: {e}"
    if proc.returncode != 0:
        return f"cannot create a network namespace: {proc.stderr.strip()}"
    _ip("netns", "del", name, check=False)
    return None


def _free_subnet() -> ipaddress.IPv4Network:
    routes = subprocess.run(
        ["ip", "-4", "route", "show"], capture_output=True, text=True, check=False
    ).stdout
    subnets = list(BENCH_NET.subnets(new_prefix=24))
    random.shuffle(subnets)
    for net in subnets:
        if str(net) not in routes:
            return net
    raise EmulationError("no free /24 left in 198.18.0.0/15")


def tbf_args(rate_mbit: float) -> list[str]:
    """tbf parameters for a cap: bucket of 4 ms of traffic (at least 16 KiB)."""
    rate_bytes = rate_mbit * 1e6 / 8
    burst = max(int(rate_bytes * 0.004), 16384)
    return ["tbf", "rate", f"{rate_mbit}mbit", "burst", str(burst), "latency", "50ms"]


@dataclass
class Emulation:
    """One bridge, one namespace per host. Always call `teardown`, even after errors."""

    prefix: str
    caps_mbit: dict[str, float]
    subnet: ipaddress.IPv4Network | None = None
    hosts: list[NamespaceHost] = field(default_factory=list)
    _bridge_up: bool = False

    def __post_init__(self) -> None:
        if len(self.prefix) > 9:
            raise EmulationError(f"prefix {self.prefix!r} too long for interface names")

    @property
    def bridge(self) -> str:
        return f"{self.prefix}br"

    @property
    def gateway(self) -> str:
        """The bridge's own address: how this machine reaches the emulated hosts."""
        assert self.subnet is not None
        return str(self.subnet.network_address + 1)

    def namespaces(self) -> list[str]:
        return [h.netns for h in self.hosts]

    def setup_bridge(self) -> None:
        if self.subnet is None:
            self.subnet = _free_subnet()
        _ip("link", "add", self.bridge, "type", "bridge")
        self._bridge_up = True
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")

    def add_host(self, name: str, role: str, base: Path) -> NamespaceHost:
        """Creates the namespace of one host, links it to the bridge and caps its egress."""
        if not self._bridge_up:
            self.setup_bridge()
        assert self.subnet is not None
        i = len(self.hosts)
        ns = f"{self.prefix}-{name}"
        outside, inside = f"{self.prefix}h{i}", f"{self.prefix}n{i}"
        address = str(self.subnet.network_address + 10 + i)
        host = NamespaceHost(name=name, role=role, address=address, base=base, netns=ns)
        _ip("netns", "add", ns)
        self.hosts.append(host)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", ns)
        _ip("link", "set", outside, "master", self.bridge, "up")
        _ip("-n", ns, "addr", "add", f"{address}/24", "dev", inside)
        _ip("-n", ns, "link", "set", inside, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        rate = self.caps_mbit.get(role)
        if rate is not None:
            qdisc = ["tc", "qdisc", "add", "dev", inside, "root", *tbf_args(rate)]
            tc = subprocess.run(
                ["ip", "netns", "exec", ns, *qdisc],
                capture_output=True,
                text=True,
                check=False,
            )
            if tc.returncode != 0:
                raise EmulationError(f"tc tbf on {ns}: {tc.stderr.strip()}")
        return host

    def teardown(self) -> list[str]:
        """Kills what runs in the namespaces and deletes them and the bridge; returns problems."""
        problems: list[str] = []
        for host in self.hosts:
            with contextlib.suppress(Exception):
                host.stop_all(grace_s=1.0)
            pids = _ip("netns", "pids", host.netns, check=False).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            # Deleting the veth end first makes its removal synchronous.
            _ip("link", "del", f"{self.prefix}h{self.hosts.index(host)}", check=False)
            proc = _ip("netns", "del", host.netns, check=False)
            if proc.returncode != 0 and "No such file" not in proc.stderr:
                problems.append(f"netns del {host.netns}: {proc.stderr.strip()}")
        self.hosts.clear()
        if self._bridge_up:
            proc = _ip("link", "del", self.bridge, check=False)
            if proc.returncode != 0 and "Cannot find" not in proc.stderr:
                problems.append(f"link del {self.bridge}: {proc.stderr.strip()}")
            self._bridge_up = False
        return problems


def leftovers(prefix: str) -> list[str]:
    """Namespaces and links whose names start with `prefix` (for checks after teardown)."""
    found = [
        line.split()[0]
        for line in _ip("netns", "list", check=False).stdout.splitlines()
        if line.startswith(prefix)
    ]
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(prefix):
            found.append(name)
    return found
