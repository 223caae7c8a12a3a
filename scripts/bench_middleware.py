"""Throughput and latency of the middleware beside direct memcached and twemproxy.

Runs the same memcaslap load (4096-byte values, read-only and write-only, 1 and 3 servers)
against direct memcached, twemproxy (nutcracker) and the middleware with replication 1 in both
designs (2018: --workers workers; 2016: --read-threads read threads and one write thread per
server), then prints each result and the ratios. Every target first gets the same load for
--warmup seconds, unmeasured (the JVM compiles the middleware's hot code then, not during the
measurement). Everything runs on loopback ports 26500-26599.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# "middleware" is the default design, 2018.
TARGETS = ("direct", "twemproxy", "middleware", "middleware-2016")
BASE_PORT = 26500


@dataclass
class Result:
    servers: int
    workload: str
    target: str
    ops_per_s: float
    latency_avg_us: float
    latency_std_us: float
    get_misses: int
    frontend_cpu_us_per_op: float | None


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(cmd: list[str], log: Path) -> subprocess.Popen[bytes]:
    out = log.open("wb")
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)


def stop(p: subprocess.Popen[bytes]) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def memcached(port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = ["memcached", "-p", str(port), "-U", "0", "-t", "1", "-l", "127.0.0.1", "-m", "1024"]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    p = start(cmd, log)
    wait_port(port)
    return p


def memaslap_config(path: Path, workload: str) -> None:
    set_share = 1.0 if workload == "write" else 0.0
    path.write_text(f"key\n64 64 1\nvalue\n4096 4096 1\ncmd\n0 {set_share}\n1 {1.0 - set_share}\n")


GLOBAL = re.compile(
    r"^Global\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)"
)
TPS = re.compile(r"TPS:\s*(\d+)")


def run_memaslap(
    servers: list[int], cfg: Path, seconds: int, threads: int, conc: int
) -> tuple[float, float, float, int]:
    cmd = [
        "memcaslap",
        "-s",
        ",".join(f"127.0.0.1:{p}" for p in servers),
        "-F",
        str(cfg),
        "-t",
        f"{seconds}s",
        "-T",
        str(threads),
        "-c",
        str(conc),
        "-X",
        "4096",
        "-w",
        "1k",
        "-S",
        f"{seconds}s",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120).stdout
    m = None
    for line in out.splitlines():
        g = GLOBAL.match(line)
        if g:
            m = g
    tps = TPS.search(out)
    if m is None or tps is None:
        raise RuntimeError(f"cannot parse memcaslap output:\n{out}")
    return float(tps.group(1)), float(m.group(8)), float(m.group(9)), int(m.group(5))


def twemproxy(port: int, servers: list[int], work: Path) -> subprocess.Popen[bytes]:
    conf = work / "nutcracker.yml"
    lines = [
        "bench:",
        f"  listen: 127.0.0.1:{port}",
        "  hash: fnv1a_64",
        "  distribution: ketama",
        "  timeout: 1000",
        "  auto_eject_hosts: false",
        "  servers:",
    ]
    lines += [f"   - 127.0.0.1:{p}:1" for p in servers]
    conf.write_text("\n".join(lines) + "\n")
    binary = shutil.which("nutcracker") or "/usr/sbin/nutcracker"
    p = start(
        [binary, "-c", str(conf), "-s", str(port + 1), "-o", str(work / "nutcracker.log")],
        work / "nutcracker.out",
    )
    wait_port(port)
    return p


def middleware(
    port: int, servers: list[int], design: str, threads: int, work: Path, jar: Path
) -> subprocess.Popen[bytes]:
    """The middleware in `design`; `threads` is -t: workers (2018) or read threads per server."""
    cmd = ["java", "-jar", str(jar), "-p", str(port), "--design", design, "-t", str(threads)]
    cmd += ["--replication", "1"]
    cmd += ["--stats-dir", str(work / "mw-stats"), "-m"]
    cmd += [f"127.0.0.1:{p}" for p in servers]
    p = start(cmd, work / "middleware.log")
    wait_port(port)
    return p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("BENCH_SECONDS", "8")))
    ap.add_argument(
        "--warmup", type=int, default=2, help="unmeasured seconds of the same load first"
    )
    ap.add_argument("--threads", type=int, default=2, help="memcaslap threads")
    ap.add_argument("--concurrency", type=int, default=32, help="memcaslap connections")
    ap.add_argument("--workers", type=int, default=8, help="middleware workers (design 2018)")
    ap.add_argument(
        "--read-threads", type=int, default=8, help="read threads per server (design 2016)"
    )
    ap.add_argument("--jar", type=Path, default=ROOT / "build" / "middleware.jar")
    ap.add_argument("--out", type=Path, help="also write the results as JSON")
    args = ap.parse_args(argv)

    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-mw-") as tmp:
        work = Path(tmp)
        for n_servers in (1, 3):
            for workload in ("read", "write"):
                cfg = work / f"{workload}.cfg"
                memaslap_config(cfg, workload)
                ports = [BASE_PORT + i for i in range(n_servers)]
                for target in TARGETS:
                    procs = [memcached(p, work / f"mc{p}.log") for p in ports]
                    front: subprocess.Popen[bytes] | None = None
                    try:
                        if target == "direct":
                            endpoints = ports
                        elif target == "twemproxy":
                            front = twemproxy(BASE_PORT + 50, ports, work)
                            endpoints = [BASE_PORT + 50]
                        else:
                            design = "2016" if target == "middleware-2016" else "2018"
                            threads = args.read_threads if design == "2016" else args.workers
                            front = middleware(
                                BASE_PORT + 60, ports, design, threads, work, args.jar
                            )
                            endpoints = [BASE_PORT + 60]
                        if args.warmup > 0:
                            run_memaslap(
                                endpoints, cfg, args.warmup, args.threads, args.concurrency
                            )
                        cpu0 = cpu_seconds(front.pid) if front else 0.0
                        tps, avg, std, misses = run_memaslap(
                            endpoints, cfg, args.seconds, args.threads, args.concurrency
                        )
                        cpu = cpu_seconds(front.pid) - cpu0 if front else None
                    finally:
                        if front is not None:
                            stop(front)
                        for p in procs:
                            stop(p)
                    per_op = cpu * 1e6 / (tps * args.seconds) if cpu is not None else None
                    r = Result(n_servers, workload, target, tps, avg, std, misses, per_op)
                    results.append(r)
                    print(
                        f"{n_servers} server(s) {workload:5s} {target:15s} "
                        f"{tps:10.0f} ops/s  avg {avg:7.0f} us  std {std:8.0f} us  "
                        f"misses {misses}"
                        + (f"  front-end CPU {per_op:.1f} us/op" if per_op is not None else ""),
                        flush=True,
                    )

    print()
    print(
        f"{'servers':>7} {'load':5} {'mw/direct':>10} {'mw/twemproxy':>13} {'twem/direct':>12}"
        f" {'2016/direct':>12} {'2016/2018':>10}"
    )
    for n_servers in (1, 3):
        for workload in ("read", "write"):
            by = {r.target: r for r in results if (r.servers, r.workload) == (n_servers, workload)}
            d, t, m = by["direct"], by["twemproxy"], by["middleware"]
            m16 = by["middleware-2016"]
            print(
                f"{n_servers:>7} {workload:5} {m.ops_per_s / d.ops_per_s:>10.2f} "
                f"{m.ops_per_s / t.ops_per_s:>13.2f} {t.ops_per_s / d.ops_per_s:>12.2f}"
                f" {m16.ops_per_s / d.ops_per_s:>12.2f} {m16.ops_per_s / m.ops_per_s:>10.2f}"
            )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
