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
from testbed.point import UNSCALED

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


# Linux's minimum TCP retransmission timeout (TCP_RTO_MIN), the study machines' default.
RTO_MIN_MS = 200.0
# The longest dilated minimum RTO a route gets (s < 0.04 would ask for more): beyond this a
# single timeout outlasts a short run, and s that small runs nothing in this study.
RTO_MIN_CAP_MS = 5000.0


def rto_min_ms(scale: float) -> float | None:
    """The minimum RTO of an emulated host's route at scale s: the study's 200 ms stretched
    to 200 / s ms of wall time (capped at RTO_MIN_CAP_MS); None at s >= 1, where the
    kernel's own 200 ms is already the study's."""
    if scale <= 0:
        raise EmulationError(f"scale must be positive, got {scale}")
    if scale >= 1:
        return None
    return float(min(round(RTO_MIN_MS / scale), RTO_MIN_CAP_MS))


# How long a packet may wait in a cap's queue before tbf drops it, in the study's time.
TBF_LATENCY_MS = 50.0


def tbf_args(rate_mbit: float, scale: float = UNSCALED) -> list[str]:
    """tbf parameters for a cap: bucket of 4 ms of traffic (at least 16 KiB), and a queue
    of TBF_LATENCY_MS of the study's time, 50 / s ms here.

    Dilated like the rest, the queue holds the same bytes at every s (the study's link rate
    x 50 ms). Left at 50 ms of wall time it held s times that: 79 KB at a client's
    10.05 Mbit/s, where 128 connections with a 4 KiB SET each outstanding need 540 KB. The
    cap then dropped most SETs on the client itself: a segment its own qdisc drops is not
    in flight, so TCP retries it from the zero-window probe timer (the RTO, then every
    500 ms while the queue stays full) and aborts the connection with ETIMEDOUT after
    tcp_retries2 (15) failed probes; half the connections sat in that timer (measured)."""
    if scale <= 0:
        raise EmulationError(f"scale must be positive, got {scale}")
    rate_bytes = rate_mbit * 1e6 / 8
    burst = max(int(rate_bytes * 0.004), 16384)
    latency = f"{TBF_LATENCY_MS / scale:g}ms"
    return ["tbf", "rate", f"{rate_mbit}mbit", "burst", str(burst), "latency", latency]


@dataclass
class Emulation:
    """One bridge, one namespace per host. Always call `teardown`, even after errors."""

    prefix: str
    caps_mbit: dict[str, float]
    # The point's scale factor s: routes get the dilated minimum RTO, caps a dilated queue.
    scale: float = UNSCALED
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
        self._route(ns, inside, address)
        rate = self.caps_mbit.get(role)
        if rate is not None:
            qdisc = ["tc", "qdisc", "add", "dev", inside, "root", *tbf_args(rate, self.scale)]
            tc = subprocess.run(
                ["ip", "netns", "exec", ns, *qdisc],
                capture_output=True,
                text=True,
                check=False,
            )
            if tc.returncode != 0:
                raise EmulationError(f"tc tbf on {ns}: {tc.stderr.strip()}")
        return host

    @property
    def settings(self) -> dict[str, object]:
        """What the hosts' routes and caps apply, for run.json (`link_settings`)."""
        return {
            "scale": self.scale,
            "rto_min_ms": rto_min_ms(self.scale),
            "rto_min_default_ms": RTO_MIN_MS,
            "quickack": False,
            "tbf_latency_ms": TBF_LATENCY_MS / self.scale,
        }

    def _route(self, ns: str, dev: str, address: str) -> None:
        """Replaces the subnet route the address brought with one whose minimum RTO is
        dilated like every other time: the kernel's 200 ms would stand for only 200 x s ms
        of the study's time, so a timeout would cost far less than it did on the study's
        machines (and the RTO's floor would sit below the dilated round trips' variance).
        Delayed ACKs stay on (no `quickack`), as on the study's machines: their 40 ms timer
        cannot be stretched per route, but the ACK pattern (piggybacked on replies, one per
        two segments) is the study's; `quickack 1` would drop that for an ACK per segment,
        more packets through the caps and nfdelay than the study's hosts sent."""
        rto = rto_min_ms(self.scale)
        if rto is None:
            return
        assert self.subnet is not None
        _ip(
            "-n",
            ns,
            "route",
            "replace",
            str(self.subnet),
            "dev",
            dev,
            "proto",
            "kernel",
            "scope",
            "link",
            "src",
            address,
            "rto_min",
            f"{rto:g}ms",
        )

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
