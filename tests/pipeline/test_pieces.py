"""A measurement in pieces (mwlab/measure.py): a piece of some families archives as a partial
dataset, the next piece measures the families it lacks with its calibration (`--onto`), and
the two archive as one dataset whose provenance counts every run and lists both pieces."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from analysis import dataset
from mwlab import measure
from tests.capabilities import provided

Mwlab = Callable[..., subprocess.CompletedProcess[str]]
ROOT = Path(__file__).resolve().parents[2]


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def test_a_measurement_in_pieces_archives_as_one_dataset(tmp_path: Path, mwlab: Mwlab) -> None:
    provided((ROOT / "build" / "loadgen.jar").exists(), "build/loadgen.jar", "make build")
    data = tmp_path / "data" / "pieces"
    first, second = tmp_path / "first", tmp_path / "second"
    out = _ok(mwlab("measure", "--profile", "pieces", "--results", str(first),
                     "--families", "baseline_direct,scale_check"))  # fmt: skip
    assert "2 of 3 families measured" in out
    assert json.loads((first / measure.RECORD).read_text())["complete"] is False

    partial = data / "2026-01-01"
    out = _ok(mwlab("dataset", "archive", "--profile", "pieces", "--results", str(first),
                     "--out", str(partial)))  # fmt: skip
    assert "a piece (2 of 3 families)" in out
    dataset.verify(partial)
    doc = dataset.provenance(partial)
    assert doc["complete"] is False and doc["families"] == ["baseline_direct", "scale_check"]
    with pytest.raises(dataset.DatasetError, match="no complete reference dataset"):
        dataset.latest(tmp_path / "data", prefer="pieces")
    refused = mwlab("paper", "--dataset", str(partial), "--results", str(tmp_path / "r"))
    assert refused.returncode != 0 and "is a piece of a measurement" in refused.stderr

    # A piece of a family the dataset holds already is refused before it measures.
    again = mwlab("measure", "--profile", "pieces", "--results", str(tmp_path / "again"),
                   "--onto", str(partial), "--families", "scale_check")  # fmt: skip
    assert again.returncode != 0 and "holds scale_check already" in again.stderr
    assert not (tmp_path / "again" / "runs").exists()

    _ok(mwlab("measure", "--profile", "pieces", "--results", str(second),
               "--onto", str(partial)))  # fmt: skip
    # Only the family the dataset lacked, and no calibration run: the first piece's
    # calibration set its budgets.
    assert sorted(p.name for p in (second / "runs").iterdir()) == ["baseline_middleware"]
    assert (second / "calibration.json").read_bytes() == (partial / "calibration.json").read_bytes()

    merged = data / "2026-01-02"
    out = _ok(mwlab("dataset", "archive", "--profile", "pieces", "--results", str(second),
                     "--out", str(merged)))  # fmt: skip
    assert f"holds every piece of {partial}" in out
    dataset.verify(merged)
    doc = dataset.provenance(merged)
    assert doc["complete"] is True and len(doc["pieces"]) == 2
    assert (
        doc["families"]
        == dataset.families(merged)
        == [
            "baseline_direct",
            "baseline_middleware",
            "scale_check",
        ]
    )
    times = pd.read_parquet(merged / "data" / "run_times.parquet")
    assert doc["runs"]["total"] == len(times) == times["run"].nunique()
    assert set(times["family"]) == set(doc["families"])
    assert dataset.latest(tmp_path / "data", prefer="pieces") == merged
    # The report needs every family of the catalogue: this profile's dataset has no verdicts.
    assert "leaves families out" in out and not (merged / dataset.VERDICTS).exists()


def test_a_later_piece_refuses_a_dataset_of_other_code(tmp_path: Path) -> None:
    folder = tmp_path / "pieces" / "2026-01-01"
    (folder / "data" / "baseline_direct").mkdir(parents=True)
    for name in (dataset.STUDY, dataset.CATALOGUE):
        (folder / name).write_text("{}\n")
    doc = {"profile": "pieces", "fingerprint": "0" * 64, "commit": "abc", "complete": False}
    (folder / dataset.PROVENANCE).write_text(json.dumps(doc))
    dataset.write_manifest(folder)
    code = measure.fingerprint(ROOT, "pieces")
    with pytest.raises(measure.MeasureError, match="other measurement code"):
        measure.check_onto(folder, "pieces", code)
    with pytest.raises(measure.MeasureError, match="holds profile 'pieces', not 'quick'"):
        measure.check_onto(folder, "quick", code)
    doc["fingerprint"] = code
    (folder / dataset.PROVENANCE).write_text(json.dumps(doc))
    with pytest.raises(measure.MeasureError, match="does not match its MANIFEST"):
        measure.check_onto(folder, "pieces", code)
    dataset.write_manifest(folder)
    assert measure.check_onto(folder, "pieces", code) == ["baseline_direct"]
    shutil.rmtree(folder)
