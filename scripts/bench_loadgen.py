"""The built-in load generator's throughput beside memcaslap's, against the same memcached.

Both generators drive one single-threaded memcached on loopback with the same number of
connections and threads, write-only (so neither depends on the other's key set), with the
2018 study's 4096-byte values. Prints each result and
the ratio loadgen / memcaslap, which must be at least 1 for the generator not to be the
bottleneck of the study. Ports 21800-21809.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_middleware import memcached, run_memaslap, stop

ROOT = Path(__file__).resolve().parent.parent
PORT = 21800


def memaslap_write_config(path: Path, value_bytes: int) -> None:
    path.write_text(f"key\n64 64 1\nvalue\n{value_bytes} {value_bytes} 1\ncmd\n0 1.0\n1 0.0\n")


def run_loadgen(
    jar: Path, seconds: int, threads: int, connections: int, value_bytes: int, out: Path
) -> tuple[float, float]:
    cmd = [
        "java", "-jar", str(jar), "-s", "127.0.0.1", "-p", str(PORT), "-P", "memcache_text",
        "-t", str(threads), "-c", str(connections // threads), "--test-time", str(seconds),
        "--ratio", "1:0", "--data-size", str(value_bytes), "--key-maximum", "10000",
        "--json-out-file", str(out),
    ]  # fmt: skip
    subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120, check=True)
    sets = json.loads(out.read_text())["ALL STATS"]["Sets"]
    return float(sets["Ops/sec"]), float(sets["Average Latency"]) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("BENCH_SECONDS", "8")))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jar", type=Path, default=ROOT / "build" / "loadgen.jar")
    args = ap.parse_args(argv)
    print(f"{'value':>6} {'rep':>3} {'memcaslap ops/s':>16} {'loadgen ops/s':>14} {'ratio':>6}")
    ratios: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-loadgen-") as tmp:
        work = Path(tmp)
        for value in (4096,):
            cfg = work / f"write{value}.cfg"
            memaslap_write_config(cfg, value)
            for rep in range(1, args.repeats + 1):
                # Alternate the order so neither generator always meets a warmer server.
                results = {}
                for tool in ("memcaslap", "loadgen") if rep % 2 else ("loadgen", "memcaslap"):
                    server = memcached(PORT, work / f"mc-{tool}.log")
                    try:
                        if tool == "memcaslap":
                            results[tool] = run_memaslap(
                                [PORT], cfg, args.seconds, args.threads, args.connections
                            )[0]
                        else:
                            results[tool] = run_loadgen(
                                args.jar, args.seconds, args.threads, args.connections, value,
                                work / "loadgen.json",
                            )[0]  # fmt: skip
                    finally:
                        stop(server)
                ratio = results["loadgen"] / results["memcaslap"]
                ratios.setdefault(value, []).append(ratio)
                print(
                    f"{value:>6} {rep:>3} {results['memcaslap']:>16.0f} "
                    f"{results['loadgen']:>14.0f} {ratio:>6.2f}",
                    flush=True,
                )
    for value, values in ratios.items():
        print(
            f"{value}-byte writes: loadgen/memcaslap median {sorted(values)[len(values) // 2]:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
