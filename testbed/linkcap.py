"""Link capacities measured with iperf3 between emulated or remote hosts, cached per topology."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from testbed.hosts import Host, HostError

IPERF_SECONDS = 1


def topology_key(kind: str, hosts: list[Host], caps: dict[str, float]) -> str:
    """Identifies what the capacities depend on: host kind, caps, and (ssh) the machines."""
    roles = sorted({h.role for h in hosts})
    parts: dict[str, Any] = {"kind": kind, "roles": roles}
    if kind == "emulated":
        parts["caps"] = {r: caps.get(r) for r in roles}
    else:
        parts["machines"] = sorted(f"{h.role}:{h.address}" for h in hosts)
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def _measure(
    sender: Host,
    receiver: Host,
    port: int,
    rel: str,
    run_dir: Path,
    interrupt: Callable[[], None],
) -> float:
    server = receiver.start(
        ["iperf3", "-s", "-B", receiver.address, "-p", str(port), "-J"],
        f"{rel}/server",
        "iperf3",
    )
    try:
        # No connect probe for readiness: iperf3 takes any connection as a test's control
        # channel. The client retries while the server is still starting instead.
        out: dict[str, Any] = {}
        for attempt in range(10):
            interrupt()
            time.sleep(0.3)
            command = ["iperf3", "-c", receiver.address, "-p", str(port)]
            command += ["-t", str(IPERF_SECONDS), "-J"]
            client = sender.start(command, f"{rel}/client", "iperf3")
            deadline = time.monotonic() + IPERF_SECONDS + 20
            while client.wait(0.2) is None:
                if time.monotonic() > deadline:
                    client.signal(signal.SIGKILL)
                    raise HostError(f"iperf3 from {sender.name} to {receiver.name} did not finish")
                interrupt()
            sender.fetch(f"{rel}/client", run_dir / rel / "client")
            text = (run_dir / rel / "client" / "stdout.log").read_text()
            out = json.loads(text) if text.strip() else {"error": "no output"}
            if "error" not in out or server.poll() is not None:
                break
            if attempt == 9:
                break
        if "error" in out:
            raise HostError(f"iperf3 from {sender.name} to {receiver.name}: {out['error']}")
        return float(out["end"]["sum_received"]["bits_per_second"]) / 1e6
    finally:
        # Not `-1`: the readiness probe would use up its single connection.
        server.signal(signal.SIGTERM)
        if server.wait(5.0) is None:
            server.signal(signal.SIGKILL)
        with contextlib.suppress(HostError, OSError):
            receiver.fetch(f"{rel}/server", run_dir / rel / "server")


def measure(
    kind: str,
    hosts: list[Host],
    caps: dict[str, float],
    port: int,
    run_dir: Path,
    cache: Path | None,
    interrupt: Callable[[], None] = lambda: None,
) -> dict[str, float]:
    """Egress capacity per role in Mbit/s: from a host of the role to a host of another role.
    `interrupt` runs while iperf3 does; it may raise to stop the measurement."""
    key = topology_key(kind, hosts, caps)
    if cache is not None and cache.exists():
        with contextlib.suppress(OSError, json.JSONDecodeError):
            cached = json.loads(cache.read_text()).get(key)
            if cached:
                return {k: float(v) for k, v in cached.items()}
    result: dict[str, float] = {}
    for role in ("client", "middleware", "server"):
        senders = [h for h in hosts if h.role == role]
        receivers = [h for h in hosts if h.role != role]
        if not senders or not receivers:
            continue
        result[role] = round(
            _measure(senders[0], receivers[0], port, f"linkcap/{role}", run_dir, interrupt), 2
        )
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with (cache.parent / (cache.name + ".lock")).open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data: dict[str, Any] = {}
            with contextlib.suppress(OSError, json.JSONDecodeError):
                data = json.loads(cache.read_text())
            data[key] = result
            cache.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return result
