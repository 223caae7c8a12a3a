"""A run that never starts still yields a complete failed manifest: the pipeline goes on and
validation flags the run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.family import build
from analysis.parse.errors import ParseError
from analysis.parse.manifest import read_manifest
from analysis.report.validation import numbers, run_rows
from analysis.validate import check_runs
from testbed.manifest import build_manifest, never_started, write_manifest

from .scripts import load_script

pytestmark = pytest.mark.timeout(300)

run_point = load_script("run_point")

KEY = "fam/ratio=bad/rep1"
BAD = {"name": KEY, "hosts": "local", "driver": "builtin", "workload": {"ratio": "3"}}


def attempt(results: Path, spec: dict, n: int, retries: int) -> int:
    return run_point.run(
        spec=spec,
        manifest=results / "runs" / spec["name"] / "run.json",
        failures=results / "failures",
        attempt=n,
        retries=retries,
        log=results / "logs" / f"{spec['name']}.log",
    )


def test_bad_input_is_retried_then_kept_as_a_complete_failed_run(tmp_path):
    manifest = tmp_path / "runs" / KEY / "run.json"
    # `mwlab run` rejects the point (exit 2) and leaves no manifest: the attempt fails, so
    # Snakemake retries it, and the failure is kept with a valid manifest.
    assert attempt(tmp_path, BAD, 1, retries=1) == 1
    assert not manifest.exists()
    kept = read_manifest(tmp_path / "failures" / KEY / "attempt-1" / "run.json")
    assert kept["status"] == "failed"
    # The last attempt stands as the run.
    assert attempt(tmp_path, BAD, 2, retries=1) == 0
    data = read_manifest(manifest)
    assert data["status"] == "failed"
    assert "mwlab run exited 2 and left no manifest" in str(data["error"])
    assert "ratio must be 'S:G'" in str(data["error"])
    assert data["point"] == BAD
    assert data["processes"] == [] and data["signals"] == []
    # The pipeline goes on: tidy tables, parquet files, and the run flagged as failed.
    frames = build([KEY], tmp_path, {"warmup_s": 0, "cooldown_s": 0}, {KEY: {}})
    for name, frame in frames.items():
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    manifests = pd.read_parquet(tmp_path / "manifests.parquet")
    table = check_runs(runs, manifests, "fam", frames["windows"])
    assert table["flags"].tolist() == ["failed"]
    assert bool(table["flagged"].iloc[0])
    assert r"\quad bad r1 &" in run_rows(table)
    assert r"\newcommand{\ValidationFailed}{1}" in numbers(table)


def test_a_calibration_run_on_a_disturbed_machine_is_measured_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MWLAB_BASE_PORT", "27000")  # tests/pipeline's own port range
    spec = {"name": "calibration/t=x/rep1", "hosts": "local", "driver": "builtin",
            "duration_s": 2, "virtual_clients": 2}  # fmt: skip
    manifest = tmp_path / "runs" / spec["name"] / "run.json"

    def judge(path: Path) -> str | None:
        assert read_manifest(path)["status"] == "ok"
        return "steal 41% > 20%"

    def once(n: int, reruns: int | None = None) -> int:
        return run_point.run(spec=spec, manifest=manifest, failures=tmp_path / "failures",
                             attempt=n, retries=1, log=tmp_path / "run.log",
                             judge=judge, reruns=reruns)  # fmt: skip

    # A run that measured fine on a disturbed machine is kept aside and measured again...
    assert once(1) == 1
    assert not manifest.exists()
    assert read_manifest(tmp_path / "failures" / spec["name"] / "attempt-1" / "run.json")
    assert "measuring again: steal 41% > 20%" in (tmp_path / "run.log").read_text()
    # The reason outlives the job's log, which Snakemake starts afresh for the next attempt.
    kept = tmp_path / "failures" / spec["name"] / "attempt-1"
    assert (kept / run_point.MEASURED_AGAIN).read_text() == "steal 41% > 20%\n"
    # ... and the last attempt stands, whatever the judge says.
    assert once(2) == 0
    assert read_manifest(manifest)["status"] == "ok"
    # With no reruns for what the judge finds (a profile's `run.reruns: 0`), the first stands.
    manifest.unlink()
    assert once(1, reruns=0) == 0
    assert read_manifest(manifest)["status"] == "ok"
    # Other runs are measured again when unstable, on a quiet machine too (this one has too
    # few windows in 2 s); the reason names what disturbed the machine, if anything did.
    data = json.loads(manifest.read_text())
    assert data["cpu"]["machine_speed"]["pieces"] > 0  # the testbed probed the machine
    judge_measurement = run_point.unstable(spec)
    data["cpu"]["machine"] = {"idle_share": 0.5, "steal_share": 0.0}
    data["cpu"]["machine_speed"]["spread"] = 0.1
    manifest.write_text(json.dumps(data))
    why = judge_measurement(manifest)
    assert why is not None and why.startswith("too few windows")
    assert "disturbed" not in why
    data["cpu"]["machine_speed"]["spread"] = 0.4
    manifest.write_text(json.dumps(data))
    why = judge_measurement(manifest)
    assert why is not None and why.startswith("too few windows")
    assert why.endswith("on a disturbed machine: CPU speed spread 40% > 25%")


def test_a_disturbed_machine_is_named_from_the_manifests_cpu_shares(tmp_path):
    path = tmp_path / "run.json"
    cpu = {"machine": {"idle_share": 0.3, "steal_share": 0.41}}
    write_manifest(path, {**never_started(BAD, "x"), "status": "ok", "error": None, "cpu": cpu})
    assert run_point.disturbed(path) == "steal 41% > 20%"
    cpu["machine"]["steal_share"] = 0.05
    write_manifest(path, {**never_started(BAD, "x"), "status": "ok", "error": None, "cpu": cpu})
    assert run_point.disturbed(path) is None
    cpu["machine_speed"] = {"spread": 0.31}  # testbed.speedprobe: the CPU's speed wandered
    write_manifest(path, {**never_started(BAD, "x"), "status": "ok", "error": None, "cpu": cpu})
    assert run_point.disturbed(path) == "CPU speed spread 31% > 25%"


def test_an_invalid_manifest_is_replaced_and_kept_aside(tmp_path):
    manifest = tmp_path / "run.json"
    manifest.write_text('{"schema": 1, "status": "o')  # a writer killed half-way
    spec = {"name": KEY, "hosts": "local", "servers": 2}
    run_point.ensure_manifest(manifest, spec, -9, "2026-01-01T00:00:00.000+00:00", "Killed")
    data = read_manifest(manifest)
    assert data["status"] == "failed"
    assert data["error"] == "mwlab run exited -9 and left an invalid manifest: Killed"
    assert data["started_at"] == "2026-01-01T00:00:00.000+00:00"
    # A valid point is recorded in full, as the testbed records it.
    assert data["point"]["servers"] == 2 and data["point"]["workload"]["ratio"] == "0:1"
    assert data["clients_total"] == 1
    assert (tmp_path / "run.json.invalid").read_text() == '{"schema": 1, "status": "o'


def test_every_manifest_the_builder_makes_reads_back(tmp_path):
    path = tmp_path / "run.json"
    ok = build_manifest(
        point={"name": "p"}, error=None, started_at="a", finished_at="b", duration_s=1.23456,
        host_kind="local", driver="builtin", clients_total=4,
        signals=[{"signal": "SIGTERM", "at": "c", "stage": "teardown"}],
    )  # fmt: skip
    for manifest in (ok, never_started(BAD, "why")):
        write_manifest(path, manifest)
        assert read_manifest(path) == json.loads(path.read_text()) == manifest
    assert ok["status"] == "ok" and ok["duration_s"] == 1.235


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "failed", "error": None}, "without an error"),
        ({"error": 3}, "'error' has the wrong type"),
        ({"signals": ["SIGINT"]}, "'signals' must list"),
    ],
)
def test_manifests_that_do_not_say_what_happened_are_rejected(tmp_path, change, message):
    manifest = never_started(BAD, "why") | change
    path = tmp_path / "run.json"
    write_manifest(path, manifest)
    with pytest.raises(ParseError, match=message):
        read_manifest(path)
