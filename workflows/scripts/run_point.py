"""Snakemake script of rule run_point: runs one point with the testbed, keeping every failure.

A failed attempt is moved to `<results>/failures/<run>/attempt-<n>/` and the job fails, so
Snakemake retries it. The last attempt is kept as the run, with `status: failed` in its
manifest, so the pipeline goes on and the validation appendix shows the failure.
"""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml


def _status(manifest: Path) -> str:
    try:
        return str(json.loads(manifest.read_text()).get("status", "missing"))
    except (OSError, json.JSONDecodeError):
        return "missing"


def _write_failed_manifest(manifest: Path, spec: dict[str, Any], why: str) -> None:
    manifest.write_text(
        json.dumps({"schema": 1, "status": "failed", "error": why, "point": spec}, indent=2) + "\n"
    )


def run(
    spec: dict[str, Any], manifest: Path, failures: Path, attempt: int, retries: int, log: Path
) -> int:
    run_dir = manifest.parent
    run_key = Path(spec["name"])
    if run_dir.exists() and any(run_dir.iterdir()):
        # Leftovers of an interrupted attempt: keep them with the failures, never reuse them.
        stale = failures / run_key / f"interrupted-{int(time.time())}"
        stale.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(run_dir), stale)
    run_dir.mkdir(parents=True, exist_ok=True)
    point_file = run_dir.parent / f".{run_dir.name}.point.yaml"
    point_file.write_text(yaml.safe_dump(spec, sort_keys=True))
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "mwlab",
        "run",
        "--point",
        str(point_file),
        "--out",
        str(run_dir),
    ]
    with log.open("a") as out:
        out.write(f"attempt {attempt} of {retries + 1}: {' '.join(command)}\n")
        out.flush()
        code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    point_file.unlink(missing_ok=True)
    if code == 0 and _status(manifest) == "ok":
        return 0
    if not manifest.exists():
        _write_failed_manifest(manifest, spec, f"mwlab run exited {code} without a manifest")
    kept = failures / run_key / f"attempt-{attempt}"
    if kept.exists():
        shutil.rmtree(kept)
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(run_dir, kept)
    if attempt > retries:
        return 0  # Last attempt: the failed run stands, flagged by validation.
    manifest.unlink()
    return 1


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    sys.exit(
        run(
            spec=dict(sm.params.spec),
            manifest=Path(sm.output.manifest),
            failures=Path(sm.params.failures),
            attempt=int(sm.resources.attempt),
            retries=int(sm.params.retries),
            log=Path(sm.log[0]),
        )
    )
