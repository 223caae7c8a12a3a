"""Reference datasets (analysis/dataset.py): archived with a manifest, refused when a file
differs from it, restored byte for byte, and the newest one found."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import dataset

FAMILIES = ["baseline_direct", "multiget"]


def _results(root: Path) -> Path:
    """A results folder with every measured file of two families, as the pipeline writes them."""
    results = root / "results" / "quick"
    for family in FAMILIES:
        for table in dataset.FAMILY_TABLES:
            path = results / "data" / family / f"{table}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame({"run": [f"{family}/p/rep1"], "throughput_ops": [1234.5]}).to_parquet(path)
    for table in dataset.RUN_TABLES:
        pd.DataFrame({"run": ["r"], "wall_s": [6.0]}).to_parquet(
            results / "data" / f"{table}.parquet"
        )
    (results / "environment").mkdir()
    for name in dataset.ENVIRONMENT:
        (results / name).write_text(json.dumps({"cores": 2}))
    (results / "calibration.json").write_text("{}")
    (results / dataset.PROVENANCE).write_text(json.dumps({"profile": "quick"}))
    (results / dataset.STUDY).write_text("profile: quick\n")
    (results / dataset.CATALOGUE).write_text("families: {}\n")
    # Raw runs stay out of a dataset.
    (results / "runs" / "x").mkdir(parents=True)
    (results / "runs" / "x" / "run.json").write_text("{}")
    return results


def _archive(tmp_path: Path, name: str = "2026-11-25") -> Path:
    results = _results(tmp_path)
    return dataset.archive(
        results,
        tmp_path / "data" / "quick" / name,
        FAMILIES,
        results / dataset.STUDY,
        results / dataset.CATALOGUE,
    )


def test_archive_holds_the_measured_files_and_a_matching_manifest(tmp_path: Path) -> None:
    folder = _archive(tmp_path)
    entries = dataset.verify(folder)
    assert "data/multiget/points.parquet" in entries
    assert "calibration.json" in entries and dataset.STUDY in entries
    assert not any(name.startswith("runs/") for name in entries)
    assert json.loads((folder / dataset.PROVENANCE).read_text())["archived_at"]
    # Tables are stored compactly, and read back as the pipeline wrote them.
    name = "data/multiget/points.parquet"
    pd.testing.assert_frame_equal(
        pd.read_parquet(folder / name), pd.read_parquet(tmp_path / "results" / "quick" / name)
    )
    # The manifest is sha256sum's format.
    line = (folder / dataset.MANIFEST).read_text().splitlines()[0]
    digest, name = line.split("  ")
    assert digest == dataset.sha256(folder / name)


def test_a_changed_file_is_refused_and_named(tmp_path: Path) -> None:
    folder = _archive(tmp_path)
    target = folder / "data" / "multiget" / "points.parquet"
    pd.DataFrame({"run": ["multiget/p/rep1"], "throughput_ops": [9999.0]}).to_parquet(target)
    with pytest.raises(
        dataset.DatasetError, match=r"changed \(sha256 differs\): data/multiget/points"
    ):
        dataset.verify(folder)
    with pytest.raises(dataset.DatasetError):
        dataset.restore(folder, tmp_path / "out", ["data/multiget/points.parquet"])
    assert not (tmp_path / "out").exists()


def test_missing_and_unlisted_files_are_refused(tmp_path: Path) -> None:
    folder = _archive(tmp_path)
    (folder / "data" / "baseline_direct" / "runs.parquet").unlink()
    (folder / "notes.txt").write_text("extra")
    with pytest.raises(dataset.DatasetError) as caught:
        dataset.verify(folder)
    assert "missing: data/baseline_direct/runs.parquet" in str(caught.value)
    assert "not in the manifest: notes.txt" in str(caught.value)


def test_a_manifest_line_that_escapes_the_folder_is_refused(tmp_path: Path) -> None:
    folder = _archive(tmp_path)
    manifest = folder / dataset.MANIFEST
    manifest.write_text(manifest.read_text() + f"{'0' * 64}  ../outside\n")
    with pytest.raises(dataset.DatasetError, match="outside the dataset"):
        dataset.verify(folder)


def test_an_incomplete_measurement_is_not_archived(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / "data" / "multiget" / "windows.parquet").unlink()
    with pytest.raises(dataset.DatasetError, match="incomplete"):
        dataset.archive(
            results, tmp_path / "d", FAMILIES, results / "study.yaml", results / "catalogue.yaml"
        )
    assert not (tmp_path / "d").exists()


def test_restore_copies_byte_for_byte(tmp_path: Path) -> None:
    folder = _archive(tmp_path)
    names = dataset.measured_files(FAMILIES)
    dataset.restore(folder, tmp_path / "restored", names)
    for name in names:
        assert (tmp_path / "restored" / name).read_bytes() == (folder / name).read_bytes()


def test_latest_prefers_the_profile_then_the_newest(tmp_path: Path) -> None:
    older = _archive(tmp_path, "2026-11-20")
    newer = dataset.archive(
        tmp_path / "results" / "quick",
        tmp_path / "data" / "quick" / "2026-11-25",
        FAMILIES,
        tmp_path / "results" / "quick" / dataset.STUDY,
        tmp_path / "results" / "quick" / dataset.CATALOGUE,
    )
    root = tmp_path / "data"
    assert dataset.latest(root, prefer="quick") == newer
    # The same day's later measurements by their number, not as text.
    second, tenth = (root / "quick" / f"2026-11-25-{n}" for n in (2, 10))
    for folder in (second, tenth):
        shutil.copytree(newer, folder)
    assert dataset.latest(root, prefer="quick") == tenth
    shutil.rmtree(second)
    shutil.rmtree(tenth)
    assert dataset.latest(root, prefer="default") == newer  # none of default: the newest
    assert older in dataset.candidates(root)
    with pytest.raises(dataset.DatasetError, match="no complete reference dataset"):
        dataset.latest(tmp_path / "nothing")


def _piece(tmp_path: Path, name: str, family: str, calibration: str) -> Path:
    """A results folder that measured one family, with its own per-run rows and calibration."""
    results = _results(tmp_path / name)
    shutil.rmtree(results / "data" / ({*FAMILIES} - {family}).pop())
    for table in dataset.RUN_TABLES:
        pd.DataFrame({"run": [f"{family}/p/rep1"], "wall_s": [6.0]}).to_parquet(
            results / "data" / f"{table}.parquet"
        )
    (results / "calibration.json").write_text(calibration)
    return results


def test_a_piece_merges_onto_the_dataset_of_the_earlier_pieces(tmp_path: Path) -> None:
    first = _piece(tmp_path, "a", "baseline_direct", '{"speed": 1}')
    partial = tmp_path / "data" / "quick" / "2026-11-25"
    staged = dataset.stage(first, partial, ["baseline_direct"], first / "study.yaml",
                           first / "catalogue.yaml")  # fmt: skip
    dataset.seal(staged, partial, {"profile": "quick", "complete": False})
    assert dataset.families(partial) == ["baseline_direct"]
    assert not dataset.is_complete(partial)
    with pytest.raises(dataset.DatasetError, match="no complete reference dataset"):
        dataset.latest(tmp_path / "data", prefer="quick")  # a piece is never the newest

    second = _piece(tmp_path, "b", "multiget", '{"speed": 2}')
    merged = tmp_path / "data" / "quick" / "2026-11-26"
    staged = dataset.stage(second, merged, ["multiget"], second / "study.yaml",
                           second / "catalogue.yaml", onto=partial)  # fmt: skip
    dataset.seal(staged, merged, {"profile": "quick"})
    dataset.verify(merged)
    assert dataset.families(merged) == FAMILIES
    times = pd.read_parquet(merged / "data" / "run_times.parquet")
    assert sorted(times["run"]) == ["baseline_direct/p/rep1", "multiget/p/rep1"]
    # The second piece measured with the first's calibration: the dataset keeps that one.
    assert (merged / "calibration.json").read_text() == '{"speed": 1}'
    assert dataset.latest(tmp_path / "data", prefer="quick") == merged

    with pytest.raises(dataset.DatasetError, match="holds baseline_direct already"):
        dataset.stage(first, tmp_path / "data" / "quick" / "2026-11-27", ["baseline_direct"],
                      first / "study.yaml", first / "catalogue.yaml", onto=partial)  # fmt: skip
