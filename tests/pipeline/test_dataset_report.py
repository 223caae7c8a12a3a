"""The smoke measurement archived as a reference dataset rebuilds its report without measuring
(`mwlab dataset archive`, `mwlab paper --dataset`) and gives the verdicts of the measurement's
own report, and a dataset that does not match its manifest is refused before anything is
built.

`make test` runs this after the smoke workflow, with MWLAB_REQUIRE_SMOKE_REPORT=1: without
the smoke measurement the tests fail there, and are skipped in a plain pytest run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from analysis import dataset

Mwlab = Callable[..., subprocess.CompletedProcess[str]]
ROOT = Path(__file__).resolve().parents[2]
# The smoke workflow's folder: `make test-workflow` names it (SMOKE_RESULTS).
SMOKE = ROOT / os.environ.get("MWLAB_SMOKE_RESULTS", "results/smoke")


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory, mwlab: Mwlab) -> Path:
    record = SMOKE / "measurement.json"
    if not (record.exists() and json.loads(record.read_text()).get("complete")):
        if os.environ.get("MWLAB_REQUIRE_SMOKE_REPORT") == "1":
            pytest.fail(f"no complete smoke measurement in {SMOKE}")
        pytest.skip(f"no complete smoke measurement in {SMOKE} (`mwlab measure --profile smoke`)")
    folder = tmp_path_factory.mktemp("data") / "smoke" / "2026-01-01"
    # A copy without the report's verdicts: archiving builds them from the dataset itself.
    results = tmp_path_factory.mktemp("results") / "smoke"
    shutil.copytree(SMOKE, results, ignore=shutil.ignore_patterns("report.pdf", "paper"))
    (results / "data" / dataset.VERDICTS).unlink()
    made = mwlab(
        "dataset", "archive", "--profile", "smoke", "--results", str(results), "--out", str(folder)
    )
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    return folder


def test_the_dataset_carries_the_verdicts_of_the_measurements_own_report(archived: Path) -> None:
    own = json.loads((SMOKE / "data" / dataset.VERDICTS).read_text())
    assert json.loads((archived / dataset.VERDICTS).read_text()) == own


def test_the_report_is_rebuilt_from_the_dataset_alone(
    archived: Path, tmp_path: Path, mwlab: Mwlab
) -> None:
    assert not any(p.name == "run.json" for p in archived.rglob("*"))
    results = tmp_path / "rebuilt"
    pdf = tmp_path / "report.pdf"
    built = mwlab("paper", "--dataset", str(archived), "--results", str(results), "--out", str(pdf))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert pdf.read_bytes()[:5] == b"%PDF-"
    # Nothing was measured: no run, no series, no calibration run.
    assert not (results / "runs").exists() and not (results / "series").exists()
    provenance = json.loads((archived / dataset.PROVENANCE).read_text())
    macros = (results / "paper" / "provenance.tex").read_text()
    assert provenance["commit"][:12] in macros
    assert "reference dataset" in macros
    # The restored tables are the archived ones, byte for byte.
    for name in ("data/validation.parquet",):
        assert (results / name).exists()
    for name in dataset.measured_files([]):
        assert (results / name).read_bytes() == (archived / name).read_bytes()


def test_a_tampered_dataset_is_refused(archived: Path, tmp_path: Path, mwlab: Mwlab) -> None:
    copy = tmp_path / "smoke" / "2026-01-02"
    shutil.copytree(archived, copy)
    points = next(copy.glob("data/*/points.parquet"))
    points.write_bytes(points.read_bytes() + b"\0")
    built = mwlab("paper", "--dataset", str(copy), "--results", str(tmp_path / "r"))
    assert built.returncode != 0
    assert "does not match its MANIFEST.sha256" in built.stderr
    assert f"changed (sha256 differs): {points.relative_to(copy)}" in built.stderr
    assert not (tmp_path / "r").exists()
