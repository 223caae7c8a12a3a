"""The study on machines one already has (`mwlab measure --profile cluster-smoke`): six new
machines reached over ssh, whose host keys nothing trusts beforehand, as two inventories of
two studies. One machine lacks a tool on its ssh PATH: preflight names it before any run.
Once it is installed, both studies measure at the same time on their own machines, no machine
serves two runs at once; the driving process is killed mid-way and the measurement resumes;
it is archived with each machine's record."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from analysis import dataset
from tests.capabilities import provided

from . import sshd

pytestmark = [pytest.mark.netns, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
STUDIES = {
    "2018": [("server-a1", "server"), ("server-a2", "server"), ("client-a1", "client")],
    "2015": [("server-b1", "server"), ("client-b1", "client"), ("client-b2", "client")],
}


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return env


def _mwlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mwlab", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=_env(),
    )


def _wait_for_a_run(results: Path, driving: subprocess.Popen[bytes]) -> None:
    """Until a measurement job has started its run (its log names the attempt)."""
    deadline = time.monotonic() + 600
    while not any(
        "attempt 1" in p.read_text(errors="replace") for p in results.glob("logs/series/**/*.log")
    ):
        assert driving.poll() is None, "the measurement ended before a run started"
        assert time.monotonic() < deadline, "no run started"
        time.sleep(0.5)
    time.sleep(2)  # under way on the machines


def _split(inventory: Path, out: Path) -> dict[str, Path]:
    """One inventory per study, from the machines' names."""
    inv = yaml.safe_load(inventory.read_text())
    files = {}
    for study, roles in STUDIES.items():
        names = {n for n, _ in roles}
        files[study] = out / f"inventory-{study}.yaml"
        own = {**inv, "machines": [m for m in inv["machines"] if m["name"] in names]}
        files[study].write_text(yaml.safe_dump(own))
    return files


def _interval(manifest: dict) -> tuple[dt.datetime, dt.datetime]:
    return dt.datetime.fromisoformat(manifest["started_at"]), dt.datetime.fromisoformat(
        manifest["finished_at"]
    )


def test_two_studies_measure_at_once_on_their_own_machines(tmp_path, netns_prefix):
    provided((ROOT / "build" / "loadgen.jar").exists(), "build/loadgen.jar", "make build")
    roles = [r for study in STUDIES.values() for r in study]
    bin_dir = sshd.path_without(tmp_path / "server-a1-bin", "memcached")
    with sshd.ssh_machines(
        tmp_path, netns_prefix, roles, trusted=False, paths={"server-a1": str(bin_dir)}
    ) as (inventory, _remote):
        files = _split(inventory, tmp_path)
        results = tmp_path / "results"
        args = ["measure", "--profile", "cluster-smoke", "--results", str(results)]
        args += [f"--inventory={s}={f}" for s, f in files.items()]

        # Preflight stops the measurement before any run, naming the machine and the tool.
        failed = _mwlab(*args)
        assert failed.returncode != 0
        assert (results / "logs" / "preflight-2018.log").is_file(), failed.stderr[-3000:]
        log = (results / "logs" / "preflight-2018.log").read_text()
        assert "server-a1: missing memcached on its ssh PATH" in log, log
        assert (
            not list((results / "runs").rglob("run.json")) if (results / "runs").exists() else True
        )

        # Installed there, the same command measures both studies. The driving process is
        # killed once a run is under way; the same command resumes, clearing first what the
        # killed runs left on the machines.
        (bin_dir / "memcached").symlink_to(shutil.which("memcached") or "/usr/bin/memcached")
        driving = subprocess.Popen(
            [sys.executable, "-m", "mwlab", *args],
            cwd=ROOT,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            _wait_for_a_run(results, driving)
        finally:
            os.killpg(driving.pid, signal.SIGKILL)
            driving.wait(60)
        done = _mwlab(*args)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

        # results/runs/<family>/<point>/rep<n>/run.json
        paths = sorted((results / "runs").rglob("run.json"))
        family = {p: p.relative_to(results / "runs").parts[0] for p in paths}
        manifests = [json.loads(p.read_text()) for p in paths]
        assert sorted(family.values()) == ["baseline_direct"] * 2 + ["mq_db_baseline"]
        assert all(m["status"] == "ok" and m["host_kind"] == "ssh" for m in manifests)
        by_study = {
            study: [json.loads(p.read_text()) for p in paths if family[p] == name]
            for study, name in (("2018", "baseline_direct"), ("2015", "mq_db_baseline"))
        }
        for study, runs in by_study.items():
            names = {n for n, _ in STUDIES[study]}
            assert {h["name"] for m in runs for h in m["hosts"]} <= names, study
        # The studies measured at the same time ...
        spans = {
            s: (min(_interval(m)[0] for m in r), max(_interval(m)[1] for m in r))
            for s, r in by_study.items()
        }
        assert spans["2018"][0] < spans["2015"][1] and spans["2015"][0] < spans["2018"][1]
        # ... and no machine served two runs at once.
        for i, a in enumerate(manifests):
            for b in manifests[i + 1 :]:
                shared = {h["name"] for h in a["hosts"]} & {h["name"] for h in b["hosts"]}
                if shared:
                    (a0, a1), (b0, b1) = _interval(a), _interval(b)
                    assert a1 <= b0 or b1 <= a0, shared

        # Each machine's record, with its pinned host key, travels with the dataset.
        out = tmp_path / "data" / "cluster-smoke" / "2026-01-01"
        archived = _mwlab("dataset", "archive", "--profile", "cluster-smoke",
                          "--results", str(results), "--out", str(out))  # fmt: skip
        assert archived.returncode == 0, archived.stdout[-3000:] + archived.stderr[-3000:]
        dataset.verify(out)
        doc = dataset.provenance(out)
        assert sorted(doc["machines_by_study"]) == ["2015", "2018"]
        machines = doc["machines_by_study"]["2015"]["machines"]
        assert {m["name"] for m in machines} == {n for n, _ in STUDIES["2015"]}
        assert all(m["tools"]["java"] for m in machines if m["role"] == "client")
        for study in STUDIES:
            assert (out / "hosts" / study / "preflight.json").is_file()
