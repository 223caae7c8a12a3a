"""Snakemake script of the series rules: runs one series with the testbed, keeping every
failure.

Like rule run_point: a series that died is moved to `<results>/failures/<series>/attempt-<n>/`
and the job fails, so Snakemake retries it. On the last attempt every point keeps a valid
run.json (failed where it was not measured), so the pipeline goes on and the validation
appendix shows the failures. Points that failed or were unstable inside a series that
ran are measured again by the series itself (`reruns`).
"""

import shutil
import sys
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_point import _last_line, _status, ensure_manifest, keep_attempt, run_measurement

from testbed.manifest import now
from testbed.scaledpoint import calibrated


def run(
    specs: list[dict[str, Any]],
    manifests: list[Path],
    series_dir: Path,
    failures: Path,
    attempt: int,
    retries: int,
    reruns: int,
    log: Path,
    longest_rerun: float = 1.0,
) -> int:
    key = series_dir.relative_to(series_dir.parents[2])
    if series_dir.exists() and any(series_dir.iterdir()):
        # Leftovers of an interrupted attempt: kept with the failures, never reused.
        stale = failures / "series" / key / f"interrupted-{int(time.time())}"
        stale.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(series_dir), stale)
    for m in manifests:
        if m.parent.exists():
            shutil.rmtree(m.parent)
    series_dir.mkdir(parents=True, exist_ok=True)
    plan_file = series_dir.parent / f".{series_dir.name}.plan.yaml"
    plan_file.write_text(
        yaml.safe_dump(
            [{"point": s, "out": str(m.parent)} for s, m in zip(specs, manifests, strict=True)],
            sort_keys=True,
        )
    )
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "mwlab", "run-series", "--plan", str(plan_file)]
    command += ["--out", str(series_dir), "--reruns", str(reruns), "--no-progress"]
    command += ["--longest-rerun", str(longest_rerun)]
    started_at = now()
    # The series' points share their machines.
    code, offset = run_measurement(command, log, f"attempt {attempt} of {retries + 1}", specs[0])
    plan_file.unlink(missing_ok=True)
    measured = all(_status(m) in ("ok", "failed") for m in manifests)
    series_ok = _status(series_dir / "run.json") == "ok"
    if measured and series_ok:
        return 0  # points that failed inside a series that ran stand, flagged by validation
    why = _last_line(log, offset)
    for spec, m in zip(specs, manifests, strict=True):
        ensure_manifest(m, spec, code, started_at, why)
    keep_attempt(series_dir, failures / "series" / key / f"attempt-{attempt}")
    if attempt > retries:
        return 0  # Last attempt: the failed points stand, flagged by validation.
    for m in manifests:
        m.unlink(missing_ok=True)
    return 1


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    specs = [dict(s) for s in sm.params.specs]
    if sm.params.scale_model:
        # Under the scale model the hosts' CPU budgets come from the profile's calibration.
        study = sm.params.scale_model["study"]
        specs = [calibrated(s, study, Path(sm.input.calibration[0])) for s in specs]
    sys.exit(
        run(
            specs=specs,
            manifests=[Path(m) for m in sm.output.manifests],
            series_dir=Path(sm.params.series_dir),
            failures=Path(sm.params.failures),
            attempt=int(sm.resources.attempt),
            retries=int(sm.params.retries),
            reruns=int(sm.params.reruns),
            log=Path(sm.log[0]),
            longest_rerun=float(sm.params.longest_rerun),
        )
    )
