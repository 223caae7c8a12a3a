"""A reference dataset: the measured part of a profile's results, archived in the repository so
that the report is rebuilt from it in minutes (`make paper`), without measuring again.

A dataset holds what the analysis reads from the measurement, and nothing else: the tidy
tables of every family (`data/<family>/*.parquet`, as rule family_data writes them), the
per-run tables of the reproduction appendix and the testbed section (`data/run_times.parquet`,
`data/testbed_runs.parquet`), the calibration, the delay check and the environment it was
measured in. These keep their paths relative to the results folder, so that restoring a
dataset is copying it into one. Beside them:

- `study.yaml` and `catalogue.yaml`: the profile and the catalogue it was measured with, which
  plan the analysis of the restored data (a later edit of the catalogue does not change it);
- `findings.json`: the verdicts the measurement's own report gave, which the report of a new
  measurement compares its own with (analysis/agreement.py);
- `provenance.json`: commit, profile, hashes, machine, dates, the pieces it was measured in,
  the steal and load the runs saw, and the stable, unstable and failed counts;
- `MANIFEST.sha256`: one `sha256  path` line per file (the `sha256sum` format, so
  `sha256sum -c MANIFEST.sha256` checks it too). A dataset whose files do not match it is
  refused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

MANIFEST = "MANIFEST.sha256"
PROVENANCE = "provenance.json"
STUDY = "study.yaml"
CATALOGUE = "catalogue.yaml"
VERDICTS = "findings.json"

# The tables rule family_data writes per family.
FAMILY_TABLES = (
    "windows",
    "runs",
    "points",
    "manifests",
    "histograms",
    "queue",
    "pools",
    "pool_requests",
    "middlewares",
)
# Per-run tables read from the runs' manifests (rule run_tables).
RUN_TABLES = ("run_times", "testbed_runs")
# Measured files a profile may lack: no calibration without the scale model, no delay check
# without emulated delays.
OPTIONAL = ("calibration.json", "delay_check.json")
ENVIRONMENT = ("environment/tools.json", "environment/host.json")
# Where reference datasets live in the repository: data/<profile>/<YYYY-MM-DD>/.
ROOT = Path("data")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(-\d+)?$")


class DatasetError(Exception):
    """A dataset is missing, incomplete or does not match its manifest."""


def measured_files(families: Iterable[str]) -> list[str]:
    """The paths, relative to a results folder, that the analysis reads from a measurement
    of these families (OPTIONAL ones only where they exist)."""
    paths = [f"data/{f}/{t}.parquet" for f in sorted(families) for t in FAMILY_TABLES]
    paths += [f"data/{t}.parquet" for t in RUN_TABLES]
    paths += [*ENVIRONMENT, PROVENANCE]
    return paths


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(folder: Path) -> Path:
    """Hashes every file below `folder` (but the manifest) into its MANIFEST.sha256."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)
    lines = [f"{sha256(p)}  {p.relative_to(folder).as_posix()}" for p in files]
    target = folder / MANIFEST
    target.write_text("\n".join(lines) + "\n")
    return target


def read_manifest(folder: Path) -> dict[str, str]:
    path = folder / MANIFEST
    if not path.is_file():
        raise DatasetError(
            f"{folder}: no {MANIFEST}; not a dataset (make one with `mwlab dataset archive`)"
        )
    entries = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        digest, sep, name = line.partition("  ")
        if not sep or not re.fullmatch(r"[0-9a-f]{64}", digest) or not name:
            raise DatasetError(f"{path}:{number}: not a `sha256  path` line: {line!r}")
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise DatasetError(f"{path}:{number}: a path outside the dataset: {name!r}")
        entries[name] = digest
    return entries


def verify(folder: Path) -> dict[str, str]:
    """The manifest's entries, after checking that the folder holds exactly those files with
    those hashes; raises DatasetError naming every file that differs."""
    if not folder.is_dir():
        raise DatasetError(f"{folder}: no such dataset folder")
    entries = read_manifest(folder)
    present = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != MANIFEST
    }
    problems = [f"missing: {n}" for n in sorted(set(entries) - present)]
    problems += [f"not in the manifest: {n}" for n in sorted(present - set(entries))]
    problems += [
        f"changed (sha256 differs): {n}"
        for n in sorted(set(entries) & present)
        if sha256(folder / n) != entries[n]
    ]
    for required in (PROVENANCE, STUDY, CATALOGUE):
        if required not in entries:
            problems.append(f"lacks {required}")
    if problems:
        raise DatasetError(
            f"{folder}: the dataset does not match its {MANIFEST}:\n  " + "\n  ".join(problems)
        )
    return entries


def provenance(folder: Path) -> dict[str, Any]:
    return json.loads((folder / PROVENANCE).read_text())


def archive(
    results: Path,
    dest: Path,
    families: Iterable[str],
    study: Path,
    catalogue: Path,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Copies the measured files of `results` into a new dataset folder `dest`, with the
    profile and catalogue it was measured with, and writes its manifest last."""
    if dest.exists():
        raise DatasetError(f"{dest}: exists already; a dataset is never overwritten")
    names = measured_files(families)
    missing = [n for n in names if not (results / n).is_file()]
    if missing:
        raise DatasetError(
            f"{results}: the measurement is incomplete, {len(missing)} file(s) missing, e.g. "
            + ", ".join(missing[:5])
            + " (run the pipeline to the report first)"
        )
    names += [n for n in OPTIONAL if (results / n).is_file()]
    staging = dest.with_name(dest.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    for name in names:
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(results / name, target)
    # The verdicts the measurement's own report gave, for a later re-measurement to compare.
    if (results / "data" / VERDICTS).is_file():
        shutil.copy2(results / "data" / VERDICTS, staging / VERDICTS)
    shutil.copy2(study, staging / STUDY)
    shutil.copy2(catalogue, staging / CATALOGUE)
    doc = json.loads((staging / PROVENANCE).read_text())
    doc["archived_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    doc.update(extra or {})
    (staging / PROVENANCE).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    write_manifest(staging)
    staging.rename(dest)
    return dest


def restore(folder: Path, results: Path, names: Iterable[str]) -> None:
    """Copies `names` (paths relative to the dataset) into `results`, after verifying the
    whole dataset against its manifest."""
    entries = verify(folder)
    absent = [n for n in names if n not in entries]
    if absent:
        raise DatasetError(
            f"{folder}: the analysis needs files the dataset lacks: " + ", ".join(absent[:5])
        )
    for name in names:
        target = results / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / name, target)


def candidates(root: Path = ROOT) -> list[Path]:
    """Every dataset folder under root (`<profile>/<date>`), oldest first."""
    if not root.is_dir():
        return []
    found = [
        d
        for d in root.glob("*/*")
        if d.is_dir() and _DATE.match(d.name) and (d / MANIFEST).is_file()
    ]
    return sorted(found, key=_order)


def _order(folder: Path) -> tuple[str, int, str]:
    """Date, then the same day's suffix as a number (-2 before -10), then the profile."""
    date, suffix = folder.name[:10], folder.name[11:]
    return (date, int(suffix or 1), folder.parent.name)


def latest(root: Path = ROOT, prefer: str = "default") -> Path:
    """The newest dataset of the profile `prefer`, else the newest of any profile."""
    found = candidates(root)
    if not found:
        raise DatasetError(
            f"no reference dataset under {root}/ (measure one with `make measure`, "
            "then `mwlab dataset archive`)"
        )
    preferred = [d for d in found if d.parent.name == prefer]
    return (preferred or found)[-1]
