"""Snakemake's scheduler beside the runs.

Measurement jobs run alone: the pinned Snakemake keeps the quick profile's `testbed=1` and a
measurement rule's claim of every core, so no job (measurement or analysis) runs beside a
measurement. Snakemake before 9.17 broke both: a job selected while it was the only ready one
was never charged its resources, yet they were returned when it finished, so after such a job
two measurements ran at once, with analysis jobs beside them. The workflow below has the
pipeline's shape: calibration runs, a fit that is the only ready job when they finish, then
the study's runs and analysis jobs that become ready together.

And the scheduler's own work stays flat through a measurement (workflows/rules/scheduler.smk):
without it every finished job added a scheduler pass per second while jobs wait."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCHEDULER = ROOT / "workflows" / "rules" / "scheduler.smk"

SNAKEFILE = (
    f"""
include: "{SCHEDULER}"
"""
    + """
MEASUREMENT_THREADS = workflow.cores


def stamp(kind):
    return f"echo {kind} {{rule}} {{wildcards}} start $(date +%s.%N) >> jobs.log; sleep 0.4;" \\
        f" echo {kind} {{rule}} {{wildcards}} end $(date +%s.%N) >> jobs.log; touch {{output}}"


rule all:
    input: expand("run{i}", i=range(6)), expand("table{i}", i=range(4)), "delay"


rule calibration_run:
    output: "cal{i}"
    threads: MEASUREMENT_THREADS
    resources: testbed=1, attempt=lambda w, attempt: attempt
    retries: 1
    shell: stamp("measure").replace("{rule}", "calibration_run")


rule delay_check:
    output: "delay"
    threads: MEASUREMENT_THREADS
    resources: testbed=1
    shell: stamp("measure").replace("{rule}", "delay_check")


rule fit:
    input: expand("cal{i}", i=range(3))
    output: "fit"
    shell: stamp("analysis").replace("{rule}", "fit")


rule run_point:
    input: "fit"
    output: "run{i}"
    threads: MEASUREMENT_THREADS
    resources: testbed=1, attempt=lambda w, attempt: attempt
    retries: 1
    shell: stamp("measure").replace("{rule}", "run_point")


rule table:
    input: "fit"
    output: "table{i}"
    shell: stamp("analysis").replace("{rule}", "table")
"""
)


def _intervals(log: Path) -> list[tuple[str, str, float, float]]:
    starts: dict[str, float] = {}
    out = []
    for line in log.read_text().splitlines():
        kind, rule, *rest = line.split()
        wildcards, edge, at = " ".join(rest[:-2]), rest[-2], float(rest[-1])
        key = f"{rule} {wildcards}"
        if edge == "start":
            starts[key] = at
        else:
            out.append((kind, key, starts.pop(key), at))
    assert not starts, f"jobs that never ended: {starts}"
    return out


def _snakemake(workdir: Path, snakefile: str, *args: str) -> str:
    """Runs `snakefile` in `workdir` with the quick profile's own settings (cores and the
    testbed resource), without its study configuration; returns Snakemake's log."""
    (workdir / "Snakefile").write_text(snakefile)
    profile = workdir / "profile"
    profile.mkdir()
    shutil.copy(ROOT / "workflows" / "profiles" / "quick" / "config.yaml", profile)
    text = (profile / "config.yaml").read_text()
    (profile / "config.yaml").write_text(
        "\n".join(ln for ln in text.splitlines() if not ln.startswith("configfile:"))
    )
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--profile", str(profile), "--cores", "2", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def test_no_job_runs_beside_a_measurement(tmp_path: Path) -> None:
    _snakemake(tmp_path, SNAKEFILE)
    jobs = _intervals(tmp_path / "jobs.log")
    assert len(jobs) == 3 + 1 + 1 + 6 + 4
    # The analysis jobs alone may overlap: the profile's two cores serve them.
    analysis = [j for j in jobs if j[0] == "analysis"]
    assert any(a[2] < b[3] and b[2] < a[3] for a in analysis for b in analysis if a != b), (
        "two cores ran no two analysis jobs together: the check below would prove nothing"
    )
    for kind, key, start, end in jobs:
        if kind != "measure":
            continue
        beside = [k for _, k, s, e in jobs if k != key and s < end and start < e]
        assert not beside, f"{key} ran beside {beside}"


RUNS = 20

# Runs that wait for the testbed, one at a time, as the study's do.
QUEUE = f"""
include: "{SCHEDULER}"


rule all:
    input: expand("run{{i}}", i=range({RUNS}))


rule run_point:
    output: "run{{i}}"
    resources: testbed=1
    shell: "sleep 1; touch {{output}}"
"""


def test_the_scheduler_does_not_pile_up_passes_while_runs_wait(tmp_path: Path) -> None:
    log = _snakemake(tmp_path, QUEUE, "--verbose")
    passes = log.count("Resources before job selection")
    # One pass a second and a few per run. Without scheduler.smk each finished run added a
    # pass a second: about RUNS^2 / 2 = 200 passes here.
    assert passes <= 2 * RUNS + 3 * RUNS, f"{passes} scheduler passes for {RUNS} runs of 1 s"
