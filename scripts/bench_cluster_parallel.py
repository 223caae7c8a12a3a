"""Wall time of the cluster-smoke grid with its two studies measured at once, against the same
grid measured one study after the other, on six fresh ssh machines in network namespaces (the
machines of tests/testbed/test_cluster_measure.py). As root:

    .venv/bin/python scripts/bench_cluster_parallel.py [--repeat N]

Each measurement runs `mwlab measure --profile cluster-smoke` into a fresh results folder:
once with both inventories, then with each study's alone. Prints one line per measurement and
the ratio of the serial sum to the parallel time.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.testbed import sshd  # noqa: E402
from tests.testbed.test_cluster_measure import STUDIES, _env, _split  # noqa: E402


def measure(results: Path, inventories: dict[str, Path]) -> float:
    args = [sys.executable, "-m", "mwlab", "measure", "--profile", "cluster-smoke",
            "--results", str(results)]  # fmt: skip
    args += [f"--inventory={s}={f}" for s, f in inventories.items()]
    started = time.monotonic()
    done = subprocess.run(args, cwd=ROOT, env=_env(), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"measurement into {results} failed:\n{done.stderr[-3000:]}")
    return time.monotonic() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="measurements of each kind")
    repeat = ap.parse_args().repeat
    roles = [r for study in STUDIES.values() for r in study]
    with tempfile.TemporaryDirectory(prefix="mwlab-cluster-bench-") as tmp:
        base = Path(tmp)
        with sshd.ssh_machines(base, f"mwb{secrets.token_hex(2)}", roles, trusted=False) as (
            inventory,
            _remote,
        ):
            files = _split(inventory, base)
            parallel, serial = [], []
            for i in range(repeat):
                parallel.append(measure(base / f"parallel-{i}", files))
                print(f"both studies at once: {parallel[-1]:.1f} s", flush=True)
                alone = {s: measure(base / f"{s}-{i}", {s: f}) for s, f in files.items()}
                serial.append(sum(alone.values()))
                print("one after the other: " + " + ".join(
                    f"{s} {t:.1f} s" for s, t in alone.items()) + f" = {serial[-1]:.1f} s",
                    flush=True)  # fmt: skip
    p, s = statistics.median(parallel), statistics.median(serial)
    print(f"median: at once {p:.1f} s, one after the other {s:.1f} s, ratio {s / p:.2f}")


if __name__ == "__main__":
    main()
