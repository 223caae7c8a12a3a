"""The middleware's per-request steps against their budgets, with JMH.

Runs the JMH benchmarks named in the budgets file (decode, route, record, and one whole request
through a running middleware) with the GC profiler, and prints for each its time per operation
and its allocation per operation beside the budget. Exits 1 when any benchmark is over a budget,
2 when a budgeted benchmark gave no result.

    python scripts/bench_budgets.py [--budgets middleware/jmh/budgets.yaml] [--out results.json]
    python scripts/bench_budgets.py --results jmh.json   # checks a JMH run's JSON (-rf json)

A budget is a ceiling on this machine's kind, not a target: measure on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BUDGETS = ROOT / "middleware" / "jmh" / "budgets.yaml"
JAR = ROOT / "build" / "benchmarks.jar"
# JMH 1.37 names the GC profiler's metrics "gc.…"; earlier versions prefixed a middle dot.
ALLOC = "gc.alloc.rate.norm"
# Less than an object's smallest size (8 B): a background thread's allocation spread over the
# operations, not an allocation of the step.
BYTES_NOISE = 0.5


@dataclass(frozen=True)
class Budget:
    benchmark: str  # Class.method, as in the budgets file
    ns: float
    bytes: float
    step: str


@dataclass(frozen=True)
class Outcome:
    benchmark: str
    params: str
    step: str
    ns: float
    ns_error: float
    bytes: float | None
    budget_ns: float
    budget_bytes: float

    @property
    def within(self) -> bool:
        return self.ns <= self.budget_ns and (
            self.bytes is not None and self.bytes <= self.budget_bytes + BYTES_NOISE
        )


def load_budgets(path: Path) -> list[Budget]:
    """The budgets file: `Class.method: {step, ns, bytes}` per benchmark."""
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not doc:
        raise SystemExit(f"{path}: expected a mapping of Class.method to its budget")
    budgets = []
    for name, b in doc.items():
        if not re.fullmatch(r"[A-Z]\w*\.\w+", str(name)):
            raise SystemExit(f"{path}: {name!r} is not Class.method")
        if not isinstance(b, dict) or set(b) != {"step", "ns", "bytes"}:
            raise SystemExit(f"{path}: {name}: give exactly step, ns and bytes")
        try:
            budgets.append(Budget(name, float(b["ns"]), float(b["bytes"]), str(b["step"])))
        except (TypeError, ValueError) as e:
            raise SystemExit(f"{path}: {name}: ns and bytes are numbers ({e})") from None
    return budgets


def metric(entry: dict, name: str) -> float | None:
    for key, value in entry.get("secondaryMetrics", {}).items():
        if key.lstrip("·") == name:
            return float(value["score"])
    return None


def outcomes(results: list[dict], budgets: list[Budget]) -> list[Outcome]:
    """Each JMH result (one per parameter set) beside its benchmark's budget."""
    by_name = {b.benchmark: b for b in budgets}
    found = []
    for entry in results:
        name = ".".join(entry["benchmark"].split(".")[-2:])
        budget = by_name.get(name)
        if budget is None:
            continue
        primary = entry["primaryMetric"]
        if primary["scoreUnit"] != "ns/op":
            raise SystemExit(f"{name}: expected ns/op, JMH gave {primary['scoreUnit']}")
        params = ",".join(f"{k}={v}" for k, v in sorted(entry.get("params", {}).items()))
        error = primary.get("scoreError")
        found.append(
            Outcome(
                benchmark=name,
                params=params,
                step=budget.step,
                ns=float(primary["score"]),
                ns_error=float(error) if isinstance(error, int | float) else float("nan"),
                bytes=metric(entry, ALLOC),
                budget_ns=budget.ns,
                budget_bytes=budget.bytes,
            )
        )
    return found


def read_results(path: Path) -> list[dict]:
    """A JMH result file (-rf json): a list of benchmark entries."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"{path}: not a JMH JSON result file ({e})") from None
    if not isinstance(doc, list):
        raise SystemExit(f"{path}: not a JMH JSON result file (expected a list of benchmarks)")
    return doc


def table(found: list[Outcome]) -> str:
    head = f"{'step':<8} {'benchmark':<32} {'params':<11} {'ns/op':>14} {'budget':>8} "
    head += f"{'B/op':>8} {'budget':>7}  verdict"
    lines = [head]
    for o in found:
        b = "n/a" if o.bytes is None else f"{o.bytes:.1f}"
        lines.append(
            f"{o.step:<8} {o.benchmark:<32} {o.params or '-':<11} "
            f"{o.ns:>8.1f} ±{o.ns_error:>5.1f} {o.budget_ns:>8.0f} {b:>8} {o.budget_bytes:>7.0f}  "
            + ("within" if o.within else "OVER")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budgets", type=Path, default=BUDGETS)
    ap.add_argument("--jar", type=Path, default=JAR)
    ap.add_argument("--forks", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=5, help="measured seconds per fork")
    ap.add_argument("--warmups", type=int, default=3, help="warm-up seconds per fork")
    ap.add_argument("--out", type=Path, help="also write the outcomes as JSON")
    ap.add_argument(
        "--results", type=Path, help="check this JMH JSON (run with -prof gc) instead of running"
    )
    args = ap.parse_args(argv)
    budgets = load_budgets(args.budgets)
    if args.results:
        found = outcomes(read_results(args.results), budgets)
    else:
        if not args.jar.exists():
            raise SystemExit(f"{args.jar} is missing: run `make build` first")
        pattern = "|".join(re.escape(b.benchmark) + "$" for b in budgets)
        with tempfile.TemporaryDirectory(prefix="mw-budgets-") as tmp:
            raw = Path(tmp) / "jmh.json"
            command = [
                "java", "-jar", str(args.jar), "-f", str(args.forks),
                "-wi", str(args.warmups), "-w", "1s", "-i", str(args.iterations), "-r", "1s",
                "-prof", "gc", "-rf", "json", "-rff", str(raw), f".*({pattern})",
            ]  # fmt: skip
            done = subprocess.run(command, check=False)
            if done.returncode != 0:
                print(f"JMH failed (exit {done.returncode})", file=sys.stderr)
                return done.returncode
            found = outcomes(read_results(raw), budgets)
    print(table(found))
    if args.out:
        args.out.write_text(json.dumps([asdict(o) | {"within": o.within} for o in found], indent=1))
    missing = {b.benchmark for b in budgets} - {o.benchmark for o in found}
    if missing:
        print(f"no result for: {', '.join(sorted(missing))}", file=sys.stderr)
        return 2
    return 0 if all(o.within for o in found) else 1


if __name__ == "__main__":
    sys.exit(main())
