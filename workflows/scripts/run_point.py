"""Snakemake script of rule run_point: runs one point with the testbed, keeping every failure.

A failed attempt is moved to `<results>/failures/<run>/attempt-<n>/` and the job fails, so
Snakemake retries it. The last attempt is kept as the run, with `status: failed` in its
manifest, so the pipeline goes on and the validation appendix shows the failure. A run that
left no valid manifest (bad input, or the testbed died) gets a complete failed one. A
calibration run whose machine lost more than a fifth of its CPU to the hypervisor (steal),
saturated, or changed its CPU's speed (testbed.speedprobe) is measured again the same way: its
fit would describe another machine; so is a run of a family whose trend is its result (the
catalogue's `trend: result`, the 2015 stability run), which measuring again until no trend
shows would select. Any other run is measured again when it is unstable, as a series step is
(testbed.series), up to the profile's `reruns`: a run shorter than the swings of this
machine's CPU speed can catch one as a trend (testbed/README.md, "Not yet steady"). Every
attempt is kept, with why it was measured again (`measured-again.txt`); the last stands.
"""

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from analysis.calibration import disturbance, machine_shares
from analysis.parse.errors import ParseError
from analysis.parse.manifest import read_manifest
from analysis.stability import check_run_dir
from testbed.manifest import never_started, now, write_manifest
from testbed.scaledpoint import calibrated
from testbed.slot import measurement_slots, slot_locks


def _status(manifest: Path) -> str:
    """`ok` or `failed` for a valid manifest, else why it is not one."""
    try:
        return str(read_manifest(manifest)["status"])
    except ParseError as e:
        return f"invalid: {e}"


def _last_line(log: Path, offset: int) -> str:
    """The last non-empty line the attempt wrote to the log (from `offset` on)."""
    with log.open("rb") as f:
        f.seek(offset)
        lines = [ln.strip() for ln in f.read().decode(errors="replace").splitlines()]
    lines = [ln for ln in lines if ln]
    return lines[-1] if lines else "no output"


def ensure_manifest(
    manifest: Path, spec: dict[str, Any], code: int, started_at: str, why: str
) -> None:
    """Leaves a valid manifest: the testbed's own, or a failed one saying what happened (an
    invalid one is kept beside it as `run.json.invalid`)."""
    if _status(manifest) in ("ok", "failed"):
        return
    left = "no manifest"
    if manifest.exists():
        left = "an invalid manifest"
        manifest.replace(manifest.with_name(manifest.name + ".invalid"))
    error = f"mwlab run exited {code} and left {left}: {why}"
    write_manifest(manifest, never_started(spec, error, started_at))


# Beside a kept attempt that measured fine but was measured again: why.
MEASURED_AGAIN = "measured-again.txt"


def keep_attempt(out: Path, kept: Path, move: bool = False) -> None:
    """A failed attempt's output kept at `kept` (replacing an older one there): moved when
    another attempt follows, copied when it stands as the run."""
    if kept.exists():
        shutil.rmtree(kept)
    kept.parent.mkdir(parents=True, exist_ok=True)
    if move:
        shutil.move(str(out), kept)
    else:
        shutil.copytree(out, kept)


def run_measurement(
    command: list[str], log: Path, label: str, spec: dict[str, Any]
) -> tuple[int, int]:
    """Runs a measurement command holding the slots of the machines the point `spec` runs on
    (testbed.slot), its output appended to `log`; returns its exit code and where its output
    starts in the log."""
    with log.open("a") as out:
        out.write(f"{label}: {' '.join(command)}\n")
        out.flush()
        with measurement_slots(slot_locks(spec)) as waited:
            if waited > 1:
                out.write(f"waited {waited:.0f} s for the measurement slot\n")
                out.flush()
            offset = out.tell()
            run = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    return run.returncode, offset


def disturbed(manifest: Path) -> str | None:
    """Why a run's machine was not the quiet machine a calibration fit assumes (steal,
    saturation or its CPU's speed, analysis.calibration), if so."""
    return disturbance(machine_shares(read_manifest(manifest)))


def unstable(spec: dict[str, Any]) -> Callable[[Path], str | None]:
    """A judge of measurement runs: why a run is unstable (analysis.stability, after the
    point's warm-up and cool-down), with what disturbed its machine, if anything did."""

    def judge(manifest: Path) -> str | None:
        verdict = check_run_dir(
            manifest.parent, float(spec.get("warmup_s", 0)), float(spec.get("cooldown_s", 0))
        )
        if verdict.stable:
            return None
        why = disturbed(manifest)
        return verdict.reason + (f", on a disturbed machine: {why}" if why else "")

    return judge


def run(
    spec: dict[str, Any],
    manifest: Path,
    failures: Path,
    attempt: int,
    retries: int,
    log: Path,
    judge: Callable[[Path], str | None] | None = None,
    reruns: int | None = None,
) -> int:
    """One attempt at a run; 1 asks Snakemake for another. A failed run is measured again
    while `retries` remain, a run that `judge` finds fault with while `reruns` do (default:
    `retries`); the last attempt stands."""
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
    started_at = now()
    attempts = max(retries, reruns or 0) + 1
    code, offset = run_measurement(command, log, f"attempt {attempt} of {attempts}", spec)
    point_file.unlink(missing_ok=True)
    kept = failures / run_key / f"attempt-{attempt}"
    if code == 0 and _status(manifest) == "ok":
        why = judge(manifest) if judge is not None else None
        if why is None or attempt > (retries if reruns is None else reruns):
            return 0
        with log.open("a") as out:
            out.write(f"measuring again: {why}\n")
        keep_attempt(run_dir, kept, move=True)
        # Snakemake starts the job's log afresh for the next attempt: the reason stays here.
        (kept / MEASURED_AGAIN).write_text(why + "\n")
        return 1
    ensure_manifest(manifest, spec, code, started_at, _last_line(log, offset))
    if attempt > retries:
        # The last attempt: the failed run stands, flagged by validation.
        keep_attempt(run_dir, kept)
        return 0
    keep_attempt(run_dir, kept, move=True)
    return 1


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    spec = dict(sm.params.spec)
    if sm.params.scale_model:
        # Under the scale model the hosts' CPU budgets come from the profile's calibration.
        spec = calibrated(spec, sm.params.scale_model["study"], Path(sm.input.calibration[0]))
    sys.exit(
        run(
            spec=spec,
            manifest=Path(sm.output.manifest),
            failures=Path(sm.params.failures),
            attempt=int(sm.resources.attempt),
            retries=int(sm.params.retries),
            reruns=int(sm.params.reruns),
            log=Path(sm.log[0]),
            # rule run_point's `judge`: "disturbed" for a calibration run (on a disturbed
            # machine it would fit another) and a run whose trend is its result.
            judge=(unstable(spec) if sm.params.judge == "unstable" else disturbed),
        )
    )
