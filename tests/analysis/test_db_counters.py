"""The family table db_counters: a real counters.json of a SimpleMQ run (naive pop, shared
receiver, smoke profile) read into one row, damaged copies refused, and a run without a
database giving a schema-valid empty table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import dataset
from analysis.parse import ParseError, counters

FIXTURE = Path(__file__).parent / "data" / "counters2015" / "naive.json"


def run_dir(tmp_path: Path, name: str = "r") -> Path:
    d = tmp_path / name / "servers" / "server1"
    d.mkdir(parents=True)
    shutil.copy(FIXTURE, d / counters.FILE)
    return tmp_path / name


def test_a_real_counters_file_reads_into_one_row(tmp_path: Path) -> None:
    t = counters.table([("fam/p/rep1", "p", 1, run_dir(tmp_path))])
    assert len(t) == 1
    row = t.iloc[0]
    doc = json.loads(FIXTURE.read_text())
    assert row["pop"] == "naive"
    assert row["database.xact_commit"] == doc["delta"]["database"]["xact_commit"]
    assert row["messages.n_tup_del"] == doc["delta"]["messages"]["n_tup_del"]
    assert row["queue.sent"] == doc["delta"]["queue"]["sent"]
    waits = doc["waits"]
    assert row["wait_samples"] == sum(waits.values())
    assert row["wait_lock"] == waits["Lock/tuple"] + waits["Lock/transactionid"]
    assert row["wait_cpu"] == waits["CPU/running"]
    assert row["wait_wal"] == waits["LWLock/WALWrite"] + waits["IO/WALSync"]
    assert row["waits.Lock/tuple"] == waits["Lock/tuple"]


def test_events_a_run_never_saw_count_zero(tmp_path: Path) -> None:
    a = run_dir(tmp_path, "a")
    b = run_dir(tmp_path, "b")
    doc = json.loads(FIXTURE.read_text())
    doc["waits"] = {"CPU/running": 5}
    (b / "servers" / "server1" / counters.FILE).write_text(json.dumps(doc))
    t = counters.table([("a", "p", 1, a), ("b", "p", 2, b)]).set_index("run")
    assert t.loc["b", "waits.Lock/tuple"] == 0
    assert t.loc["b", "wait_lock"] == 0


def test_wait_groups() -> None:
    assert counters.wait_group("Lock/transactionid") == "lock"
    assert counters.wait_group("LWLock/WALInsert") == "wal"
    assert counters.wait_group("IO/WALSync") == "wal"
    assert counters.wait_group("CPU/running") == "cpu"
    assert counters.wait_group("Client/ClientRead") == "client"
    assert counters.wait_group("LWLock/BufferContent") == "other"


def test_a_truncated_or_incomplete_file_is_refused_by_name(tmp_path: Path) -> None:
    path = run_dir(tmp_path) / "servers" / "server1" / counters.FILE
    path.write_text(FIXTURE.read_text()[:200])
    with pytest.raises(ParseError, match=r"counters\.json: not valid JSON"):
        counters.read_counters(path)
    doc = json.loads(FIXTURE.read_text())
    del doc["delta"]["database"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ParseError, match="lacks the part 'database'"):
        counters.read_counters(path)
    doc = json.loads(FIXTURE.read_text())
    doc["waits"]["CPU/running"] = "many"
    path.write_text(json.dumps(doc))
    with pytest.raises(ParseError, match=r"waits\.CPU/running"):
        counters.read_counters(path)


def test_runs_without_a_database_give_an_empty_table_with_every_column(tmp_path: Path) -> None:
    (tmp_path / "memcached").mkdir()
    t = counters.table([("m", "p", 1, tmp_path / "memcached")])
    assert t.empty
    assert list(t.columns) == list(counters.COLUMNS)
    t.to_parquet(tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert list(back.columns) == list(counters.COLUMNS)


def test_db_counters_is_a_family_table_that_older_datasets_restore_empty(tmp_path: Path) -> None:
    assert "db_counters" in dataset.FAMILY_TABLES
    folder = tmp_path / "ds"
    (folder / "data" / "fam").mkdir(parents=True)
    (folder / "data" / "fam" / "points.parquet").write_bytes(b"x")
    for name in (dataset.PROVENANCE, dataset.STUDY, dataset.CATALOGUE):
        (folder / name).write_text("{}\n")
    dataset.write_manifest(folder)
    results = tmp_path / "results"
    dataset.restore(folder, results, ["data/fam/points.parquet", "data/fam/db_counters.parquet"])
    restored = pd.read_parquet(results / "data" / "fam" / "db_counters.parquet")
    assert restored.empty and list(restored.columns) == list(counters.COLUMNS)
    # Any other missing file is still an error.
    with pytest.raises(dataset.DatasetError, match="lacks"):
        dataset.restore(folder, results, ["data/fam/runs.parquet"])
