"""`mwlab measure` (mwlab/measure.py): one code version per measurement, and a measurement
killed with SIGKILL resumes without measuring a finished series again."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mwlab import measure
from testbed import cpubudget, emulation
from tests.capabilities import need, provided

ROOT = Path(__file__).resolve().parents[2]


def test_a_measurement_of_other_code_or_profile_is_refused(tmp_path: Path) -> None:
    code = measure.fingerprint(ROOT, "smoke")
    assert code == measure.fingerprint(ROOT, "smoke")
    assert code != measure.fingerprint(ROOT, "resume")
    assert code != measure.fingerprint(ROOT, "quick")
    assert measure.check_record(tmp_path, "smoke", code)["pieces"] == []
    measure.write_record(tmp_path, {"profile": "smoke", "fingerprint": "0" * 64, "pieces": []})
    with pytest.raises(measure.MeasureError, match="other measurement code"):
        measure.check_record(tmp_path, "smoke", code)
    with pytest.raises(measure.MeasureError, match="profile 'smoke', not 'quick'"):
        measure.check_record(tmp_path, "quick", code)


def test_runs_no_measurement_recorded_are_refused(tmp_path: Path) -> None:
    (tmp_path / "runs" / "family").mkdir(parents=True)
    with pytest.raises(measure.MeasureError, match="no `mwlab measure` recorded"):
        measure.check_record(tmp_path, "smoke", "f" * 64)


def test_an_unknown_profile_is_named(tmp_path: Path) -> None:
    with pytest.raises(measure.MeasureError, match="no profile 'nope'"):
        measure.study_file(ROOT, "nope")


def test_a_piece_on_another_cpu_than_its_calibration_is_refused(tmp_path: Path) -> None:
    here = measure.machine()
    assert here["cores"] >= 1 and set(here) == {"cpu_model", "cores"}
    # A later piece in the same folder measures with the first piece's calibration.
    (tmp_path / "environment").mkdir()
    host = {**here, "cpu_model": "Other CPU 9000", "kernel": "6.1"}
    (tmp_path / "environment" / "host.json").write_text(json.dumps(host))
    assert measure.calibrated_on(tmp_path, None) == host
    measure.check_machine({**here, "kernel": "another"}, here, other=False)  # the CPU decides
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "mwlab", "measure", "--profile", "smoke"]
    refused = subprocess.run(
        [*command, "--results", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0
    assert "Other CPU 9000" in refused.stderr and "--other-machine" in refused.stderr
    # Nothing was measured or recorded.
    assert not (tmp_path / measure.RECORD).exists() and not (tmp_path / "runs").exists()
    assert measure.check_machine(host, here, other=True)
    assert not measure.check_machine(here, here, other=True)


def test_the_pipelines_python3_is_mwlabs_own_without_the_virtualenv_on_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `.venv/bin/mwlab measure` from a shell whose PATH lacks .venv/bin: the shell rules'
    # `python3` would be another interpreter, without the project's packages.
    ours = Path(sys.executable).parent
    path = [d for d in os.environ["PATH"].split(os.pathsep) if Path(d) != ours]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    found = subprocess.run(
        ["python3", "-c", "import sys; print(sys.prefix)"],
        env=measure.pipeline_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == sys.prefix
    assert measure.pipeline_env()["PATH"].split(os.pathsep)[1:] == path


def test_reclaiming_spares_the_commands_that_started_the_measurement(tmp_path: Path) -> None:
    # `timeout 9h mwlab measure --results X` or `nohup bash -c "... --results X"`: the wrapper's
    # command line names the results folder; a client left running in it is still reclaimed.
    anchor = str(tmp_path.resolve())
    stray = subprocess.Popen(["sleep", "600"], cwd=anchor)  # a client left in a run folder
    probe = (
        "import os, sys; from mwlab import measure as m; a = sys.argv[1]; "
        "print(m._belongs(str(os.getppid()), a, m._ancestors()), m._belongs(str(os.getppid()), a), "
        f"m._belongs('{stray.pid}', a, m._ancestors()))"
    )
    try:
        out = subprocess.run(
            ["bash", "-c", f'{sys.executable} -c "{probe}" "$0"; true', anchor],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    finally:
        stray.kill()
        stray.wait()
    assert out == ["False", "True", "True"]


def test_reclaiming_finds_a_command_that_names_the_folder_relative_to_where_it_runs(
    tmp_path: Path,
) -> None:
    # `mwlab run-series results/smoke/x` started from the checkout: its command line holds
    # the folder only relative to its working directory, and it runs outside the folder.
    results = tmp_path / "results" / "smoke"
    results.mkdir(parents=True)
    wait = [sys.executable, "-c", "import time; time.sleep(600)"]
    series = subprocess.Popen([*wait, "results/smoke/run-1", "--out=results/smoke"], cwd=tmp_path)
    elsewhere = subprocess.Popen([*wait, "results/smokey"], cwd=tmp_path)
    try:
        anchor = str(results.resolve())
        assert measure._belongs(str(series.pid), anchor)
        # A sibling whose name only begins like the folder's is another measurement's.
        assert not measure._belongs(str(elsewhere.pid), anchor)
    finally:
        for proc in (series, elsewhere):
            proc.kill()
            proc.wait()


def _measure(results: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mwlab",
            "measure",
            "--profile",
            "resume",
            "--results",
            str(results),
            "--progress-every",
            "5",
        ],
        cwd=ROOT,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )


# Snakemake's log: a job's block names its outputs and jobid; "Finished jobid" follows once
# its outputs are recorded as complete.
_JOB = re.compile(
    r"rule (series_\w+):\n(?:    (?!output:)[^\n]*\n)*?    output: ([^\n]*)\n"
    r"(?:    [^\n]*\n)*?    jobid: (\d+)\n"
)
_FINISHED = re.compile(r"Finished jobid: (\d+) \(Rule: series_\w+\)")


def _finished_series(text: str) -> list[str]:
    """The run.json outputs of every series job the log shows finished."""
    outputs = {jobid: names.split(", ") for _, names, jobid in _JOB.findall(text)}
    return [name for jobid in _FINISHED.findall(text) for name in outputs.get(jobid, [])]


def _mtimes(paths: list[str]) -> dict[str, int]:
    return {p: Path(p).stat().st_mtime_ns for p in paths}


def _of_folder(results: Path) -> list[str]:
    """Processes started for the results folder (by its measurements, or for it here)."""
    anchor, own = str(results.resolve()), measure._ancestors()
    return [p.name for p in Path("/proc").glob("[0-9]*") if measure._belongs(p.name, anchor, own)]


def _netns() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]


class _EmulatedHost:
    """What a run on emulated hosts leaves after a `kill -9`, made by the testbed's own code:
    a bridge `<prefix>br`, a namespace `<prefix>-server1` linked to it, the cgroup
    `mwlab/<prefix>/server1`, and a service in both, started in a run folder of `results` in
    a session of its own."""

    def __init__(self, results: Path, hierarchy: cpubudget.Hierarchy) -> None:
        self.prefix = f"mw{secrets.token_hex(2)}"
        self.emulation = emulation.Emulation(self.prefix, caps_mbit={})
        self.cgroups = cpubudget.RunCgroups(hierarchy, self.prefix)
        self.hierarchy = hierarchy
        folder = results / "runs"
        folder.mkdir(parents=True, exist_ok=True)
        self.netns = self.emulation.add_host("server1", "server", folder).netns
        cg = self.cgroups.add("server1", "server", None)
        service = ["ip", "netns", "exec", self.netns, "sleep", "600"]
        self.service = subprocess.Popen(cg.wrap(service), cwd=folder, start_new_session=True)
        deadline = time.monotonic() + 60
        while not any(measure._belongs(str(pid), str(results.resolve())) for pid in cg.pids()):
            assert time.monotonic() < deadline, "the service never joined its host"
            time.sleep(0.1)

    def left(self) -> list[str]:
        """What of it is still there: processes, namespaces and links, cgroups."""
        left = [f"process {pid}" for pid in cpubudget.run_pids(self.hierarchy, self.prefix)]
        left += emulation.leftovers(self.prefix)
        left += [str(p) for p in cpubudget.leftovers(cpubudget.root_from_env(), self.prefix)]
        return left

    def remove(self) -> None:
        self.emulation.teardown()
        cpubudget.remove_run(self.hierarchy, self.prefix)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.service.pid, signal.SIGKILL)
        self.service.wait(30)


def test_a_killed_measurement_resumes_without_measuring_a_finished_series(tmp_path: Path) -> None:
    provided((ROOT / "build" / "loadgen.jar").exists(), "build/loadgen.jar", "make build")
    need(emulation.available() is None, f"emulated hosts unavailable: {emulation.available()}")
    hierarchy = cpubudget.detect(cpubudget.root_from_env())
    need(not isinstance(hierarchy, str), f"no usable cgroups: {hierarchy}")
    assert not isinstance(hierarchy, str)
    results = tmp_path / "resume"
    log = tmp_path / "measure.log"
    first = _measure(results, log)
    deadline = time.monotonic() + 900
    while not _finished_series(log.read_text()):
        assert first.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, "no series finished in 15 minutes"
        time.sleep(0.2)
    # The whole process group at once, as a crash or an operator would.
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    done = _mtimes(_finished_series(log.read_text()))
    record = json.loads((results / measure.RECORD).read_text())
    assert record["complete"] is False and record["pieces"][0]["finished_at"] is None
    # The resume profile's hosts are local processes; a run on emulated hosts also leaves
    # its namespaces, links and cgroups, with services in them: one such host is added, and
    # one of another measurement's folder, which must be left alone.
    hosts: list[_EmulatedHost] = []
    try:
        ours = _EmulatedHost(results, hierarchy)
        hosts.append(ours)
        theirs = _EmulatedHost(tmp_path / "another", hierarchy)
        hosts.append(theirs)
        assert _of_folder(results) and ours.netns in _netns()
        assert cpubudget.run_pids(hierarchy, ours.prefix)
        assert f"{ours.prefix}br" in ours.left()

        second = _measure(results, log)
        assert second.wait(timeout=1800) == 0, log.read_text()[-3000:]
        # Nothing of the killed measurement is left: no process, namespace, link or cgroup.
        assert _of_folder(results) == []
        assert ours.service.wait(60) == -signal.SIGKILL
        assert ours.netns not in _netns() and ours.left() == []
        # Another measurement's host is all there, its service still running.
        assert theirs.service.poll() is None
        assert theirs.netns in _netns() and f"{theirs.prefix}br" in theirs.left()
        assert cpubudget.run_pids(hierarchy, theirs.prefix)
        assert cpubudget.leftovers(cpubudget.root_from_env(), theirs.prefix)
    finally:
        for host in hosts:
            host.remove()
    assert theirs.left() == []
    text = log.read_text()
    assert "measure: reclaimed snakemake lock" in text
    assert f"measure: reclaimed host {ours.netns}" in text
    assert f"measure: reclaimed link {ours.prefix}br" in text
    assert f"measure: reclaimed cgroups mwlab/{ours.prefix}" in text
    reclaimed = [ln for ln in text.splitlines() if ln.startswith("measure: reclaimed")]
    assert not [ln for ln in reclaimed if theirs.prefix in ln], reclaimed
    assert "ETA" in text
    after = {str(p): p.stat().st_mtime_ns for p in (results / "runs").rglob("run.json")}
    # Every run of a series finished before the kill is still the same file: nothing measured
    # it again; the other series were measured by the second piece.
    assert done and _mtimes(list(done)) == done
    assert len(after) == 4 and len(after) > len(done)
    record = json.loads((results / measure.RECORD).read_text())
    assert record["complete"] is True
    assert len(record["pieces"]) == 2 and record["pieces"][1]["finished_at"]
    provenance = json.loads((results / "provenance.json").read_text())
    assert provenance["runs"]["total"] == 4
    assert provenance["commit_source"] == "mwlab measure"
