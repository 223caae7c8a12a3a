"""Readers for memtier JSON, memaslap text, the middleware statistics directory and run.json,
against real tool output and damaged copies of it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import parse
from analysis.parse import ParseError
from analysis.parse.middleware import COLUMNS
from testbed.services.memcached import memcached_command, wait_for_memcached
from testbed.services.ports import LOOPBACK
from tests.analysis.conftest import DATA

ROOT = Path(__file__).resolve().parents[2]
LOADGEN = ROOT / "build" / "loadgen.jar"


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Ready means: our process runs, owns the listener and answers the memcached protocol."""
    wait_for_memcached(LOOPBACK, port, timeout, proc)


@pytest.fixture
def memcached(request) -> Iterator[int]:
    port = 24010 + request.node.name.__hash__() % 50
    proc = subprocess.Popen(
        memcached_command(LOOPBACK, port, memory_mib=None, connections=None),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_port(port, proc)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# --- memtier JSON ------------------------------------------------------------------------


def test_memtier_fixture_from_builtin_generator() -> None:
    res = parse.read_memtier(DATA / "loadgen_result.json")
    assert res.end_ms - res.start_ms == 3002
    totals = res.totals.set_index("type")
    assert totals.loc["set", "count"] == 71405
    assert totals.loc["get", "throughput_ops"] == pytest.approx(71354.763)
    assert totals.loc["get", "response_us_mean"] == pytest.approx(41.0)
    assert totals.loc["get", "response_us_p99"] == pytest.approx(135.0)
    by_type = res.windows.groupby("type")["count"].sum()
    assert by_type["set"] == 71405 and by_type["get"] == 214207
    hist = res.histograms.groupby("type")["count"].sum()
    assert hist["set"] == 71405 and hist["get"] == 214207
    first = res.windows.iloc[0]
    assert first["throughput_ops"] == first["count"]  # a full one-second window


def test_memtier_live_builtin_generator(memcached: int, tmp_path: Path) -> None:
    assert LOADGEN.exists(), "build/loadgen.jar missing: run `make build`"
    out = tmp_path / "result.json"
    subprocess.run(
        [
            "java",
            "-jar",
            str(LOADGEN),
            "-s",
            "127.0.0.1",
            "-p",
            str(memcached),
            "-c",
            "2",
            "-t",
            "1",
            "--test-time=2",
            "--ratio=1:1",
            "-d",
            "64",
            "--key-maximum=200",
            f"--json-out-file={out}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    res = parse.read_memtier(out)
    totals = res.totals.set_index("type")
    duration = (res.end_ms - res.start_ms) / 1000
    for kind in ("set", "get"):
        count = res.windows.loc[res.windows["type"] == kind, "count"].sum()
        assert count == totals.loc[kind, "count"] > 0
        assert totals.loc[kind, "throughput_ops"] == pytest.approx(count / duration, rel=0.01)
        assert res.histograms.loc[res.histograms["type"] == kind, "count"].sum() == count
    # The compressed histograms (memtier's field) decode to the generator's own bucket listing.
    listed = json.loads(out.read_text())["mwlab"]["histogram_us"]
    for kind, name in (("set", "sets"), ("get", "gets")):
        hist = res.histograms[res.histograms["type"] == kind]
        assert dict(zip(hist["bucket_us"], hist["count"], strict=True)) == {
            int(v): c for v, c in listed[name].items()
        }


def test_memtier_truncated_and_malformed(tmp_path: Path) -> None:
    text = (DATA / "loadgen_result.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(ParseError, match=r"cut\.json: not valid JSON \(truncated\?\)"):
        parse.read_memtier(cut)
    data = json.loads(text)
    del data["ALL STATS"]["Gets"]["Time-Serie"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ParseError, match=r"bad\.json: 'Gets' lacks the per-second 'Time-Serie'"):
        parse.read_memtier(bad)
    data = json.loads(text)
    data["ALL STATS"]["Sets"]["Time-Serie"]["1"]["Count"] = "many"
    bad.write_text(json.dumps(data))
    with pytest.raises(ParseError, match="Sets/Time-Serie/1/Count is not a number"):
        parse.read_memtier(bad)
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(ParseError, match="empty file"):
        parse.read_memtier(empty)


# --- memaslap ------------------------------------------------------------------------------


def test_memaslap_fixture() -> None:
    res = parse.read_memaslap(DATA / "memaslap.txt")
    assert (res.run_time_s, res.ops, res.tps) == (4.0, 496927, 124216)
    assert len(res.windows) == 8  # four periods × get, set
    first = res.windows.iloc[0]
    assert (first["type"], first["count"], first["response_us_mean"]) == ("get", 111695, 67)
    assert first["response_us_std"] == pytest.approx(84.58)
    totals = res.totals.set_index("type")
    assert totals.loc["get", "count"] == 472069
    assert totals.loc["set", "std_us"] == pytest.approx(93.98)
    hist = res.histograms.groupby("type")["count"].sum()
    assert hist["get"] == 472069 and hist["set"] == 24850
    assert set(res.histograms["bucket_us"]) <= {2**i for i in range(20)}


def test_memaslap_live(memcached: int, tmp_path: Path) -> None:
    cfg = tmp_path / "workload.cfg"
    cfg.write_text("key\n16 16 1\nvalue\n128 128 1\ncmd\n0 0.1\n1 0.9\n")
    out = subprocess.run(
        [
            "memcaslap",
            "-s",
            f"127.0.0.1:{memcached}",
            "-F",
            str(cfg),
            "-T",
            "1",
            "-c",
            "4",
            "-t",
            "2s",
            "-S",
            "1s",
            "-w",
            "1k",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    path = tmp_path / "memaslap.txt"
    path.write_text(out.stdout)
    res = parse.read_memaslap(path)
    assert res.ops > 0 and len(res.windows) >= 2
    totals = res.totals.set_index("type")
    assert totals.loc["total", "count"] == pytest.approx(res.ops, rel=0.001)
    got_sets = res.windows.loc[res.windows["type"] == "set", "count"].sum()
    assert 0 < got_sets <= totals.loc["set", "count"]


def test_memaslap_truncated(tmp_path: Path) -> None:
    text = (DATA / "memaslap.txt").read_text()
    cut = tmp_path / "memaslap.txt"
    cut.write_text(text[: text.index("Run time")])
    with pytest.raises(ParseError, match=r"memaslap\.txt: truncated"):
        parse.read_memaslap(cut)
    cut.write_text(text.replace("Period   1        117920", "Period   1        11x920", 1))
    with pytest.raises(ParseError, match=r"line \d+: non-numeric statistics"):
        parse.read_memaslap(cut)


# --- middleware statistics ---------------------------------------------------------------


def write_stats(d: Path, start_ms: int = 1_700_000_000_000, windows: int = 5) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    rows, queue, servers, workers, hist = [], [], [], [], []
    for w in range(windows):
        s, e = start_ms + 1000 * w, start_ms + 1000 * (w + 1)
        for rtype, count, resp in (("get", 1000 + 10 * w, 800.0), ("set", 500, 1200.0)):
            rows.append(
                [
                    w,
                    s,
                    e,
                    rtype,
                    1,
                    count,
                    count,
                    20.0,
                    4.0,
                    100.0,
                    900.0,
                    30.0,
                    9.0,
                    resp - 150,
                    400.0,
                    resp,
                    10000.0,
                    resp - 50,
                    resp + 300,
                    resp + 900,
                    count if rtype == "get" else 0,
                    count if rtype == "get" else 0,
                    0,
                    0,
                ]
            )
            hist += [[w, rtype, 1, 700, count // 2], [w, rtype, 1, 800, count - count // 2]]
        queue.append([w, s, e, 1510 + 10 * w, 1510.0 + 10 * w, 0.3, 4, 1.2])
        servers.append([w, "127.0.0.1:24050", 1500, 1500, 0])
        workers += [[w, 0, 760, 0.61], [w, 1, 750, 0.6]]
    for name, data in (
        ("windows.csv", rows),
        ("queue.csv", queue),
        ("servers.csv", servers),
        ("workers.csv", workers),
        ("histogram.csv", hist),
    ):
        pd.DataFrame(data, columns=COLUMNS[name]).to_csv(d / name, index=False)
    (d / "summary.json").write_text(json.dumps({"clean_shutdown": True}))
    return d


def test_middleware_stats(tmp_path: Path) -> None:
    stats = parse.read_stats_dir(write_stats(tmp_path / "stats"))
    assert len(stats.windows) == 10 and stats.summary["clean_shutdown"] is True
    assert stats.windows["response_us_var"].dtype.kind == "f"
    assert stats.workers["busy_fraction"].sum() == pytest.approx(5 * 1.21)


def test_middleware_stats_errors(tmp_path: Path) -> None:
    d = write_stats(tmp_path / "stats")
    text = (d / "windows.csv").read_text()
    (d / "windows.csv").write_text(text.replace("queue_us_mean,", "", 1))
    with pytest.raises(
        ParseError, match=r"windows\.csv: unexpected header: missing \['queue_us_mean'\]"
    ):
        parse.read_stats_dir(d)
    (d / "windows.csv").write_text(text + "5,1700000005000,17000000")
    with pytest.raises(
        ParseError, match=r"windows\.csv: line 12: 3 fields, expected 24 \(truncated row\?\)"
    ):
        parse.read_stats_dir(d)
    (d / "windows.csv").write_text(text.replace(",get,1,1000,", ",get,1,lots,", 1))
    with pytest.raises(ParseError, match=r"line 2: column 'count' is not a number: 'lots'"):
        parse.read_stats_dir(d)
    (d / "windows.csv").write_text(text.replace(",get,", ",delete,", 1))
    with pytest.raises(ParseError, match="unknown request types"):
        parse.read_stats_dir(d)
    (d / "windows.csv").unlink()
    with pytest.raises(ParseError, match=r"windows\.csv: missing"):
        parse.read_stats_dir(d)


# --- run.json and whole runs ----------------------------------------------------------------


def manifest(status: str = "ok", clients: int = 8) -> dict:
    return {
        "schema": 1,
        "status": status,
        "error": None,
        "point": {
            "name": "p1",
            "repetition": 2,
            "servers": 1,
            "middlewares": 1,
            "workload": {"ratio": "1:3", "data_size": 128},
            "middleware": {"workers": 8},
        },
        "started_at": "2025-01-01T00:00:00Z",
        "finished_at": "2025-01-01T00:00:10Z",
        "duration_s": 10.0,
        "host_kind": "local",
        "hosts": [{"name": "c1", "role": "client", "address": "127.0.0.1"}],
        "link_capacity_mbit": {"client": 200.0, "middleware": 800.0, "server": 100.0},
        "tools": {"memcached": "1.6.18"},
        "processes": [],
        "clients_total": clients,
    }


def make_run(root: Path, status: str = "ok") -> Path:
    run = root / "run-p1-2"
    for source in ("c1.0", "c1.1"):
        (run / "clients" / source).mkdir(parents=True)
        shutil.copy(DATA / "loadgen_result.json", run / "clients" / source / "result.json")
    write_stats(run / "middlewares" / "mw1" / "stats")
    (run / "run.json").write_text(json.dumps(manifest(status)))
    return run


def test_manifest_errors(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    with pytest.raises(ParseError, match="missing"):
        parse.read_manifest(path)
    data = manifest()
    del data["clients_total"]
    path.write_text(json.dumps(data))
    with pytest.raises(ParseError, match=r"run\.json: lacks 'clients_total'"):
        parse.read_manifest(path)
    path.write_text(json.dumps(manifest(status="maybe")))
    with pytest.raises(ParseError, match="status must be"):
        parse.read_manifest(path)
    path.write_text(json.dumps(manifest())[:50])
    with pytest.raises(ParseError, match="truncated"):
        parse.read_manifest(path)


def test_load_run_tidy_tables(tmp_path: Path) -> None:
    tables = parse.load_run(make_run(tmp_path))
    assert tables.runs.loc[0, "point"] == "p1" and tables.runs.loc[0, "repetition"] == 2
    assert tables.runs.loc[0, "workload.ratio"] == "1:3"
    assert tables.runs.loc[0, "link_server_mbit"] == 100.0
    assert list(tables.windows.columns) == parse.WINDOW_COLUMNS
    tidy = tables.tidy()
    assert list(tidy.columns) == parse.TIDY_COLUMNS
    # One row per run × window × type × side.
    assert not tidy.duplicated(["run", "window", "type", "keys", "side"]).any()
    client = tidy[(tidy["side"] == "client") & (tidy["type"] == "get")].set_index("window")
    single = parse.read_memtier(DATA / "loadgen_result.json").windows
    single = single[single["type"] == "get"].set_index("window")
    assert (client["sources"] == 2).all()
    assert np.allclose(client["throughput_ops"], 2 * single["throughput_ops"])
    assert np.allclose(client["response_us_mean"], single["response_us_mean"])
    mw = tidy[(tidy["side"] == "middleware") & (tidy["type"] == "set")]
    assert len(mw) == 5 and np.allclose(mw["response_us_std"], 100.0)
    assert np.allclose(mw["queue_us_mean"], 100.0)
    written = tables.write_parquet(tmp_path / "out")
    back = pd.read_parquet(written["tidy"])
    assert len(back) == len(tidy) and list(back.columns) == parse.TIDY_COLUMNS
    assert set(written) >= {"runs", "windows", "tidy", "queue", "servers", "workers", "histograms"}


def test_load_run_reports_damaged_member(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    (run / "clients" / "c1.1" / "result.json").write_text("{")
    with pytest.raises(ParseError, match=r"c1\.1/result\.json: not valid JSON"):
        parse.load_run(run)


def test_tidy_command_writes_parquet(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mwlab",
            "tidy",
            str(run),
            "--out",
            str(tmp_path / "pq"),
            "--warmup",
            "1",
            "--cooldown",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    windows = pd.read_parquet(tmp_path / "pq" / "windows.parquet")
    mw = windows[windows["side"] == "middleware"]
    assert sorted(mw["window"].unique()) == [1, 2, 3]
