"""Where a front end's CPU goes per operation: a perf profile under memcaslap load.

Runs one front end (the middleware in the study's design or with --max-batch N, or twemproxy)
before memcached servers on loopback, under the same memcaslap load as `make bench-middleware`
(4096-byte values, reads or writes). After an unmeasured warm-up it samples the front end with
`perf record` for --seconds while `perf stat` counts its task clock and context switches, then
prints:

- CPU µs and context switches per operation, and the context switches by thread group (from
  /proc: which threads sleep and wake per request);
- the share of samples and µs per operation by where the code runs: the kernel, the JIT's code
  (the JVM writes its symbol map at exit), the JVM itself (GC, compiler, runtime), libc and the
  rest;
- the hottest symbols, with their µs per operation.

The profile is flat (self time per symbol): what a change removes shows up as fewer µs where it
was. Ports 26600-26651 (servers from 26600, the front end on 26650, twemproxy's
statistics on 26651).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_middleware import (
    WARMUP_S,
    memaslap_config,
    memcached,
    middleware,
    run_memaslap,
    stop,
    thread_switches,
    twemproxy,
    warm_up,
)

from testbed.point import DEFAULT_WORKERS
from testbed.services.middleware import MIDDLEWARE_JAR

BASE_PORT = 26600
# The JIT's symbols for perf (/tmp/perf-<pid>.map, written when the JVM exits), and frame
# pointers so that the samples land in the right compiled method.
PERF_MAP_JVM = (
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DumpPerfMapAtExit",
    "-XX:+PreserveFramePointer",
)
STAT_LINE = re.compile(r"^\s*([\d.,]+)\s+(?:msec\s+)?(task-clock|context-switches|cpu-migrations)")


class ProfileError(RuntimeError):
    """A tool is missing or its output cannot be read."""


@dataclass
class Sample:
    """One line of the flat profile: a thread's time in one symbol."""

    share: float
    samples: int
    thread: str
    dso: str
    kernel: bool
    symbol: str


@dataclass
class Symbol:
    where: str
    dso: str
    name: str
    share: float
    us_per_op: float


@dataclass
class Profile:
    target: str
    servers: int
    workload: str
    ops_per_s: float
    seconds: int
    cpu_us_per_op: float
    ctx_switches_per_op: float
    migrations_per_op: float
    samples: int
    by_place: dict[str, float] = field(default_factory=dict)
    by_thread: dict[str, float] = field(default_factory=dict)
    top: list[Symbol] = field(default_factory=list)
    switches_by_thread: dict[str, float] = field(default_factory=dict)


def place(dso: str, kernel: bool) -> str:
    """Where a sample's code runs, from its shared object."""
    if kernel or dso.startswith("[kernel"):
        return "kernel"
    if dso.startswith("[JIT]") or (dso.startswith("perf-") and dso.endswith(".map")):
        return "JIT code"
    if dso == "libjvm.so":
        return "JVM (GC, compiler, runtime)"
    if dso.startswith("libc") or dso.startswith("libpthread"):
        return "libc"
    if dso in ("[unknown]", "[vdso]"):
        return "other"
    return "JDK natives and other libraries" if dso.endswith(".so") else "other"


def parse_report(text: str) -> list[Sample]:
    """The lines of `perf report -t ';' --sort comm,dso,sym`: share %, samples, thread,
    shared object, then [k] or [.] and the symbol (which may hold ';', as Java's do)."""
    rows = []
    for line in text.splitlines():
        parts = line.split(";", 4)
        if line.startswith("#") or len(parts) != 5 or not parts[0].strip().endswith("%"):
            continue
        share, samples, thread, dso, sym = (x.strip() for x in parts)
        rows.append(
            Sample(
                float(share[:-1]) / 100, int(samples), thread, dso, sym.startswith("[k]"), sym[4:]
            )
        )
    return rows


def thread_group(name: str) -> str:
    """A thread's group: numbered threads of one kind (worker-3, GC Thread#1) together."""
    return re.sub(r"(-|#)\d+$", r"\1*", name)


def switches_by_group(
    before: dict[int, tuple[str, int]], after: dict[int, tuple[str, int]], ops: float
) -> dict[str, float]:
    """Context switches per operation of each thread group between two `thread_switches`
    snapshots, most first; a thread started in between counts from zero, one that ended is
    lost."""
    groups: dict[str, float] = defaultdict(float)
    for tid, (name, n) in after.items():
        groups[thread_group(name)] += (n - before.get(tid, (name, 0))[1]) / ops
    return dict(sorted(((g, v) for g, v in groups.items() if v > 0), key=lambda kv: -kv[1]))


def parse_stat(text: str) -> dict[str, float]:
    """task-clock (ms), context-switches and cpu-migrations from `perf stat`'s output."""
    counts: dict[str, float] = {}
    for line in text.splitlines():
        m = STAT_LINE.match(line)
        if m:
            counts[m.group(2)] = float(m.group(1).replace(",", ""))
    missing = {"task-clock", "context-switches", "cpu-migrations"} - counts.keys()
    if missing:
        raise ProfileError(f"perf stat did not count {sorted(missing)}:\n{text}")
    return counts


def front_end(
    target: str, ports: list[int], work: Path, args: argparse.Namespace
) -> tuple[subprocess.Popen[bytes], int]:
    """The front end and its port."""
    port = BASE_PORT + 50
    if target == "twemproxy":
        return twemproxy(port, ports, work), port
    batch = int(target.split("-")[1]) if target.startswith("batch-") else 1
    return (
        middleware(port, ports, "2018", args.workers, work, args.jar, batch, jvm=PERF_MAP_JVM),
        port,
    )


def profile(target: str, args: argparse.Namespace, work: Path) -> Profile:
    ports = [BASE_PORT + i for i in range(args.servers)]
    cfg = work / f"{args.workload}.cfg"
    memaslap_config(cfg, args.workload)
    procs = [memcached(p, work / f"mc{p}.log") for p in ports]
    data = (args.perf_data or work) / f"{target}-{args.servers}-{args.workload}.perf"
    try:
        front, port = front_end(target, ports, work, args)
        try:
            warm_up([port], cfg, args.warmup, args.threads, args.concurrency)
            pid, window = str(front.pid), ["--", "sleep", str(args.seconds)]
            switches_before = thread_switches(front.pid)
            sampling = ["-e", "cpu-clock", "-F", str(args.frequency), "-p", pid, "-o", str(data)]
            record = subprocess.Popen(
                ["perf", "record", *sampling, *window],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            counting = ["-e", "task-clock,context-switches,cpu-migrations", "-p", pid]
            stat = subprocess.Popen(
                ["perf", "stat", *counting, *window],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            tps, _, _, _ = run_memaslap([port], cfg, args.seconds, args.threads, args.concurrency)
            switches_after = thread_switches(front.pid)
            _, stat_err = stat.communicate(timeout=60)
            _, record_err = record.communicate(timeout=60)
            if record.returncode != 0:
                raise ProfileError(f"perf record failed: {record_err.decode(errors='replace')}")
        finally:
            # The JVM writes its perf map as it exits.
            stop(front)
    finally:
        for p in procs:
            stop(p)
    flat = ["--stdio", "--no-children", "-n", "--sort", "comm,dso,sym", "-t", ";"]
    report = subprocess.run(
        ["perf", "report", "-i", str(data), *flat],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if report.returncode != 0:
        raise ProfileError(f"perf report failed: {report.stderr}")
    rows = parse_report(report.stdout)
    if not rows:
        raise ProfileError("perf recorded no samples of the front end")
    counts = parse_stat(stat_err)
    samples = sum(r.samples for r in rows)
    ops = tps * args.seconds
    cpu_us = counts["task-clock"] * 1e3 / ops
    total = sum(r.share for r in rows)
    by_place: dict[str, float] = defaultdict(float)
    by_thread: dict[str, float] = defaultdict(float)
    by_symbol: dict[tuple[str, str, bool], float] = defaultdict(float)
    for r in rows:
        by_place[place(r.dso, r.kernel)] += r.share / total
        by_thread[thread_group(r.thread)] += r.share / total
        by_symbol[(r.dso, r.symbol, r.kernel)] += r.share / total
    hottest = sorted(by_symbol.items(), key=lambda kv: -kv[1])[: args.top]
    top = [
        Symbol(place(dso, kernel), dso, sym, share, share * cpu_us)
        for (dso, sym, kernel), share in hottest
    ]
    return Profile(
        target,
        args.servers,
        args.workload,
        tps,
        args.seconds,
        cpu_us,
        counts["context-switches"] / ops,
        counts["cpu-migrations"] / ops,
        samples,
        dict(sorted(by_place.items(), key=lambda kv: -kv[1])),
        dict(sorted(by_thread.items(), key=lambda kv: -kv[1])),
        top,
        switches_by_group(switches_before, switches_after, ops),
    )


def show(p: Profile) -> str:
    lines = [
        f"{p.target}: {p.servers} server(s), {p.workload}, {p.ops_per_s:.0f} ops/s over "
        f"{p.seconds} s, {p.samples} samples",
        f"  CPU {p.cpu_us_per_op:.2f} us/op, context switches {p.ctx_switches_per_op:.3f}/op, "
        f"migrations {p.migrations_per_op:.3f}/op",
        f"  {'where':34} {'share':>6} {'us/op':>6}",
    ]
    for where, share in p.by_place.items():
        lines.append(f"  {where:34} {share:>6.1%} {share * p.cpu_us_per_op:>6.2f}")
    lines.append(f"  {'thread':34} {'share':>6} {'us/op':>6}")
    for thread, share in p.by_thread.items():
        if share >= 0.005:
            lines.append(f"  {thread:34} {share:>6.1%} {share * p.cpu_us_per_op:>6.2f}")
    lines.append(f"  {'context switches by thread':34} {'per op':>13}")
    for thread, per_op in p.switches_by_thread.items():
        if per_op >= 0.005:
            lines.append(f"  {thread:34} {per_op:>13.3f}")
    lines.append(f"  {'hottest symbols':34} {'share':>6} {'us/op':>6}")
    for s in p.top:
        name = s.name if len(s.name) <= 90 else s.name[:87] + "..."
        lines.append(f"  {s.where[:12]:12} {s.share:>6.1%} {s.us_per_op:>6.2f}  {name}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--targets",
        default="middleware,twemproxy",
        help="comma-separated: middleware (batch 1), batch-N, twemproxy",
    )
    ap.add_argument("--servers", type=int, default=1, choices=(1, 3))
    ap.add_argument("--workload", default="read", choices=("read", "write"))
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument(
        "--warmup", type=int, default=WARMUP_S, help="unmeasured seconds of the load first"
    )
    ap.add_argument("--threads", type=int, default=2, help="memcaslap threads")
    ap.add_argument("--concurrency", type=int, default=32, help="memcaslap connections")
    ap.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="middleware workers")
    ap.add_argument("--frequency", type=int, default=999, help="samples per second")
    ap.add_argument("--top", type=int, default=25, help="symbols to list")
    ap.add_argument("--jar", type=Path, default=MIDDLEWARE_JAR)
    ap.add_argument("--out", type=Path, help="also write the profiles as JSON")
    ap.add_argument("--perf-data", type=Path, help="keep the recordings here, for perf report -i")
    args = ap.parse_args(argv)

    targets = [t for t in args.targets.split(",") if t]
    bad = [t for t in targets if not re.fullmatch(r"middleware|twemproxy|batch-\d+", t)]
    if bad or not targets:
        ap.error(f"--targets: unknown {bad}; use middleware, batch-N or twemproxy")
    for tool in ("perf", "memcaslap", "memcached"):
        if shutil.which(tool) is None:
            ap.error(f"{tool} is not installed (Debian: linux-perf, libmemcached-tools, memcached)")
    if args.perf_data:
        args.perf_data.mkdir(parents=True, exist_ok=True)
    profiles = []
    with tempfile.TemporaryDirectory(prefix="profile-mw-") as tmp:
        for target in targets:
            p = profile(target, args, Path(tmp))
            profiles.append(p)
            print(show(p), flush=True)
            print()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps([asdict(p) for p in profiles], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
