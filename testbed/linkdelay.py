"""One-way link delays between the roles of emulated hosts (build/nfdelay and NFQUEUE).

No qdisc here can delay packets (no netem, fq or etf), so the receiving namespace sends every
packet from another role's host to a netfilter queue, and one process, build/nfdelay,
accepts it once the pair's one-way delay has passed since it arrived. The delay is applied
where the packet arrives, after the sender's tbf cap (serialisation first, then propagation,
as on a wire), and outside the sender's socket: a packet held at the sender would count
against TCP's small-queue limit and throttle the flow.

A queue per (source role, destination role) pair and namespace; the rules live in the
namespace's iptables raw table (the kernel lacks nftables' queue expression but has the
xtables NFQUEUE target) and go with the namespace. Without a listener a queued packet is
dropped (no fail-open), so a dead nfdelay fails the run instead of silently undelaying it.
nfdelay runs in this process's cgroup, outside every host's CPU budget, at the lowest
real-time priority when allowed: the emulated network must not queue behind the hosts.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testbed.hosts import NamespaceHost
from testbed.point import Delays

# Queue number of a source role in every namespace (queues are per namespace).
ROLE_QUEUE = {"client": 1, "middleware": 2, "server": 3}
READY_TIMEOUT_S = 10.0
# The lowest SCHED_FIFO priority: above every normal task, below the kernel's own threads.
RT_PRIORITY = 1


class LinkDelayError(RuntimeError):
    """The delays could not be applied, or the delay process died."""


def pair_delay_ms(delays: Delays, a: str, b: str) -> float:
    """The one-way delay between roles `a` and `b` (symmetric); 0 within a role."""
    pair = {a, b}
    if pair == {"client", "middleware"}:
        return delays.client_middleware
    if pair == {"middleware", "server"}:
        return delays.middleware_server
    if pair == {"client", "server"}:
        return delays.client_server
    return 0.0


def wanted(delays: Delays) -> bool:
    return any(v > 0 for v in delays.model_dump().values())


@dataclass(frozen=True)
class Queue:
    """Packets from `sources` (hosts of `src_role`) arriving in `netns` wait `delay_ms`."""

    netns: str
    number: int
    src_role: str
    dst_role: str
    delay_ms: float
    sources: tuple[str, ...]

    @property
    def pair(self) -> str:
        return f"{self.src_role}->{self.dst_role}"

    @property
    def argument(self) -> str:
        return f"{self.netns}:{self.number}:{round(self.delay_ms * 1e6)}"


def plan(hosts: list[NamespaceHost], delays: Delays) -> list[Queue]:
    """One queue per namespace and source role with a non-zero delay to it."""
    queues = []
    for dst in hosts:
        for src_role, number in ROLE_QUEUE.items():
            delay = pair_delay_ms(delays, src_role, dst.role)
            sources = tuple(h.address for h in hosts if h.role == src_role)
            if delay > 0 and sources:
                queues.append(Queue(dst.netns, number, src_role, dst.role, delay, sources))
    return queues


def binary(build_dir: Path) -> Path:
    return build_dir / "nfdelay"


def iptables() -> str | None:
    return shutil.which("iptables") or shutil.which("iptables", path="/usr/sbin:/sbin")


def missing(build_dir: Path) -> str | None:
    """None if delays can be applied here, else what is missing."""
    if not binary(build_dir).is_file():
        return f"{binary(build_dir)} is missing: run `make build` first"
    if iptables() is None:
        return "iptables is missing: run `make setup`"
    return None


def _in_netns(netns: str, command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", "netns", "exec", netns, *command],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def queue_drops(netns: str) -> dict[int, dict[str, int]]:
    """The kernel's counters of each bound queue in `netns`: held now, dropped because the
    queue was full, and dropped because the netlink socket was (user_dropped)."""
    proc = _in_netns(netns, ["cat", "/proc/net/netfilter/nfnetlink_queue"])
    out: dict[int, dict[str, int]] = {}
    for line in proc.stdout.splitlines():
        f = line.split()
        if len(f) >= 7 and f[0].isdigit():
            out[int(f[0])] = {"held": int(f[2]), "dropped": int(f[5]), "user_dropped": int(f[6])}
    return out


class LinkDelay:
    """The delay process and the rules of one emulation. `stop()` is always safe to call."""

    def __init__(
        self,
        hosts: list[NamespaceHost],
        delays: Delays,
        build_dir: Path,
        log_dir: Path,
        rt_priority: int = RT_PRIORITY,
    ) -> None:
        self.delays = delays
        self.queues = plan(hosts, delays)
        self.build_dir = build_dir
        self.log_dir = log_dir
        self.rt_priority = rt_priority
        self.proc: subprocess.Popen[bytes] | None = None
        self.record: dict[str, Any] | None = None
        self._stopped = False

    def start(self, interrupt: Callable[[], None] = lambda: None) -> None:
        """Binds every queue, then sends traffic to them; raises LinkDelayError."""
        why = missing(self.build_dir)
        if why is not None:
            raise LinkDelayError(f"link delays asked for, but {why}")
        if not self.queues:
            return
        self.log_dir.mkdir(parents=True, exist_ok=True)
        command = [str(binary(self.build_dir)), "-r", str(self.rt_priority)]
        command += [q.argument for q in self.queues]
        (self.log_dir / "command.txt").write_text(" ".join(command) + "\n")
        with (
            (self.log_dir / "stdout.log").open("wb") as out,
            (self.log_dir / "stderr.log").open("wb") as err,
        ):
            # Its own session: a terminal's Ctrl-C reaches the run, which stops it in order.
            self.proc = subprocess.Popen(
                command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "ready" not in self._stdout():
            if self.proc.poll() is not None:
                raise LinkDelayError(
                    f"nfdelay exited with {self.proc.returncode} before binding its queues:"
                    f" {self._stderr() or 'no message'}"
                )
            if time.monotonic() > deadline:
                raise LinkDelayError(f"nfdelay not ready after {READY_TIMEOUT_S:.0f} s")
            interrupt()
            time.sleep(0.02)
        # Rules only once a listener is bound: until then a queued packet would be dropped.
        ipt = iptables()
        assert ipt is not None
        for q in self.queues:
            rule = ["-w", "-t", "raw", "-A", "PREROUTING", "-s", ",".join(q.sources)]
            rule += ["-j", "NFQUEUE", "--queue-num", str(q.number)]
            proc = _in_netns(q.netns, [ipt, *rule])
            if proc.returncode != 0:
                raise LinkDelayError(f"iptables in {q.netns}: {proc.stderr.strip()}")

    def check(self) -> None:
        """Raises LinkDelayError if the delay process has died."""
        if self.proc is None or self._stopped:
            return
        code = self.proc.poll()
        if code is not None:
            raise LinkDelayError(
                f"the link-delay process (nfdelay) exited with {code} during the run: packets"
                f" between emulated hosts were dropped from then on (see linkdelay/stderr.log)"
            )

    def stop(self) -> dict[str, Any]:
        """Removes the rules, stops the process and returns the record for run.json. Raises
        nothing; a process that had died is recorded as such (`exit_code`)."""
        if self._stopped:
            return self.record or {}
        self._stopped = True
        died = self.proc is not None and self.proc.poll() is not None
        drops: dict[str, dict[int, dict[str, int]]] = {}
        ipt = iptables()
        for netns in sorted({q.netns for q in self.queues}):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                drops[netns] = queue_drops(netns)
                # Unqueued first, so nothing is dropped while the listener goes away.
                if ipt is not None:
                    _in_netns(netns, [ipt, "-w", "-t", "raw", "-F", "PREROUTING"])
        code = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(5.0)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.proc.wait(5.0)
            code = self.proc.returncode
        self.record = self._record(code, died, drops)
        return self.record

    def _stdout(self) -> str:
        with contextlib.suppress(OSError):
            return (self.log_dir / "stdout.log").read_text()
        return ""

    def _stderr(self) -> str:
        with contextlib.suppress(OSError):
            return (self.log_dir / "stderr.log").read_text().strip()
        return ""

    def _record(
        self, code: int | None, died: bool, drops: dict[str, dict[int, dict[str, int]]]
    ) -> dict[str, Any]:
        stats: dict[str, Any] = {}
        for line in self._stdout().splitlines():
            if line.startswith("{"):
                with contextlib.suppress(json.JSONDecodeError):
                    stats = json.loads(line)
        by_queue = {(s["netns"], s["queue"]): s for s in stats.get("queues", [])}
        pairs: dict[str, dict[str, Any]] = {}
        for q in self.queues:
            s = by_queue.get((q.netns, q.number), {})
            k = drops.get(q.netns, {}).get(q.number, {})
            p = pairs.setdefault(
                q.pair,
                {"delay_ms": q.delay_ms, "packets": 0, "dropped": 0, "late_max_us": 0.0},
            )
            p["packets"] += int(s.get("packets", 0))
            p["dropped"] += k.get("dropped", 0) + k.get("user_dropped", 0)
            p["dropped"] += int(s.get("overflow", 0)) + int(s.get("recv_errors", 0))
            p["late_max_us"] = max(p["late_max_us"], round(s.get("late_max_ns", 0) / 1e3, 1))
            late = s.get("late_mean_ns", 0.0) * s.get("released", 0)
            p["_late_sum"] = p.get("_late_sum", 0.0) + late
            p["_released"] = p.get("_released", 0) + int(s.get("released", 0))
        for p in pairs.values():
            released, late = p.pop("_released"), p.pop("_late_sum")
            p["late_mean_us"] = round(late / released / 1e3, 2) if released else None
        packets = sum(p["packets"] for p in pairs.values())
        cpu = None
        if stats:
            cpu = round(stats["cpu_user_s"] + stats["cpu_sys_s"], 6)
        rt = "SCHED_FIFO" not in self._stderr() if self.rt_priority > 0 else False
        return {
            "applied": self.proc is not None,
            "method": "nfdelay: NFQUEUE in the receiving namespace (iptables raw PREROUTING)",
            "delays_ms": self.delays.model_dump(),
            "pairs": pairs,
            "packets": packets,
            "cpu_s": cpu,
            "cpu_us_per_packet": round(cpu * 1e6 / packets, 3) if cpu and packets else None,
            "wall_s": stats.get("wall_s"),
            "realtime_priority": rt,
            "exit_code": code,
            "died_during_run": died,
        }
