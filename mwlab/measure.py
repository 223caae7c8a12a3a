"""`mwlab measure`, `mwlab paper` and `mwlab dataset`: measuring a profile, building its report
from a measurement or from a reference dataset, and archiving a measurement as one.

A measurement lives in `results/<profile>/` and is resumable: the pipeline never repeats a
finished series, and `mwlab measure` after a `kill -9` or a reboot first reclaims what the
dead run left (network namespaces, CPU cgroups, processes, Snakemake's lock), then goes on.
`results/<profile>/measurement.json` records the commit and the fingerprint of the
measurement code of every piece; a measurement refuses to go on under other measurement code
or another profile, so a dataset never mixes runs of two versions.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import yaml

from analysis import dataset, provenance, testbed_summary
from analysis.provenance import git_commit
from common.paths import CATALOGUE
from mwlab import datasetmerge
from mwlab.catalogue import (
    calibration_needed,
    calibration_plan,
    expand,
    load_catalogue,
    load_profile,
)
from testbed.hosts import HostError
from testbed.inventory import load_inventory

RECORD = "measurement.json"
# What decides what a run measures: the systems, the testbed, the plan and how it is run.
MEASUREMENT_CODE = (
    "middleware",
    "common",
    "testbed",
    "workflows/catalogue.yaml",
    "workflows/machines.yaml",
    "workflows/rules/runs.smk",
    "workflows/scripts/run_point.py",
    "workflows/scripts/run_series.py",
)
_NETNS = re.compile(r"^mw[0-9a-f]{4}")


class MeasureError(click.ClickException):
    """A measurement that cannot start or go on, with the reason."""


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def fingerprint(root: Path, profile: str) -> str:
    """sha256 over the tracked measurement code and the profile, as the working tree has them
    (an uncommitted edit changes it too)."""
    paths = [*MEASUREMENT_CODE, f"workflows/profiles/{profile}"]
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *paths],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        raise MeasureError(f"cannot list the measurement code with git: {listed.stderr.strip()}")
    digest = hashlib.sha256()
    for name in sorted(n for n in listed.stdout.split("\0") if n):
        path = root / name
        if path.is_file() and "/target/" not in name:
            digest.update(name.encode() + b"\0" + dataset.sha256(path).encode() + b"\n")
    return digest.hexdigest()


def pipeline_env() -> dict[str, str]:
    """The environment of the pipeline's Snakemake: its shell rules call `python3`, which must
    be this interpreter (the project's virtualenv) even when `mwlab` was started by its path
    without the virtualenv on PATH."""
    here = str(Path(sys.executable).parent)
    rest = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and d != here]
    return {**os.environ, "PATH": os.pathsep.join([here, *rest])}


def study_file(root: Path, profile: str) -> Path:
    path = root / "workflows" / "profiles" / profile / "study.yaml"
    if not path.is_file():
        known = sorted(p.name for p in (root / "workflows" / "profiles").iterdir() if p.is_dir())
        raise MeasureError(f"no profile {profile!r} (known: {', '.join(known)})")
    return path


def planned_runs(root: Path, profile: str, overrides: dict[str, Any] | None = None) -> list[Any]:
    """The profile's runs; `overrides`: the measurement's own settings (its inventories)."""
    config = yaml.safe_load(study_file(root, profile).read_text()) | (overrides or {})
    catalogue = load_catalogue(root / config.get("catalogue", CATALOGUE))
    return expand(catalogue, load_profile(config, source=f"profile {profile}"))


def calibration_runs(root: Path, profile: str, runs: list[Any]) -> list[Any]:
    """The calibration runs a measurement of `runs` starts with (none without the scale
    model)."""
    if not calibration_needed(runs):
        return []
    config = yaml.safe_load(study_file(root, profile).read_text())
    return calibration_plan(load_profile(config, source=f"profile {profile}"))


def inventory_overrides(given: tuple[str, ...]) -> dict[str, Any]:
    """`--inventory 2018=FILE` as the pipeline's settings: each study's inventory (an absolute
    path), and only those studies planned."""
    inventories: dict[str, str] = {}
    for item in given:
        study, sep, file = item.partition("=")
        if not sep or not study or not file:
            raise MeasureError(f"--inventory {item!r}: STUDY=FILE, e.g. 2018=lab-2018.yaml")
        path = Path(file).expanduser().resolve()
        if not path.is_file():
            raise MeasureError(f"--inventory {item!r}: no file {path}")
        inventories[study] = str(path)
    return {"inventories": inventories, "studies": sorted(inventories)} if inventories else {}


def record_overrides(results: Path) -> dict[str, Any]:
    """The settings a measurement in `results` was started with (`mwlab measure --inventory`)."""
    path = results / RECORD
    record = json.loads(path.read_text()) if path.exists() else {}
    return dict(record.get("overrides") or {})


def check_record(results: Path, profile: str, code: str) -> dict[str, Any]:
    """The measurement's record, after refusing one of another profile or measurement code."""
    path = results / RECORD
    if not path.exists():
        if (results / "runs").is_dir() and any((results / "runs").iterdir()):
            raise MeasureError(
                f"{results}/runs holds runs that no `mwlab measure` recorded, so their code "
                f"is unknown; measure into another folder (--results) or remove {results}"
            )
        return {"profile": profile, "fingerprint": code, "pieces": []}
    record = json.loads(path.read_text())
    if record.get("profile") != profile:
        raise MeasureError(
            f"{results} holds a measurement of profile {record.get('profile')!r}, not "
            f"{profile!r}; a dataset holds one profile"
        )
    if record.get("fingerprint") != code:
        first = (record.get("pieces") or [{}])[0].get("commit", "?")
        raise MeasureError(
            f"{results} was measured with other measurement code (commit {first}, fingerprint "
            f"{str(record.get('fingerprint'))[:12]}); this checkout's is {code[:12]}. "
            "A dataset never mixes code versions: measure into another folder (--results) "
            f"or remove {results}"
        )
    return record


def check_onto(onto: Path, profile: str, code: str) -> list[str]:
    """The families of the earlier pieces' dataset `onto`, after refusing one that does not
    match its manifest, or holds another profile or was measured with other code."""
    try:
        dataset.verify(onto)
    except dataset.DatasetError as e:
        raise MeasureError(str(e)) from None
    doc = dataset.provenance(onto)
    if doc.get("profile") != profile:
        raise MeasureError(f"{onto} holds profile {doc.get('profile')!r}, not {profile!r}")
    if doc.get("fingerprint") != code:
        raise MeasureError(
            f"{onto} was measured with other measurement code (commit "
            f"{str(doc.get('commit'))[:12]}, fingerprint {str(doc.get('fingerprint'))[:12]}); "
            f"this checkout's is {code[:12]}. Check out its commit to measure the next piece"
        )
    return dataset.families(onto)


def machine() -> dict[str, Any]:
    """What of this machine decides the calibration's speed factors: its CPU and cores."""
    host = testbed_summary.host()
    return {key: host[key] for key in ("cpu_model", "cores")}


def calibrated_on(results: Path, onto: Path | None) -> dict[str, Any] | None:
    """The machine the calibration this piece measures with was measured on: the earlier
    dataset's (`onto`) or, for a later piece in the same folder, the first piece's; None for a
    first piece, which calibrates here."""
    if onto is not None:
        return dataset.provenance(onto).get("machine")
    host = results / "environment" / "host.json"
    return json.loads(host.read_text()) if host.exists() else None


def check_machine(calibration: dict[str, Any] | None, here: dict[str, Any], other: bool) -> bool:
    """Refuse to measure on another CPU than the calibration's, unless `other` (--other-machine):
    a speed factor holds for the CPU it was fitted on. True where it measures on another one."""
    if calibration is None:
        return False
    theirs = {key: calibration.get(key) for key in here}
    if theirs == here:
        return False
    said = (
        f"the calibration was measured on {theirs['cores']} cores of {theirs['cpu_model']!r}, "
        f"this machine has {here['cores']} of {here['cpu_model']!r}"
    )
    if not other:
        raise MeasureError(
            f"{said}: its speed factors need not hold here. Measure the next piece on a machine "
            "like the first, start a new measurement (another --results, without --onto), "
            "or pass --other-machine to measure anyway (the piece records it)"
        )
    click.echo(f"measure: {said}; measuring anyway (--other-machine)", err=True)
    return True


def finished_families(record: dict[str, Any]) -> set[str]:
    """The families of the record's pieces that ran to their end."""
    return {f for p in record.get("pieces", []) if p.get("done") for f in p.get("families", [])}


def write_record(results: Path, record: dict[str, Any]) -> None:
    results.mkdir(parents=True, exist_ok=True)
    tmp = results / (RECORD + ".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    tmp.replace(results / RECORD)


@contextlib.contextmanager
def exclusive(results: Path) -> Iterator[None]:
    """One `mwlab measure` per results folder; the kernel drops the lock when its holder dies."""
    results.mkdir(parents=True, exist_ok=True)
    with (results / ".measure.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise MeasureError(f"another `mwlab measure` is measuring {results}") from None
        yield


def _kill(pids: list[str]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
            os.kill(int(pid), signal.SIGKILL)


def _ancestors() -> set[int]:
    """This process and the ones that started it (a shell, `timeout`, `nohup`), whose command
    lines name the results folder too."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            stat = (Path("/proc") / str(pid) / "stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids


def _names(arg: str, cwd: str, anchor: str) -> bool:
    """Whether one command-line argument names the folder `anchor` or a path inside it, as
    written (absolute) or relative to the process's working directory (`mwlab run-series
    results/smoke/...` started from the checkout); an option's value after `=` counts."""
    value = arg.partition("=")[2] if arg.startswith("-") else arg
    if not value or "\0" in value:
        return False
    try:
        path = os.path.normpath(Path(cwd) / value)
    except ValueError:
        return False
    return path == anchor or path.startswith(anchor + "/")


def _belongs(pid: str, anchor: str, own: frozenset[int] | set[int] = frozenset()) -> bool:
    """Whether a process was started for the results folder `anchor`: its command line names
    it (absolute, or relative to where the process runs), or it runs in it (the testbed
    starts servers, middlewares and clients in run folders); never one of `own` (this
    measurement and its ancestors)."""
    proc = Path("/proc") / pid
    try:
        if int(pid) in own:
            return False
        argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        cwd = str((proc / "cwd").readlink())
    except (OSError, ValueError):
        return False
    if cwd == anchor or cwd.startswith(anchor + "/"):
        return True
    return any(anchor in arg or _names(arg, cwd, anchor) for arg in argv)


def _reclaim_hosts(anchor: str) -> list[str]:
    """Emulated hosts' namespaces and CPU cgroups of this results folder: those that hold a
    process of it, and the cgroups of a run whose namespaces did (a run's cgroups are named
    by its namespaces' prefix; a killed run's may be empty). Another measurement's or a
    hand-started `mwlab run`'s are left alone."""
    from testbed import cpubudget, emulation

    removed, runs = [], set()
    for name in emulation.leftovers("mw"):
        if not _NETNS.match(name):
            continue
        pids = subprocess.run(
            ["ip", "netns", "pids", name], capture_output=True, text=True, check=False
        ).stdout.split()
        if not any(_belongs(pid, anchor) for pid in pids):
            continue
        _kill(pids)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
        removed.append(f"host {name}")
        runs.add(name.split("-", 1)[0])
    for run in sorted(runs):
        # The run's bridge; its hosts' links went with their namespaces.
        gone = subprocess.run(["ip", "link", "del", f"{run}br"], capture_output=True, check=False)
        if gone.returncode == 0:
            removed.append(f"link {run}br")
    # Where the runs made their cgroups: $MWLAB_CGROUP_ROOT, else the machine's.
    found = cpubudget.detect(cpubudget.root_from_env())
    if isinstance(found, str):
        return removed
    for run in cpubudget.run_names(found):
        pids = cpubudget.run_pids(found, run)
        if run not in runs and not any(_belongs(str(pid), anchor) for pid in pids):
            continue
        problems = cpubudget.remove_run(found, run)
        if problems:
            raise MeasureError(f"cannot reclaim the cgroups of {run}: {'; '.join(problems)}")
        removed.append(f"cgroups {cpubudget.PARENT}/{run}")
    return removed


def _reclaim_machines(results: Path) -> list[str]:
    """What a killed measurement left on its ssh machines (those preflight pinned in
    `results`): the processes and files in each machine's scratch directory. A machine that
    cannot be reached is left for its next run's own check to report."""
    removed = []
    for pinned in sorted(results.glob("hosts/*/inventory.yaml")):
        try:
            inv = load_inventory(pinned)
        except ValueError:
            continue
        for m in inv.machines:
            host = inv.ssh_host(m, "")
            base = shlex.quote(host.remote_base.rstrip("/"))
            with contextlib.suppress(HostError):
                left = host.run(f"find {base} -name pid 2>/dev/null | head -n 1", timeout=30)
                if left.returncode == 0 and left.stdout.strip():
                    host.cleanup()
                    removed.append(f"the runs left on {m.name}")
    return removed


def reclaim(
    root: Path, results: Path, profile_dir: Path, overrides: dict[str, Any] | None = None
) -> list[str]:
    """Removes what a killed measurement of `results` left: its emulated hosts and cgroups,
    what its runs left on its ssh machines, the processes started for it, and Snakemake's
    stale lock. Returns what it removed."""
    anchor = str(results.resolve())
    removed = _reclaim_hosts(anchor)
    removed += _reclaim_machines(results)
    own = _ancestors()
    for proc in Path("/proc").glob("[0-9]*"):
        if _belongs(proc.name, anchor, own):
            _kill([proc.name])
            removed.append(f"process {proc.name}")
    # A killed Snakemake leaves its locks; --unlock removes every lock of the checkout.
    stale = any((root / ".snakemake" / "locks").glob("*.lock"))
    unlock = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--unlock",
            "--profile",
            str(profile_dir),
            "--config",
            f"results={results}",
            *(f"{key}={json.dumps(value)}" for key, value in (overrides or {}).items()),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if unlock.returncode != 0:
        raise MeasureError(f"cannot unlock the pipeline's folder: {unlock.stderr.strip()[-400:]}")
    if stale:
        removed.append("snakemake lock")
    return removed


def _clock(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """Counts the planned runs (points and calibration runs) with a manifest and prints
    progress with an ETA, weighting each run by its planned measured seconds (the runs measured
    before this piece count as done but not towards the rate)."""

    def __init__(self, results: Path, runs: list[Any]) -> None:
        self.results = results
        self.weights = {r.path: float(r.spec.get("duration_s") or 1.0) for r in runs}
        self.series = {r.path: r.series for r in runs if r.series}
        self.total = sum(self.weights.values())
        self.started = time.monotonic()
        self.before = self._done_weight(self.done())

    def done(self) -> set[str]:
        return {p for p in self.weights if (self.results / "runs" / p / "run.json").exists()}

    def _done_weight(self, done: set[str]) -> float:
        return sum(self.weights[p] for p in done)

    def line(self) -> str:
        done = self.done()
        weight = self._done_weight(done)
        elapsed = time.monotonic() - self.started
        series_all = set(self.series.values())
        series_open = {self.series[p] for p in self.series if p not in done}
        rate = (weight - self.before) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - weight) / rate if rate > 0 else None
        if weight >= self.total:
            eta = 0.0
        return (
            f"measure: {len(done)}/{len(self.weights)} runs "
            f"({100 * weight / self.total:.1f} % of the planned time), "
            f"{len(series_all) - len(series_open)}/{len(series_all)} series, "
            f"elapsed {_clock(elapsed)}, ETA {_clock(eta) if eta is not None else 'unknown'}"
        )


def _report(progress: Progress, stop: threading.Event, every_s: float) -> None:
    while not stop.wait(every_s):
        click.echo(progress.line(), err=True)


@click.command("measure")
@click.option("--profile", default="default", show_default=True, help="Profile to measure.")
@click.option("--results", type=click.Path(path_type=Path), help="Default: results/<profile>.")
@click.option("--cores", default=2, show_default=True, help="Snakemake's --cores.")
@click.option("--progress-every", default=60.0, show_default=True, help="Seconds between lines.")
@click.option(
    "--families",
    help="A piece: only these families (comma-separated); `mwlab dataset archive` archives "
    "the families measured so far, and `--onto` adds later pieces to that dataset.",
)
@click.option(
    "--onto",
    type=click.Path(path_type=Path),
    help="A later piece: the dataset of the earlier ones (measured with the same code), whose "
    "calibration it measures with; default families: the ones that dataset lacks.",
)
@click.option(
    "--other-machine",
    is_flag=True,
    help="Measure a later piece on another CPU than its calibration's (refused otherwise).",
)
@click.option(
    "--inventory",
    "inventories",
    multiple=True,
    metavar="STUDY=FILE",
    help="ssh profiles (cluster): the machines of a study (repeatable); only the studies named"
    " are measured. A resumed measurement keeps the ones it started with.",
)
def measure_command(
    profile: str,
    results: Path | None,
    cores: int,
    progress_every: float,
    families: str | None,
    onto: Path | None,
    other_machine: bool,
    inventories: tuple[str, ...],
) -> None:
    """Measure a profile to its provenance (every run, tidy table and the validation), resuming
    a measurement a kill or a reboot interrupted. `mwlab paper` then builds its report."""
    root = Path.cwd()
    study = study_file(root, profile)
    given = inventory_overrides(inventories)
    folder = (results or root / str(yaml.safe_load(study.read_text())["results"])).resolve()
    started = record_overrides(folder)
    if given and started and given != started:
        raise MeasureError(
            f"{folder} was started with other machines ({started['inventories']}); measure"
            " into another folder (--results)"
        )
    overrides = given or started
    plan = planned_runs(root, profile, overrides)
    every = sorted({r.family for r in plan})
    code = fingerprint(root, profile)
    earlier = check_onto(onto, profile, code) if onto else []
    piece = _piece(families, every, earlier, onto, profile)
    # Inside the checkout, the path the profile names: Snakemake keys its records by path.
    results = folder.relative_to(root) if folder.is_relative_to(root) else folder
    with exclusive(results):
        record = check_record(results, profile, code)
        if record.get("onto") != (str(onto) if onto else None) and record["pieces"]:
            raise MeasureError(
                f"{results} continues {record.get('onto') or 'no dataset'}, not "
                f"{onto or 'no dataset'}; measure into another folder (--results)"
            )
        if onto:
            record["onto"] = str(onto)
        if overrides:
            record["overrides"] = overrides
        here = machine()
        calibration = calibrated_on(results, onto)
        elsewhere = check_machine(calibration, here, other_machine)
        for item in reclaim(root, results, study.parent, overrides):
            click.echo(f"measure: reclaimed {item}", err=True)
        entry = _piece_entry(git_commit(root), piece, here, calibration if elsewhere else None)
        record["pieces"].append(entry)
        record["complete"] = False
        write_record(results, record)
        piece_runs = [r for r in plan if r.family in piece]
        # A first piece calibrates; a later one (--onto) measures with the first's calibration.
        if not onto:
            piece_runs += calibration_runs(root, profile, piece_runs)
        command = _snakemake_command(
            study.parent, cores, results, piece if piece != every else None, onto, overrides
        )
        progress = Progress(results, piece_runs)
        try:
            exit_code = _run_pipeline(command, root, progress, progress_every)
        finally:
            entry["finished_at"] = _now()
            write_record(results, record)
        if exit_code != 0:
            raise MeasureError(
                f"the pipeline stopped (exit {exit_code}); `mwlab measure` resumes it"
            )
        entry["done"] = True
        measured = finished_families(record)
        # Complete: the results folder holds every family (a later piece's does not).
        record["complete"] = measured >= set(every)
        write_record(results, record)
        click.echo(_next_step(results, profile, record["complete"], measured | set(earlier),
                              every, onto))  # fmt: skip


def _piece(
    families: str | None, every: list[str], earlier: list[str], onto: Path | None, profile: str
) -> list[str]:
    """The families this measurement measures: those named, else every one the dataset it
    adds to (`onto`) lacks; each must be the profile's and none that dataset's."""
    piece = sorted(set(families.split(","))) if families else sorted(set(every) - set(earlier))
    unknown = sorted(set(piece) - set(every))
    if unknown:
        raise MeasureError(
            f"--families: no family {', '.join(unknown)} in profile {profile} "
            f"(it has {', '.join(every)})"
        )
    if set(piece) & set(earlier):
        raise MeasureError(f"{onto} holds {', '.join(sorted(set(piece) & set(earlier)))} already")
    if not piece:
        raise MeasureError(f"{onto} holds every family of profile {profile}: nothing to measure")
    return piece


def _piece_entry(
    commit: str, piece: list[str], here: dict[str, Any], calibration: dict[str, Any] | None
) -> dict[str, Any]:
    """The record of a piece as it starts: its commit, families and machine, and the machine
    it was calibrated on where that is another (`calibration`)."""
    entry: dict[str, Any] = {
        "commit": commit,
        "families": piece,
        "machine": here,
        "started_at": _now(),
        "finished_at": None,
    }
    if calibration is not None:
        entry["calibrated_on"] = {key: calibration.get(key) for key in here}
    return entry


def _snakemake_command(
    profile_dir: Path,
    cores: int,
    results: Path,
    piece: list[str] | None,
    onto: Path | None,
    overrides: dict[str, Any],
) -> list[str]:
    """The measurement's Snakemake command: the profile's `measured` target into `results`,
    for a piece's families only (`piece`, None for all), onto an earlier piece's dataset."""
    config = [
        f"results={results}",
        *([f"piece={','.join(piece)}"] if piece else []),
        *([f"onto={onto}"] if onto else []),
        *(f"{key}={json.dumps(value)}" for key, value in overrides.items()),
    ]
    return [sys.executable, "-m", "snakemake", "--profile", str(profile_dir),
            "--cores", str(cores), "--config", *config, "--", "measured"]  # fmt: skip


def _run_pipeline(command: list[str], root: Path, progress: Progress, every_s: float) -> int:
    """Runs the measurement's Snakemake, with a progress line at its start, every `every_s`
    seconds and at its end; its exit code."""
    click.echo(progress.line(), err=True)
    stop = threading.Event()
    reporter = threading.Thread(target=_report, args=(progress, stop, every_s))
    reporter.daemon = True
    reporter.start()
    try:
        return subprocess.run(command, cwd=root, check=False, env=pipeline_env()).returncode
    finally:
        stop.set()
        click.echo(progress.line(), err=True)


def _next_step(
    results: Path,
    profile: str,
    complete: bool,
    held: set[str],
    every: list[str],
    onto: Path | None,
) -> str:
    """What the user does next: build the report of a complete folder, else archive the
    families measured so far (one dataset when they are every family, else a piece)."""
    if complete:
        return f"measure: {results} complete; `make paper PROFILE={profile}` builds its report"
    return (
        f"measure: {len(held)} of {len(every)} families measured"
        + (f" (with {onto})" if onto else "")
        + f"; `mwlab dataset archive --profile {profile}` archives them"
        + (" as one dataset" if len(held) == len(every) else " as a piece")
    )


def _dataset_call(ds: Path, results: Path) -> list[str]:
    return [
        "--configfile",
        str(ds / dataset.STUDY),
        "--config",
        f"results={results}",
        f"dataset={ds}",
        f"catalogue={ds / dataset.CATALOGUE}",
    ]


@click.command("paper")
@click.option("--profile", default="default", show_default=True)
@click.option("--dataset", "ds", type=click.Path(path_type=Path), help="A dataset folder.")
@click.option(
    "--results",
    type=click.Path(path_type=Path),
    help="Where a dataset's report is built. Default: results/reference/<profile>-<date>.",
)
@click.option("--cores", default=2, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("paper/report.pdf"))
def paper_command(
    profile: str, ds: Path | None, results: Path | None, cores: int, out: Path
) -> None:
    """Build the report and its supplement: from results/<profile> when `mwlab measure`
    completed it there, else from a reference dataset (--dataset, or the newest under data/,
    the profile's first)."""
    root = Path.cwd()
    measured = Path("results") / profile
    record_path = measured / RECORD
    complete = record_path.exists() and json.loads(record_path.read_text()).get("complete")
    if ds is None and complete:
        click.echo(f"paper: from the measurement in {measured}", err=True)
        args = ["--profile", str(study_file(root, profile).parent)]
        target = measured / "report.pdf"
    else:
        try:
            ds = ds or dataset.latest(root / dataset.ROOT, prefer=profile)
            dataset.verify(ds)
        except dataset.DatasetError as e:
            raise click.ClickException(str(e)) from None
        if not dataset.is_complete(ds):
            raise click.ClickException(
                f"{ds} is a piece of a measurement ({', '.join(dataset.families(ds))}), not a "
                f"report's data: measure the rest with `mwlab measure --onto {ds}`"
            )
        ds = ds.resolve()
        shown = ds.relative_to(root) if ds.is_relative_to(root) else ds
        results = results or Path("results") / "reference" / f"{ds.parent.name}-{ds.name}"
        click.echo(f"paper: from the reference dataset {shown}", err=True)
        args = _dataset_call(shown, results)
        target = results / "report.pdf"
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores), *args, "--", str(target)]
    if subprocess.run(command, cwd=root, check=False, env=pipeline_env()).returncode != 0:
        raise click.ClickException("the pipeline failed; see its output above")
    out.parent.mkdir(parents=True, exist_ok=True)
    # The supplement and its CSV tables are built with the report and travel beside it.
    copies = [(target, out), (target.with_name("supplement.pdf"), out.with_name("supplement.pdf"))]
    tables = root / target.parent / "tables"
    copies += [(t, out.parent / "tables" / t.name) for t in sorted(tables.glob("*.csv"))]
    for source, copy in copies:
        if copy.resolve() != (root / source).resolve():
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes((root / source).read_bytes())
    click.echo(f"paper: {out} and {out.with_name('supplement.pdf')}")


@click.group("dataset")
def dataset_group() -> None:
    """Reference datasets (data/<profile>/<date>/): archive, merge, verify, find."""


# Rules that only derive from finished runs: archiving reruns them over every finished piece.
_DERIVING = ("family_data", "run_tables", "validation", "provenance", "measured")


def _derive(
    root: Path,
    results: Path,
    profile: str,
    families: list[str],
    every: list[str],
    overrides: dict[str, Any] | None = None,
) -> None:
    """Brings the per-run tables, the validation and the provenance of `results` to every
    family measured there: each piece derived them for its own families only. Only deriving
    rules may run, so archiving never measures."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--profile",
        str(study_file(root, profile).parent),
        "--cores",
        "1",
        "--config",
        f"results={results}",
        *([f"piece={','.join(families)}"] if families != every else []),
        *(f"{key}={json.dumps(value)}" for key, value in (overrides or {}).items()),
        "--allowed-rules",
        *_DERIVING,
        "--",
        "measured",
    ]
    if subprocess.run(command, cwd=root, check=False, env=pipeline_env()).returncode != 0:
        raise click.ClickException(f"cannot derive the tables of {results}; see above")


def _new_dataset(profile: str) -> Path:
    """data/<profile>/<today>; a second dataset of the same day gets the next suffix: -2, -3."""
    out = base = dataset.ROOT / profile / dt.date.today().isoformat()
    n = 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def _verdicts(root: Path, staging: Path) -> None:
    """Builds a complete merged dataset's findings from it, as its own report gives them."""
    work = Path("results") / "reference" / f".verdicts-{staging.name}"
    dataset.write_manifest(staging)
    command = [sys.executable, "-m", "snakemake", "--cores", "2", *_dataset_call(staging, work)]
    command += ["--", str(work / "data" / dataset.VERDICTS)]
    if subprocess.run(command, cwd=root, check=False, env=pipeline_env()).returncode != 0:
        raise click.ClickException("cannot build the merged dataset's findings; see above")
    shutil.copy2(work / "data" / dataset.VERDICTS, staging / dataset.VERDICTS)
    shutil.rmtree(work, ignore_errors=True)


@dataset_group.command("archive")
@click.option("--profile", default="default", show_default=True)
@click.option("--results", type=click.Path(path_type=Path), help="Default: results/<profile>.")
@click.option("--out", type=click.Path(path_type=Path), help="Default: data/<profile>/<today>[-N].")
def archive_command(profile: str, results: Path | None, out: Path | None) -> None:
    """Archive a measurement as a reference dataset: a complete one, or the pieces measured
    so far (a partial dataset, merged with the earlier pieces' one after `--onto`)."""
    root = Path.cwd()
    results = results or Path("results") / profile
    record_path = results / RECORD
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    every = sorted({r.family for r in planned_runs(root, profile, record.get("overrides"))})
    # A record from before pieces named their families holds the whole profile.
    measured = finished_families(record) or (set(every) if record.get("complete") else set())
    if not measured:
        raise click.ClickException(
            f"{results}: no finished `mwlab measure` piece there (see its {RECORD}); finish one"
        )
    onto = Path(record["onto"]) if record.get("onto") else None
    earlier = dataset.families(onto) if onto else []
    held = sorted(measured | set(earlier))
    complete = set(held) >= set(every)
    out = out or _new_dataset(profile)
    families = sorted(measured)
    if len(record.get("pieces", [])) > 1 or families != every:
        _derive(root, results, profile, families, every, record.get("overrides"))
    pieces = [*(dataset.provenance(onto).get("pieces", []) if onto else []), *record["pieces"]]
    try:
        staging = dataset.stage(
            results, out, families, results / dataset.STUDY, results / dataset.CATALOGUE, onto
        )
        if onto:
            doc = provenance.of_dataset(
                staging,
                profile,
                {"pieces": pieces, "fingerprint": record.get("fingerprint")},
                {
                    "study_sha256": dataset.sha256(staging / dataset.STUDY),
                    "catalogue_sha256": dataset.sha256(staging / dataset.CATALOGUE),
                },
            )
        else:
            doc = json.loads((staging / dataset.PROVENANCE).read_text())
        doc |= {
            "pieces": pieces,
            "commits": list(dict.fromkeys(p["commit"] for p in pieces)),
            "families": held,
            "complete": complete,
        }
        (staging / dataset.PROVENANCE).write_text(json.dumps(doc, indent=2, sort_keys=True))
        # The report, and so its findings, needs every family of the catalogue.
        reportable = set(every) == set(load_catalogue(results / dataset.CATALOGUE))
        if complete and reportable and not (staging / dataset.VERDICTS).exists():
            _verdicts(root, staging)
        made = dataset.seal(staging, out, doc)
    except dataset.DatasetError as e:
        raise click.ClickException(str(e)) from None
    size = sum(p.stat().st_size for p in made.rglob("*") if p.is_file())
    click.echo(f"dataset: {made} ({size / 2**20:.1f} MiB)")
    if not complete:
        click.echo(
            f"dataset: a piece ({len(held)} of {len(every)} families); measure the rest with "
            f"`mwlab measure --profile {profile} --onto {made}` and archive again"
        )
    elif onto:
        click.echo(f"dataset: holds every piece of {onto}, which it supersedes")
    if complete and not (made / dataset.VERDICTS).exists():
        click.echo(f"dataset: no {dataset.VERDICTS}: profile {profile} leaves families out")


@dataset_group.command("merge")
@click.argument("first", type=click.Path(path_type=Path))
@click.argument("second", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), help="Default: data/<profile>/<today>[-N].")
@click.option(
    "--replace",
    is_flag=True,
    help="SECOND's studies replace those FIRST holds too (studies measured again).",
)
@click.option(
    "--families",
    help="SECOND holds only these families (comma-separated), measured again in a later "
    "session: they replace FIRST's, whose studies and calibration stay.",
)
def merge_command(
    first: Path, second: Path, out: Path | None, replace: bool, families: str | None
) -> None:
    """Merge two datasets of one profile that measured different studies, each with its own
    code (mwlab/datasetmerge.py): SECOND's plan must plan FIRST's families as FIRST's did."""
    root = Path.cwd()
    if families and replace:
        raise click.UsageError("--families and --replace: choose one")
    chosen = [f.strip() for f in (families or "").split(",") if f.strip()]
    try:
        if chosen:
            held = datasetmerge.check_families(first, second, chosen)
        else:
            held = datasetmerge.check(first, second, replace)
        replaced = sorted(set(datasetmerge.studies(first)) - set(held[0]))
        profile = str(dataset.provenance(second)["profile"])
        out = out or _new_dataset(profile)
        staging = datasetmerge.stage(first, second, out, held, bool(chosen))
        doc = datasetmerge.provenance_of(staging, first, second, held, bool(chosen))
        every = {r.family for r in planned_runs(root, profile)}
        doc["complete"] = set(doc["families"]) >= every
        (staging / dataset.PROVENANCE).write_text(json.dumps(doc, indent=2, sort_keys=True))
        reportable = every == set(load_catalogue(staging / dataset.CATALOGUE))
        if doc["complete"] and reportable:
            _verdicts(root, staging)
        made = dataset.seal(staging, out, doc)
    except (datasetmerge.MergeError, dataset.DatasetError) as e:
        raise click.ClickException(str(e)) from None
    size = sum(p.stat().st_size for p in made.rglob("*") if p.is_file())
    studies = ", ".join(f"{s} ({v['commit'][:12]})" for s, v in doc["study_commits"].items())
    click.echo(f"dataset: {made} ({size / 2**20:.1f} MiB): studies {studies}")
    if replaced:
        click.echo(f"dataset: study {', '.join(replaced)} taken from {second}, not {first}")
    if chosen:
        click.echo(f"dataset: family {', '.join(chosen)} taken from {second}, not {first}")
    if not doc["complete"]:
        click.echo(f"dataset: a piece ({len(doc['families'])} of {len(every)} families)")


@dataset_group.command("verify")
@click.argument("folder", type=click.Path(path_type=Path))
def verify_command(folder: Path) -> None:
    """Check a dataset against its manifest."""
    try:
        entries = dataset.verify(folder)
    except dataset.DatasetError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"dataset: {folder}: {len(entries)} files match {dataset.MANIFEST}")


@dataset_group.command("latest")
@click.option("--profile", default="default", show_default=True)
def latest_command(profile: str) -> None:
    """Print the newest dataset (the profile's, else any)."""
    try:
        click.echo(dataset.latest(dataset.ROOT, prefer=profile))
    except dataset.DatasetError as e:
        raise click.ClickException(str(e)) from None
