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

A measurement longer than a sitting is measured in pieces of whole families (`mwlab measure
--families`). A piece archives as a partial dataset (`"complete": false` and its `families`
in the provenance), which `latest` passes over; the next piece measures with its calibration
(`--onto`) and archives merged with it into a new dataset, whose provenance is computed again
from the merged tables and lists every piece. Two datasets that measured different studies,
each with its own code, merge into one (`mwlab dataset merge`, mwlab/datasetmerge.py).
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

import pandas as pd
import pyarrow.parquet as pq

from analysis.parse import counters
from common.environment import HOST_RECORD, TOOLS_RECORD

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
    "db_counters",
)
# Family tables added after datasets were archived without them, each with the empty table
# that stands for it there: a dataset measured before the table existed restores it empty,
# and its report says what that table would have shown was not measured.
LATER_TABLES = {"db_counters": lambda: counters.table([])}
# Per-run tables read from the runs' manifests (rule run_tables).
RUN_TABLES = ("run_times", "testbed_runs")
_RUN_TABLE_FILES = tuple(f"data/{t}.parquet" for t in RUN_TABLES)
# Measured files a profile may lack: no calibration without the scale model, no delay check
# without emulated delays.
OPTIONAL = ("calibration.json", "delay_check.json")
ENVIRONMENT = (TOOLS_RECORD, HOST_RECORD)
# A measurement on ssh machines: each study's preflight record of them (testbed/preflight.py).
MACHINE_RECORDS = "hosts/*/preflight.json"
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


def compact(source: Path, target: Path) -> None:
    """Writes the parquet table `source` to `target` compactly: zstd, and neither column
    statistics nor the serialised Arrow schema, which are most of a wide table's footer (the
    quick profile's tables: 6.0 MiB as the pipeline writes them, 3.2 MiB so). A table that
    would not read back equal is copied as it is."""
    table = pq.read_table(source)
    pq.write_table(
        table,
        target,
        compression="zstd",
        compression_level=9,
        write_statistics=False,
        store_schema=False,
    )
    try:
        pd.testing.assert_frame_equal(pd.read_parquet(target), table.to_pandas())
    except AssertionError:
        shutil.copyfile(source, target)


def families(folder: Path) -> list[str]:
    """The families a dataset holds tables of."""
    return sorted(p.name for p in (folder / "data").iterdir() if p.is_dir())


def is_complete(folder: Path) -> bool:
    """Whether a dataset holds every family of its profile (a piece's does not)."""
    return provenance(folder).get("complete", True) is not False


def stage(
    results: Path,
    dest: Path,
    measured: Iterable[str],
    study: Path,
    catalogue: Path,
    onto: Path | None = None,
) -> Path:
    """Copies the measured files of the families `measured` from `results`, with the profile
    and catalogue they were measured with, into `dest`'s staging folder, which it returns;
    with `onto`, merged with that dataset (earlier pieces of the same measurement): its files
    first, then the per-run tables of both. `seal` finishes the dataset."""
    if dest.exists():
        raise DatasetError(f"{dest}: exists already; a dataset is never overwritten")
    measured = sorted(measured)
    names = measured_files(measured)
    missing = [n for n in names if not (results / n).is_file()]
    if missing:
        raise DatasetError(
            f"{results}: the measurement is incomplete, {len(missing)} file(s) missing, e.g. "
            + ", ".join(missing[:5])
            + " (run the pipeline to the report first)"
        )
    names += [n for n in OPTIONAL if (results / n).is_file()]
    names += sorted(p.relative_to(results).as_posix() for p in results.glob(MACHINE_RECORDS))
    staging = dest.with_name(dest.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    earlier: list[str] = []
    if onto is not None:
        entries = verify(onto)
        earlier = families(onto)
        twice = sorted(set(earlier) & set(measured))
        if twice:
            raise DatasetError(
                f"{onto} holds {', '.join(twice)} already; a piece adds other families"
            )
        for name in entries:
            if name not in (PROVENANCE, VERDICTS):
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(onto / name, staging / name)
    for name in names:
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if onto is not None and name in _RUN_TABLE_FILES:
            merged = pd.concat([pd.read_parquet(onto / name), pd.read_parquet(results / name)])
            merged = merged.drop_duplicates("run", keep="last").reset_index(drop=True)
            merged.to_parquet(target.with_suffix(".tmp"), index=False)
            compact(target.with_suffix(".tmp"), target)
            target.with_suffix(".tmp").unlink()
        elif name.endswith(".parquet"):
            compact(results / name, target)
        elif onto is None or not target.exists():
            # The earlier pieces' calibration, environment and delay check stay the dataset's.
            shutil.copy2(results / name, target)
    # The verdicts the measurement's own report gave, for a later re-measurement to compare.
    if onto is None and (results / "data" / VERDICTS).is_file():
        shutil.copy2(results / "data" / VERDICTS, staging / VERDICTS)
    shutil.copy2(study, staging / STUDY)
    shutil.copy2(catalogue, staging / CATALOGUE)
    return staging


def seal(staging: Path, dest: Path, doc: Mapping[str, Any]) -> Path:
    """Writes the provenance `doc` (stamped with the time) and the manifest into the staging
    folder, last, and moves it to `dest`."""
    doc = {**doc, "archived_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    (staging / PROVENANCE).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    write_manifest(staging)
    staging.rename(dest)
    return dest


def archive(
    results: Path,
    dest: Path,
    families: Iterable[str],
    study: Path,
    catalogue: Path,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Archives a whole measurement of `results` (no pieces) as the dataset `dest`."""
    staging = stage(results, dest, families, study, catalogue)
    doc = json.loads((staging / PROVENANCE).read_text())
    return seal(staging, dest, {**doc, **(extra or {})})


def restore(folder: Path, results: Path, names: Iterable[str]) -> None:
    """Copies `names` (paths relative to the dataset) into `results`, after verifying the
    whole dataset against its manifest."""
    entries = verify(folder)
    later = {n for n in names if n not in entries and _later_table(n) is not None}
    absent = [n for n in names if n not in entries and n not in later]
    if absent:
        raise DatasetError(
            f"{folder}: the analysis needs files the dataset lacks: " + ", ".join(absent[:5])
        )
    for name in names:
        target = results / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name in later:
            _later_table(name)().to_parquet(target, index=False)  # type: ignore[misc]
        else:
            shutil.copyfile(folder / name, target)


def _later_table(name: str):
    """The maker of the empty table for `data/<family>/<table>.parquet` when that table is
    one of LATER_TABLES, else None."""
    parts = Path(name).parts
    if len(parts) == 3 and parts[0] == "data" and parts[2].endswith(".parquet"):
        return LATER_TABLES.get(parts[2][: -len(".parquet")])
    return None


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
    """The newest complete dataset of the profile `prefer`, else the newest complete one of
    any profile (a piece's partial dataset is never chosen)."""
    found = [d for d in candidates(root) if is_complete(d)]
    if not found:
        raise DatasetError(
            f"no complete reference dataset under {root}/ (measure one with `make measure`, "
            "then `mwlab dataset archive`)"
        )
    preferred = [d for d in found if d.parent.name == prefer]
    return (preferred or found)[-1]
