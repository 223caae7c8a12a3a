"""This machine's CPU speed through a run: a fixed piece of work, timed in CPU time, twice a
second on every CPU.

A CPU budget is CPU time, and the scale model reads CPU time as work. On a virtual machine
the same CPU second does not always do the same work: a hyperthread sibling or a cache shared
with other tenants slows a vCPU without the hypervisor counting any steal. Measured on the
2-core test machine (2026-11-27), idle: a single-threaded loop did 5.4 to 10.8 units of work
per CPU second in 0.5 s pieces over 40 s (median 5.9), with 0.3 % steal. In runs of 10
clients straight to PostgreSQL under a 0.4-core budget, the database used its budget
throughout (0.39-0.40 cores in every 2 s) while its operations per CPU second went from 1,730
to 3,100 and back, following this probe's speed (correlation 0.62 over 2 s bins).

So every run on emulated hosts runs one probe per CPU of the machine, each pinned to its CPU,
from the budgets' start to teardown. Each records (epoch s, CPU µs of the piece) to
`<run>/machine/speed.cpu<N>.tsv`; `summary` gives run.json's `cpu.machine_speed` over the
clients' window. A piece is about 3 ms here, so a probe takes under 1 % of a core.

Run as `python -m testbed.speedprobe OUT --cpu N [--parent PID]`: it stops on SIGTERM or
SIGINT, or when its parent is gone.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.machinespeed import BIN_S
from common.paths import REPO

INTERVAL_S = 0.5
PIECE_ITERATIONS = 12_000  # about 3 ms of CPU on the test machine
DIR = "machine"


def _piece() -> int:
    n = 0
    for i in range(PIECE_ITERATIONS):
        n += i * i % 7
    return n


def probe(out: Path, cpu: int, parent: int, interval_s: float = INTERVAL_S) -> None:
    """Records pieces on `cpu` into `out` until told to stop, or until `parent` is no longer
    its parent (it exited, perhaps before this process started)."""
    stop = False

    def _stop(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    # Set explicitly: a probe started from a background job inherits SIGINT ignored.
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    os.sched_setaffinity(0, {cpu})
    with out.open("w") as f:
        f.write("epoch_s\tcpu_us\n")
        while not stop and os.getppid() == parent:
            t = time.time()
            c0 = time.thread_time_ns()
            _piece()
            f.write(f"{t:.3f}\t{(time.thread_time_ns() - c0) / 1e3:.1f}\n")
            f.flush()
            time.sleep(max(0.0, interval_s - (time.time() - t)))


def start(run_dir: Path) -> list[subprocess.Popen[bytes]]:
    """One probe per CPU this process may run on, writing under `run_dir`/machine."""
    d = run_dir / DIR
    d.mkdir(parents=True, exist_ok=True)
    root = REPO
    procs = []
    for cpu in sorted(os.sched_getaffinity(0)):
        command = [sys.executable, "-m", "testbed.speedprobe", str(d / f"speed.cpu{cpu}.tsv"),
                   "--cpu", str(cpu), "--parent", str(os.getpid())]  # fmt: skip
        with (d / f"speed.cpu{cpu}.stderr.log").open("wb") as err:
            procs.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=err, cwd=root))
    return procs


def stop(procs: Sequence[subprocess.Popen[bytes]], timeout_s: float = 10.0) -> list[str]:
    """Stops the probes; the problems met (a probe that had already failed, one killed)."""
    problems = []
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            code = p.wait(timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            problems.append(f"speed probe {p.pid} did not stop on SIGTERM: killed")
            continue
        if code not in (0, -signal.SIGTERM):
            problems.append(f"speed probe {p.pid} exited with {code}")
    return problems


def read(run_dir: Path) -> list[tuple[float, float]]:
    """Every piece of every CPU's file: (epoch s, CPU µs)."""
    rows = []
    for path in sorted((run_dir / DIR).glob("speed.cpu*.tsv")):
        for line in path.read_text().splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) == 2:
                rows.append((float(parts[0]), float(parts[1])))
    return rows


def summary(pieces: Sequence[tuple[float, float]], t0: float, t1: float) -> dict[str, Any]:
    """Over [t0, t1]: `pieces`, `piece_us_median` (CPU µs per piece: the machine's speed,
    comparable between runs), and the speed (work per CPU µs) in bins of BIN_S relative to
    its median: `spread` (p90 - p10), `slowest` and `fastest` bin; None without two bins."""
    inside = [(t, us) for t, us in pieces if t0 <= t <= t1 and us > 0]
    out: dict[str, Any] = {"pieces": len(inside), "piece_us_median": None, "bins": 0,
                           "spread": None, "slowest": None, "fastest": None}  # fmt: skip
    if not inside:
        return out
    out["piece_us_median"] = _quantile([us for _, us in inside], 0.5)
    bins: dict[int, list[float]] = {}
    for t, us in inside:
        bins.setdefault(int((t - t0) // BIN_S), []).append(1 / us)
    speeds = [sum(v) / len(v) for v in bins.values()]
    out["bins"] = len(speeds)
    if len(speeds) < 2:
        return out
    mid = _quantile(speeds, 0.5)
    out["spread"] = (_quantile(speeds, 0.9) - _quantile(speeds, 0.1)) / mid
    out["slowest"] = min(speeds) / mid
    out["fastest"] = max(speeds) / mid
    return out


def _quantile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.speedprobe", description=__doc__)
    parser.add_argument("out", type=Path, help="file to write (TSV: epoch_s, cpu_us)")
    parser.add_argument("--cpu", type=int, required=True, help="the CPU to pin to")
    parser.add_argument("--interval", type=float, default=INTERVAL_S, help="seconds")
    parser.add_argument(
        "--parent",
        type=int,
        help="stop when this process is no longer the parent (default: the parent at start)",
    )
    args = parser.parse_args(argv)
    if args.interval <= 0:
        parser.error(f"--interval must be positive, got {args.interval}")
    if args.cpu not in os.sched_getaffinity(0):
        parser.error(f"--cpu {args.cpu}: not one of this process' CPUs")
    probe(args.out, args.cpu, os.getppid() if args.parent is None else args.parent, args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
