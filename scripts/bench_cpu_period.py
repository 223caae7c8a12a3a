"""memcached under a CPU quota at several CFS periods: throughput and response time.

One single-threaded memcached on loopback runs in a cgroup of its own with a quota of
BUDGET cores; the built-in load generator (outside the cgroup) reads 4096-byte values from
it. For each period the quota is BUDGET × period (the kernel's smallest quota is 1 ms, so a
period too short for the budget is skipped), and a run without a quota is the reference.
Each row is the median of several rounds over every setting. Prints a Markdown table:
throughput (also relative to the unthrottled run), p50, p99 and p99.9 of the client's
response time, the cores memcached used and the share of periods that throttled.
Needs root and cgroups. Ports 26100-26109.

    python scripts/bench_cpu_period.py --budget 0.5 --periods 1,2,5,10,20 --seconds 8
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import cfs
from testbed import cpubudget
from testbed.services.memcached import memcached_command, wait_for_memcached
from testbed.services.ports import LOOPBACK

ROOT = Path(__file__).resolve().parent.parent
PORT = 26100
KEYS = 2000
VALUE = 4096


def loadgen(jar: Path, args: list[str], out: Path, timeout: float) -> None:
    cmd = ["java", "-jar", str(jar), "-s", "127.0.0.1", "-p", str(PORT), "-P", "memcache_text"]
    cmd += [*args, "--json-out-file", str(out)]
    subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)


def set_period(cg: cpubudget.HostCgroup, budget: float | None, period_us: int) -> None:
    d = cg.hierarchy.cpu / cg.relative
    if cg.hierarchy.version == 2:
        quota = "max" if budget is None else str(round(budget * period_us))
        (d / "cpu.max").write_text(f"{quota} {period_us}")
        return
    (d / "cpu.cfs_quota_us").write_text("-1")
    (d / "cpu.cfs_period_us").write_text(str(period_us))
    if budget is not None:
        (d / "cpu.cfs_quota_us").write_text(str(round(budget * period_us)))


def measure(jar: Path, cg: cpubudget.HostCgroup, seconds: int, clients: int, tmp: Path) -> dict:
    before = cg.sample()
    out = tmp / f"r{time.monotonic_ns()}.json"
    loadgen(
        jar,
        ["-t", "2", "-c", str(clients), f"--test-time={seconds}", "--ratio=0:1",
         f"--data-size={VALUE}", f"--key-maximum={KEYS}", "--key-minimum=1", "--hide-histogram"],
        out,
        seconds + 120,
    )  # fmt: skip
    after = cg.sample()
    gets = json.loads(out.read_text())["ALL STATS"]["Gets"]
    pct = {k: float(v) for k, v in gets["Percentile Latencies"].items() if k.startswith("p")}
    periods = after.nr_periods - before.nr_periods
    return {
        "ops": float(gets["Ops/sec"]),
        "p50_ms": pct["p50.00"],
        "p99_ms": pct["p99.00"],
        "p999_ms": pct["p99.90"],
        "cores": (after.cpu_s - before.cpu_s) / seconds,
        "throttled": (after.nr_throttled - before.nr_throttled) / periods if periods else 0.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=0.5, help="cores of memcached's quota")
    ap.add_argument("--periods", default="1,2,5,10,20", help="CFS periods, ms")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3, help="each row is the median of these")
    ap.add_argument("--clients", type=int, default=8, help="connections per thread (2 threads)")
    ap.add_argument("--jar", type=Path, default=ROOT / "build" / "loadgen.jar")
    args = ap.parse_args()
    hierarchy = cpubudget.detect(cpubudget.root_from_env())
    if isinstance(hierarchy, str):
        sys.exit(f"no cgroups: {hierarchy}")
    cgroups = cpubudget.RunCgroups(hierarchy, f"bench{os.getpid()}")
    cg = cgroups.add("memcached", "server", None)
    cmd = memcached_command(LOOPBACK, PORT, memory_mib=256, disable_udp=False, connections=None)
    server = subprocess.Popen(cg.wrap(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows: list[tuple[str, dict | None]] = []
    settings: list[tuple[str, float | None, int]] = [("none", None, 100_000)]
    for ms in (float(p) for p in args.periods.split(",")):
        settings.append((f"{ms:g} ms", args.budget, round(ms * 1000)))
    try:
        wait_for_memcached(LOOPBACK, PORT, 60, server)
        with tempfile.TemporaryDirectory() as t:
            tmp = Path(t)
            loadgen(
                args.jar,
                ["-c", "1", "-t", "1", "--ratio=1:0", "--key-pattern=S:S", "--requests=allkeys",
                 f"--data-size={VALUE}", "--key-minimum=1", f"--key-maximum={KEYS}"],
                tmp / "populate.json",
                180,
            )  # fmt: skip
            # Rounds over every setting, so a drift in the machine's load spreads over all.
            runs: dict[str, list[dict]] = {}
            for _ in range(args.rounds):
                for name, budget, period in settings:
                    if budget is not None and budget * period < cfs.MIN_QUOTA_US:
                        continue
                    set_period(cg, budget, period)
                    r = measure(args.jar, cg, args.seconds, args.clients, tmp)
                    runs.setdefault(name, []).append(r)
            for name, _, _ in settings:
                got = runs.get(name)
                rows.append((name, {k: median(r[k] for r in got) for k in got[0]} if got else None))
    finally:
        server.terminate()
        server.wait(30)
        problems = cgroups.teardown()
        if problems:
            print("; ".join(problems), file=sys.stderr)
    base = rows[0][1]["ops"]
    print(
        f"memcached -t 1, quota {args.budget} core, 2×{args.clients} connections, GET {VALUE} B,"
        f" median of {args.rounds} × {args.seconds} s, {os.cpu_count()} cores"
    )
    print("| period | ops/s | of unthrottled | p50 ms | p99 ms | p99.9 ms | cores | throttled |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        if r is None:
            print(f"| {name} | quota below 1 ms: not possible | | | | | | |")
            continue
        print(
            f"| {name} | {r['ops']:.0f} | {r['ops'] / base:.2f} | {r['p50_ms']:.2f} | "
            f"{r['p99_ms']:.2f} | {r['p999_ms']:.2f} | {r['cores']:.2f} | {r['throttled']:.2f} |"
        )
    print(json.dumps(rows), file=sys.stderr)


if __name__ == "__main__":
    main()
