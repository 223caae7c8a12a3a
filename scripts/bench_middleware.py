"""Throughput and latency of the middleware beside direct memcached and twemproxy.

Runs the same memcaslap load (4096-byte values, read-only and write-only, 1 and 3 servers)
against direct memcached, twemproxy (nutcracker) and the middleware with replication 1 in both
designs (2018: --workers workers, with --max-batch 1, 4 and 16; 2016: --read-workers read
threads and one write thread per server), then prints each result and the ratios. For each
front end it reports the CPU time (utime + stime) and the context switches (voluntary and
nonvoluntary, summed over its threads) per operation. Every target first gets the same load for
--warmup seconds, unmeasured, in two runs (the JVM compiles the middleware's hot code then, and
its code for clients that disconnect and reconnect, not during the measurement). With --rounds
R the targets run R times, interleaved, and each figure is the median over the rounds.
Everything runs on loopback ports 26500-26599.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from testbed.point import DEFAULT_WORKERS
from testbed.services.local import spawn, terminate
from testbed.services.memcached import memcached_command
from testbed.services.middleware import MIDDLEWARE_JAR, command_flags, middleware_command
from testbed.services.ports import LOOPBACK, wait_for_port

# "middleware" is the default design, 2018, one request per worker turn; "batch-N" is design 2018
# with --max-batch N.
TARGETS = ("direct", "twemproxy", "middleware", "batch-4", "batch-16", "middleware-2016")
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
    frontend_ctx_switches_per_op: float | None


# Unmeasured seconds of the load before each measurement. perf on a 2-core VM (2026-11-27): after
# 5 s the JIT's C2 compiler still took 35 to 54 % of the middleware's CPU in the first 2 to 5 s
# of the measurement (longest for SETs), and under 5 % once the load had run for 10 s.
WARMUP_S = 15

# How long a front end or server may take to listen.
READY_S = 20.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_switches(pid: int) -> dict[int, tuple[str, int]]:
    """Each live thread of a process: its name and its voluntary + nonvoluntary context
    switches."""
    threads = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        switches = int(fields["voluntary_ctxt_switches"]) + int(
            fields["nonvoluntary_ctxt_switches"]
        )
        threads[int(task.name)] = (fields["Name"].strip(), switches)
    return threads


def ctx_switches(pid: int) -> int:
    """Voluntary + nonvoluntary context switches of a process, summed over its live threads."""
    return sum(n for _, n in thread_switches(pid).values())


def stop(p: subprocess.Popen[bytes]) -> None:
    terminate(p, 10.0)


def memcached(port: int, log: Path) -> subprocess.Popen[bytes]:
    """A memcached server on loopback, listening; memcaslap's few connections need no -c."""
    p = spawn(memcached_command(LOOPBACK, port, connections=None), log)
    wait_for_port(LOOPBACK, port, READY_S, p)
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
    p = spawn(
        [binary, "-c", str(conf), "-s", str(port + 1), "-o", str(work / "nutcracker.log")],
        work / "nutcracker.out",
    )
    wait_for_port(LOOPBACK, port, READY_S, p)
    return p


def middleware(
    port: int,
    servers: list[int],
    design: str,
    workers: int,
    work: Path,
    jar: Path,
    max_batch: int = 1,
    jvm: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """The middleware in `design` with `workers` (2018: workers; 2016: read threads per
    server); `jvm`: the JVM's options."""
    flags = command_flags(
        [f"{LOOPBACK}:{p}" for p in servers],
        workers=workers,
        stats_dir=str(work / "mw-stats"),
        design=design,
        replication=1,
        max_batch=max_batch if max_batch > 1 else None,
    )
    p = spawn(middleware_command(jar, LOOPBACK, port, flags, jvm), work / "middleware.log")
    wait_for_port(LOOPBACK, port, READY_S, p, name="the middleware")
    return p


def warm_up(endpoints: list[int], cfg: Path, seconds: int, threads: int, conc: int) -> None:
    """The unmeasured load before a measurement, as two memcaslap runs: the clients' first
    disconnect and reconnect take paths the JIT has not seen (a read of EOF, a key
    deregistered, a queue poll that times out), and it deoptimises and compiles them again.
    That happens here, not in the measurement's first seconds."""
    if seconds <= 0:
        return
    first = max(1, seconds - seconds // 3)
    run_memaslap(endpoints, cfg, first, threads, conc)
    if seconds > first:
        run_memaslap(endpoints, cfg, seconds - first, threads, conc)


def run_target(
    target: str,
    n_servers: int,
    workload: str,
    ports: list[int],
    cfg: Path,
    work: Path,
    args: argparse.Namespace,
) -> Result:
    """One measurement of `target` on fresh memcached servers."""
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
            workers = args.read_workers if design == "2016" else args.workers
            batch = int(target.split("-")[1]) if target.startswith("batch-") else 1
            front = middleware(
                BASE_PORT + 60, ports, design, workers, work, args.jar, batch,
                tuple(args.jvm.split()),
            )  # fmt: skip
            endpoints = [BASE_PORT + 60]
        warm_up(endpoints, cfg, args.warmup, args.threads, args.concurrency)
        cpu0 = cpu_seconds(front.pid) if front else 0.0
        cs0 = ctx_switches(front.pid) if front else 0
        tps, avg, std, misses = run_memaslap(
            endpoints, cfg, args.seconds, args.threads, args.concurrency
        )
        cpu = cpu_seconds(front.pid) - cpu0 if front else None
        cs = ctx_switches(front.pid) - cs0 if front else None
    finally:
        if front is not None:
            stop(front)
        for p in procs:
            stop(p)
    ops = tps * args.seconds
    per_op = cpu * 1e6 / ops if cpu is not None else None
    cs_per_op = cs / ops if cs is not None else None
    return Result(n_servers, workload, target, tps, avg, std, misses, per_op, cs_per_op)


def median(runs: list[Result], n_servers: int, workload: str, target: str) -> Result:
    """Each figure's median over the rounds of one target and load."""
    rs = [r for r in runs if (r.servers, r.workload, r.target) == (n_servers, workload, target)]

    def mid(values: list[float]) -> float:
        return statistics.median(values)

    cpu = [r.frontend_cpu_us_per_op for r in rs if r.frontend_cpu_us_per_op is not None]
    cs = [r.frontend_ctx_switches_per_op for r in rs if r.frontend_ctx_switches_per_op is not None]
    return Result(
        n_servers,
        workload,
        target,
        mid([r.ops_per_s for r in rs]),
        mid([r.latency_avg_us for r in rs]),
        mid([r.latency_std_us for r in rs]),
        int(mid([r.get_misses for r in rs])),
        mid(cpu) if cpu else None,
        mid(cs) if cs else None,
    )


def table(results: list[Result], targets: list[str]) -> str:
    """Throughput, its ratios to twemproxy and direct, CPU and context switches per operation."""

    def fmt(v: float | None, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    lines = [
        f"{'servers':>7} {'load':5} {'target':15} {'ops/s':>9} {'/twem':>6} {'/direct':>8}"
        f" {'cpu us/op':>9} {'cpu/twem':>8} {'cs/op':>6} {'cs/twem':>7}"
    ]
    for n_servers in (1, 3):
        for workload in ("read", "write"):
            by = {r.target: r for r in results if (r.servers, r.workload) == (n_servers, workload)}
            d, t = by.get("direct"), by.get("twemproxy")
            for target in targets:
                r = by[target]
                cpu, cs = r.frontend_cpu_us_per_op, r.frontend_ctx_switches_per_op
                t_cpu = t.frontend_cpu_us_per_op if t else None
                t_cs = t.frontend_ctx_switches_per_op if t else None
                lines.append(
                    f"{n_servers:>7} {workload:5} {target:15} {r.ops_per_s:>9.0f}"
                    f" {fmt(r.ops_per_s / t.ops_per_s if t else None, '>6.2f')}"
                    f" {fmt(r.ops_per_s / d.ops_per_s if d else None, '>8.2f')}"
                    f" {fmt(cpu, '>9.1f')}"
                    f" {fmt(cpu / t_cpu if cpu is not None and t_cpu else None, '>8.2f')}"
                    f" {fmt(cs, '>6.2f')}"
                    f" {fmt(cs / t_cs if cs is not None and t_cs else None, '>7.2f')}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("BENCH_SECONDS", "8")))
    ap.add_argument(
        "--warmup",
        type=int,
        default=WARMUP_S,
        help=f"unmeasured seconds of the same load first (default {WARMUP_S}: the JIT compiles "
        "the middleware's hot code for about 10 s)",
    )
    ap.add_argument("--threads", type=int, default=2, help="memcaslap threads")
    ap.add_argument("--concurrency", type=int, default=32, help="memcaslap connections")
    ap.add_argument(
        "--workers", type=int, default=DEFAULT_WORKERS, help="middleware workers (design 2018)"
    )
    ap.add_argument(
        "--read-workers",
        "--read-threads",
        type=int,
        default=DEFAULT_WORKERS,
        help="middleware workers of design 2016: read threads per server",
    )
    ap.add_argument(
        "--targets",
        default=",".join(TARGETS),
        help=f"comma-separated targets, from {','.join(TARGETS)} (default: all)",
    )
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds of all targets")
    ap.add_argument("--jar", type=Path, default=MIDDLEWARE_JAR)
    ap.add_argument(
        "--jvm",
        default="",
        help="the middleware's JVM options, space-separated (default: none, the JVM's own)",
    )
    ap.add_argument("--out", type=Path, help="also write the results as JSON")
    args = ap.parse_args(argv)

    targets = [t for t in args.targets.split(",") if t]
    unknown = sorted(set(targets) - set(TARGETS))
    if unknown or not targets:
        ap.error(f"--targets: unknown {unknown}; choose from {','.join(TARGETS)}")
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    runs: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-mw-") as tmp:
        work = Path(tmp)
        for n_servers in (1, 3):
            for workload in ("read", "write"):
                cfg = work / f"{workload}.cfg"
                memaslap_config(cfg, workload)
                ports = [BASE_PORT + i for i in range(n_servers)]
                for _ in range(args.rounds):
                    for target in targets:
                        r = run_target(target, n_servers, workload, ports, cfg, work, args)
                        runs.append(r)
                        print(
                            f"{n_servers} server(s) {workload:5s} {target:15s} "
                            f"{r.ops_per_s:10.0f} ops/s  avg {r.latency_avg_us:7.0f} us  "
                            f"std {r.latency_std_us:8.0f} us  misses {r.get_misses}"
                            + (
                                f"  front-end CPU {r.frontend_cpu_us_per_op:.1f} us/op, "
                                f"{r.frontend_ctx_switches_per_op:.2f} cs/op"
                                if r.frontend_cpu_us_per_op is not None
                                and r.frontend_ctx_switches_per_op is not None
                                else ""
                            ),
                            flush=True,
                        )
    results = [median(runs, n, w, t) for n in (1, 3) for w in ("read", "write") for t in targets]
    print()
    print(table(results, targets))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {"rounds": [asdict(r) for r in runs], "median": [asdict(r) for r in results]},
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
