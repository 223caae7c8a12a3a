"""Per-pool statistics (pools.csv, pool_requests.csv) and the design keys of summary.json, in
the format of the middleware's statistics contract: a design-2016 directory (two servers,
four read threads each, a multi-key GET split across both primaries in window 3) and a
design-2018 one with its single shared pool."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import parse
from analysis.parse import ParseError
from analysis.parse.middleware import COLUMNS
from tests.analysis.conftest import DATA
from tests.analysis.test_parse import make_run, write_stats

STATS_2016 = DATA / "stats2016"
STATS_2018 = DATA / "stats2018pools"


def copy_stats(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "stats"
    shutil.copytree(src, dst)
    return dst


def test_design_2016_pools_and_summary() -> None:
    stats = parse.read_stats_dir(STATS_2016)
    assert stats.design == "2016"
    assert stats.threads() == {"net": 1, "read": 8, "write": 2}
    info = stats.pool_info()
    assert list(info["pool"]) == ["read", "write", "read", "write"]
    assert list(info["first_worker"]) == [0, 8, 4, 9]
    pools = stats.pools
    assert list(pools.columns) == COLUMNS["pools.csv"]
    assert len(pools) == 6 * 4  # every window, every pool
    assert pools["server"].dtype.kind == "i" and set(pools["server"]) == {0, 1}
    # Rows come in the order of summary.json's pools.
    first = pools[pools["window"] == 0]
    assert list(zip(first["pool"], first["server"], strict=True)) == list(
        zip(info["pool"], info["server"], strict=True)
    )
    assert (
        pools["busy_fraction"] - pools["busy_threads_mean"] / pools["threads"]
    ).abs().max() < 1e-3


def test_pool_requests_account_for_every_request_and_key() -> None:
    stats = parse.read_stats_dir(STATS_2016)
    req = stats.pool_requests
    assert list(req.columns) == COLUMNS["pool_requests.csv"]
    assert set(req["type"]) == {"get", "set", "multiget"}
    # SETs sit in write queues, GETs (split or not) in read queues.
    assert set(req.loc[req["type"] == "set", "pool"]) == {"write"}
    assert set(req.loc[req["type"] != "set", "pool"]) == {"read"}
    keys = ["window", "type", "keys"]
    parts = req.groupby(keys)[["count", "part_keys"]].sum().sort_index()
    win = stats.windows.set_index(keys).sort_index()
    assert parts.index.equals(win.index)
    # Parts of a request carry all its keys between them; unsplit requests are one part each.
    assert (parts["part_keys"] == win["count"] * win.index.get_level_values("keys")).all()
    single = parts.index.get_level_values("keys") == 1
    assert (parts.loc[single, "count"] == win.loc[single, "count"]).all()
    split = parts.xs("multiget", level="type")
    assert split["count"].iloc[0] == 16 and win.loc[(3, "multiget", 3), "count"] == 10


def test_workers_csv_numbers_every_pool_thread() -> None:
    stats = parse.read_stats_dir(STATS_2016)
    info = stats.pool_info()
    workers = stats.workers
    for _, pool in info.iterrows():
        mine = workers[
            workers["worker"].between(
                pool["first_worker"], pool["first_worker"] + pool["threads"] - 1
            )
        ]
        busy = mine.groupby("window")["busy_fraction"].sum()
        p = stats.pools[
            (stats.pools["pool"] == pool["pool"]) & (stats.pools["server"] == pool["server"])
        ]
        assert busy.to_numpy() == pytest.approx(p["busy_threads_mean"].to_numpy(), abs=0.01)


def test_design_2018_has_one_shared_pool() -> None:
    stats = parse.read_stats_dir(STATS_2018)
    assert stats.design == "2018"
    assert stats.threads() == {"net": 1, "shared": 8}
    assert set(stats.pools["pool"]) == {"shared"} and set(stats.pools["server"]) == {-1}
    assert stats.pool_info()["address"].isna().all()


def test_statistics_without_pool_files_still_parse(tmp_path: Path) -> None:
    stats = parse.read_stats_dir(write_stats(tmp_path / "stats"))
    assert stats.design == "2018" and stats.threads() == {}
    assert stats.pools.empty and list(stats.pools.columns) == COLUMNS["pools.csv"]
    assert stats.pool_requests.empty and stats.pool_info().empty


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        ("pools.csv", ",write,1,1,", ",writer,1,1,", r"pools\.csv: unknown pools \['writer'\]"),
        ("pools.csv", ",read,0,4,", ",read,zero,4,", r"column 'server' is not a number: 'zero'"),
        (
            "pool_requests.csv",
            ",queue_us_p99,",
            ",queue_us_p95,",
            r"pool_requests\.csv: unexpected header: missing \['queue_us_p99'\]",
        ),
        ("pool_requests.csv", ",read,0,get,", ",read,0,delete,", r"unknown request types"),
        (
            "summary.json",
            '  "design": "2016",\n  "threads"',
            '  "design": "2017",\n  "threads"',
            r"design must be one of",
        ),
        ("summary.json", '"read": 8', '"read": "eight"', r"threads must map roles"),
    ],
)
def test_damaged_pool_statistics_are_named(
    tmp_path: Path, file: str, old: str, new: str, message: str
) -> None:
    d = copy_stats(STATS_2016, tmp_path)
    text = (d / file).read_text()
    assert old in text
    (d / file).write_text(text.replace(old, new, 1))
    with pytest.raises(ParseError, match=message):
        parse.read_stats_dir(d)


def test_truncated_pools_row_is_named(tmp_path: Path) -> None:
    d = copy_stats(STATS_2016, tmp_path)
    text = (d / "pools.csv").read_text()
    (d / "pools.csv").write_text(text + "6,1717000006000,17170")
    with pytest.raises(ParseError, match=r"pools\.csv: line 26: 3 fields, expected 14"):
        parse.read_stats_dir(d)


def test_summary_pool_without_its_fields(tmp_path: Path) -> None:
    d = copy_stats(STATS_2016, tmp_path)
    summary = json.loads((d / "summary.json").read_text())
    del summary["pools"][1]["first_worker"]
    (d / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(ParseError, match=r"pools\[1\] lacks \['first_worker'\]"):
        parse.read_stats_dir(d)


def test_load_run_gives_pool_tables_with_run_ids(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    stats_dir = run / "middlewares" / "mw1" / "stats"
    shutil.rmtree(stats_dir)
    shutil.copytree(STATS_2016, stats_dir)
    tables = parse.load_run(run)
    for frame in (tables.pools, tables.pool_requests):
        assert set(frame["run"]) == {"run-p1-2"} and set(frame["source"]) == {"mw1"}
        assert set(frame["side"]) == {"middleware"} and set(frame["repetition"]) == {2}
    assert len(tables.pools) == 24
    mw = tables.middlewares.iloc[0]
    assert (mw["design"], mw["threads_read"], mw["threads_write"]) == ("2016", 8, 2)
    assert (mw["read_threads_per_server"], mw["pools"]) == (4, 4)
    assert math.isnan(mw["threads_shared"])
    written = tables.write_parquet(tmp_path / "pq")
    back = pd.read_parquet(written["pool_requests"])
    assert len(back) == len(tables.pool_requests)


def test_load_run_of_an_older_middleware(tmp_path: Path) -> None:
    tables = parse.load_run(make_run(tmp_path))
    assert tables.pools.empty and "run" in tables.pools.columns
    assert tables.pool_requests.empty
    assert tables.middlewares.iloc[0]["design"] == "2018"
    assert math.isnan(tables.middlewares.iloc[0]["threads_read"])
