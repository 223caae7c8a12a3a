"""memtier_benchmark's real output (tests/analysis/data/memtier) through read_memtier, load_run
and `mwlab tidy`: counts, throughputs and percentiles against what memtier printed, the
compressed HdrHistograms of both load generators, and a run.json with `driver: memtier`."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import parse
from analysis.parse import ParseError
from testbed import drivers
from testbed.drivers import Target
from testbed.point import MiddlewareSettings, Point, Workload
from tests.analysis.conftest import DATA

ROOT = Path(__file__).resolve().parents[2]
MEMTIER = DATA / "memtier"
FIXTURES = [
    "populate",
    "read-only",
    "write-only",
    "multiget9",
    "mixed-1to1-cold",
    "via-middleware-multiget6-sharded",
]
BLOCK = {"set": "Sets", "get": "Gets", "multiget": "Gets"}
PRINTED_PERCENTILES = {50.0: "p50 Latency", 99.0: "p99 Latency", 99.9: "p99.9 Latency"}


def printed(name: str) -> dict[str, dict[str, float | None]]:
    """memtier's printed ALL STATS table: row name → column → value (None for '---')."""
    text = (MEMTIER / f"{name}.txt").read_text()
    lines = text[text.index("ALL STATS") :].splitlines()
    header = next(line for line in lines if line.startswith("Type"))
    columns = re.split(r"\s{2,}", header.strip())[1:]
    table = {}
    for line in lines:
        fields = line.split()
        if fields and fields[0] in ("Sets", "Gets", "Waits", "Totals"):
            assert len(fields) == len(columns) + 1, line
            table[fields[0]] = {
                c: None if v == "---" else float(v)
                for c, v in zip(columns, fields[1:], strict=True)
            }
    assert set(table) == {"Sets", "Gets", "Waits", "Totals"}
    return table


def value_at(hist: pd.DataFrame, q: float) -> float:
    """HdrHistogram's value at percentile q: the first bucket whose cumulative count reaches
    q % of all counts (rounded), given each bucket's highest equivalent value."""
    counts = hist.groupby("bucket_us")["count"].sum().sort_index()
    target = max(1, int(q / 100 * counts.sum() + 0.5))
    return float(counts.index[np.argmax(counts.cumsum().to_numpy() >= target)])


def raw(name: str) -> dict:
    return json.loads((MEMTIER / f"{name}.json").read_text())


def write(tmp_path: Path, data: dict, name: str = "result.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("name", FIXTURES)
def test_counts_and_throughputs_as_printed(name: str) -> None:
    res = parse.read_memtier(MEMTIER / f"{name}.json")
    stats, table = raw(name)["ALL STATS"], printed(name)
    assert len(res.totals) == 2
    for row in res.totals.itertuples():
        block, shown = stats[BLOCK[row.type]], table[BLOCK[row.type]]
        assert row.count == block["Count"]
        assert res.windows.loc[res.windows["type"] == row.type, "count"].sum() == row.count
        assert row.throughput_ops == pytest.approx(shown["Ops/sec"], abs=0.005)
        assert row.hits_per_s == pytest.approx(shown["Hits/sec"] or 0.0, abs=0.005)
        assert row.misses_per_s == pytest.approx(shown["Misses/sec"] or 0.0, abs=0.005)
        hist = res.histograms[res.histograms["type"] == row.type]
        assert hist["count"].sum() == row.count
        if row.count == 0:
            # memtier prints '---'; its JSON holds placeholders (mean 0, percentiles 0.007).
            assert shown["Avg. Latency"] is None
            assert math.isnan(row.response_us_mean) and math.isnan(row.response_us_p50)
        else:
            assert (hist["keys"] == row.keys).all()
            # The JSON mean is exact (to 1 µs); the printed one is the 2-digit histogram's.
            assert row.response_us_mean == pytest.approx(shown["Avg. Latency"] * 1000, rel=0.01)
            assert row.response_us_mean == pytest.approx(block["Average Latency"] * 1000)


@pytest.mark.parametrize("name", FIXTURES)
def test_decoded_percentiles_match_printed(name: str) -> None:
    """The histograms hold microseconds: their percentiles are memtier's printed ones (ms, five
    decimals) to the last digit, per type and for both types together (Totals)."""
    hist = parse.read_memtier(MEMTIER / f"{name}.json").histograms
    table = printed(name)
    checked = 0
    for row, part in (
        ("Sets", hist[hist["type"] == "set"]),
        ("Gets", hist[hist["type"].isin(["get", "multiget"])]),
        ("Totals", hist),
    ):
        for q, column in PRINTED_PERCENTILES.items():
            shown = table[row][column]
            if shown is None:
                assert part.empty
                continue
            assert value_at(part, q) == pytest.approx(shown * 1000, abs=0.005)
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("name", ["multiget9", "via-middleware-multiget6-sharded"])
def test_multiget_type_and_keys(name: str) -> None:
    res = parse.read_memtier(MEMTIER / f"{name}.json")
    size = raw(name)["configuration"]["multi_key_get"]
    assert set(res.histograms["type"]) == {"set", "multiget"}
    by_type = res.histograms.groupby("type")["keys"].unique()
    assert list(by_type["multiget"]) == [size] and list(by_type["set"]) == [1]
    assert set(res.windows.loc[res.windows["type"] == "multiget", "keys"]) == {size}


def test_totals_block_is_not_read(tmp_path: Path) -> None:
    """memtier writes the Totals' latency as 0.0: every number comes from Sets and Gets."""
    data = raw("via-middleware-multiget6-sharded")
    assert data["ALL STATS"]["Totals"]["Average Latency"] == 0.0
    before = parse.read_memtier(MEMTIER / "via-middleware-multiget6-sharded.json")
    assert before.totals["response_us_mean"].tolist() == [912.0, 955.0]
    del data["ALL STATS"]["Totals"]
    after = parse.read_memtier(write(tmp_path, data))
    pd.testing.assert_frame_equal(after.totals, before.totals)
    pd.testing.assert_frame_equal(after.windows, before.windows)
    pd.testing.assert_frame_equal(after.histograms, before.histograms)


@pytest.mark.parametrize("name", ["via-middleware-multiget6-sharded", "write-only"])
def test_windows_are_whole_seconds_when_finish_time_is_early(name: str) -> None:
    """memtier's Finish time averages its connections' and can fall a second early (these runs
    lasted 5 s, but report about 4 s). Windows keep their second: none is cut to a sliver."""
    res = parse.read_memtier(MEMTIER / f"{name}.json")
    assert res.end_ms - res.start_ms < 4100
    w = res.windows
    assert ((w["end_ms"] - w["start_ms"]) == 1000).all()
    assert (w["throughput_ops"] == w["count"]).all()
    assert (w["start_ms"] == res.start_ms + 1000 * w["window"]).all()


@pytest.mark.parametrize(
    ("path", "last_ms"),
    [
        (MEMTIER / "multiget9.json", 1),
        (MEMTIER / "mixed-1to1-cold.json", 3),
        (MEMTIER / "populate.json", 867),
        (DATA / "loadgen_result.json", 2),
    ],
)
def test_last_window_ends_at_finish_time(path: Path, last_ms: int) -> None:
    res = parse.read_memtier(path)
    w = res.windows
    last = w["window"] == w["window"].max()
    assert ((w.loc[~last, "end_ms"] - w.loc[~last, "start_ms"]) == 1000).all()
    assert (w.loc[last, "end_ms"] == res.end_ms).all()
    assert (w.loc[last, "end_ms"] - w.loc[last, "start_ms"] == last_ms).all()
    counts = w.loc[last, "count"].to_numpy()
    assert np.allclose(w.loc[last, "throughput_ops"], counts / (last_ms / 1000))


def test_builtin_generator_writes_the_same_histogram() -> None:
    """The built-in generator's compressed histograms decode to its own bucket listing, and
    their percentiles are the ones it wrote: one reader serves both generators."""
    data = json.loads((DATA / "loadgen_result.json").read_text())
    res = parse.read_memtier(DATA / "loadgen_result.json")
    for rtype, kind, block in (("set", "sets", "Sets"), ("get", "gets", "Gets")):
        hist = res.histograms[res.histograms["type"] == rtype]
        listed = {int(v): c for v, c in data["mwlab"]["histogram_us"][kind].items()}
        assert dict(zip(hist["bucket_us"], hist["count"], strict=True)) == listed
        for key, ms in data["ALL STATS"][block]["Percentile Latencies"].items():
            if key.startswith("p"):
                assert value_at(hist, float(key[1:])) == pytest.approx(ms * 1000)


def test_damaged_histograms(tmp_path: Path) -> None:
    name = "via-middleware-multiget6-sharded"
    field = ("Percentile Latencies", "Histogram log format")

    def with_sets(value: object) -> Path:
        data = raw(name)
        data["ALL STATS"]["Sets"][field[0]][field[1]]["Compressed Histogram"] = value
        return write(tmp_path, data)

    with pytest.raises(ParseError, match=r"Sets/.*/Compressed Histogram is not a compressed"):
        parse.read_memtier(with_sets("HISTFAAAnotahistogram"))
    with pytest.raises(ParseError, match=r"Sets/.*/Compressed Histogram is missing or not a"):
        parse.read_memtier(with_sets(17))
    gets = raw(name)["ALL STATS"]["Gets"][field[0]][field[1]]["Compressed Histogram"]
    with pytest.raises(ParseError, match=r"holds 42805 latencies, but 'Sets/Count' is 42812"):
        parse.read_memtier(with_sets(gets))
    # An output without the histogram log format (older memtier) has no rows for that type.
    data = raw(name)
    del data["ALL STATS"]["Sets"][field[0]][field[1]]
    res = parse.read_memtier(write(tmp_path, data))
    assert set(res.histograms["type"]) == {"multiget"}
    assert res.totals.set_index("type").loc["set", "count"] == 42812


# --- a run made with `mwlab run --driver memtier`, read back as tidy tables -----------------


def fixture_point(config: dict) -> Point:
    """The point of the run through the middleware (see data/memtier/README.md)."""
    return Point(
        name="multiget6-sharded",
        servers=2,
        middlewares=1,
        threads=config["threads"],
        virtual_clients=config["clients"],
        driver="memtier",
        workload=Workload(
            ratio=config["ratio"],
            multiget=config["multi_key_get"],
            data_size=config["data_size"],
            key_maximum=config["key_maximum"],
            key_pattern=config["key_pattern"],
        ),
        middleware=MiddlewareSettings(workers=8, sharded=True),
        duration_s=config["test_time"],
    )


def memtier_run(root: Path) -> Path:
    name = "via-middleware-multiget6-sharded"
    config = raw(name)["configuration"]
    point = fixture_point(config)
    flags = drivers.memtier_flags(point, Target(config["server"], config["port"]), "result.json")
    # The flags the testbed gives memtier are the ones this output was made with.
    given = dict(f[2:].split("=", 1) for f in flags if f.startswith("--") and "=" in f)
    assert flags[flags.index("-c") + 1] == str(config["clients"])
    assert flags[flags.index("-t") + 1] == str(config["threads"])
    assert given["ratio"] == config["ratio"]
    assert given["multi-key-get"] == str(config["multi_key_get"])
    assert given["test-time"] == str(config["test_time"])
    assert given["expiry-range"].replace("-", ":") == config["expiry_range"]
    run = root / "multiget6-sharded-rep1"
    client = run / "clients" / "client1.0"
    client.mkdir(parents=True)
    (client / "result.json").write_bytes((MEMTIER / f"{name}.json").read_bytes())
    (client / "stdout.log").write_bytes((MEMTIER / f"{name}.txt").read_bytes())
    manifest = {
        "schema": 1,
        "status": "ok",
        "error": None,
        "point": point.model_dump(mode="json"),
        "started_at": "2026-11-22T12:00:00Z",
        "finished_at": "2026-11-22T12:00:09Z",
        "duration_s": 9.1,
        "host_kind": "local",
        "driver": "memtier",
        "hosts": [
            {"name": n, "role": r, "address": "127.0.0.1"}
            for n, r in (
                ("server1", "server"),
                ("server2", "server"),
                ("middleware1", "middleware"),
                ("client1", "client"),
            )
        ],
        "link_capacity_mbit": {},
        "tools": {"memtier_benchmark": "memtier_benchmark 255.255.255", "memcached": "1.6.18"},
        "processes": [
            {
                "role": "client",
                "host": "client1",
                "instance": 0,
                "command": ["memtier_benchmark", *flags],
                "exit_code": 0,
                "dir": "clients/client1.0",
            }
        ],
        "clients_total": point.clients_total,
        "warnings": [],
    }
    (run / "run.json").write_text(json.dumps(manifest, indent=2))
    return run


def check_tables(
    histograms: pd.DataFrame, totals: pd.DataFrame, tidy: pd.DataFrame, windows: pd.DataFrame
) -> None:
    table = printed("via-middleware-multiget6-sharded")
    stats = raw("via-middleware-multiget6-sharded")["ALL STATS"]
    client = histograms[histograms["side"] == "client"]
    assert set(zip(client["type"], client["keys"], strict=True)) == {("set", 1), ("multiget", 6)}
    assert (client["source"] == "client1.0").all() and (client["window"] == -1).all()
    totals = totals.set_index("type")
    for rtype, block in (("set", "Sets"), ("multiget", "Gets")):
        part = client[client["type"] == rtype]
        assert part["count"].sum() == stats[block]["Count"]
        for q, column in PRINTED_PERCENTILES.items():
            assert value_at(part, q) == pytest.approx(table[block][column] * 1000, abs=0.005)
        assert totals.loc[rtype, "count"] == stats[block]["Count"]
        assert totals.loc[rtype, "throughput_ops"] == pytest.approx(
            table[block]["Ops/sec"], abs=0.005
        )
        rows = tidy[(tidy["side"] == "client") & (tidy["type"] == rtype)]
        assert rows["count"].sum() == stats[block]["Count"]
        assert (rows["sources"] == 1).all()
        # memtier's Finish time lies before its last second here: every window is a full one.
        series = stats[block]["Time-Serie"]
        assert rows.set_index("window")["throughput_ops"].to_dict() == {
            int(s): float(e["Count"]) for s, e in series.items()
        }
    assert (windows["side"] == "client").all()


def test_run_with_memtier_driver_to_tidy_tables(tmp_path: Path) -> None:
    tables = parse.load_run(memtier_run(tmp_path))
    assert tables.runs.loc[0, "driver"] == "memtier"
    assert tables.runs.loc[0, "clients_total"] == 16
    assert tables.runs.loc[0, "workload.multiget"] == 6
    check_tables(tables.histograms, tables.client_totals, tables.tidy(), tables.windows)


def test_tidy_command_on_memtier_run(tmp_path: Path) -> None:
    run = memtier_run(tmp_path)
    out = tmp_path / "pq"
    proc = subprocess.run(
        [sys.executable, "-m", "mwlab", "tidy", str(run), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    tables = {n: pd.read_parquet(out / f"{n}.parquet") for n in ("histograms", "client_totals")}
    check_tables(
        tables["histograms"],
        tables["client_totals"],
        pd.read_parquet(out / "tidy.parquet"),
        pd.read_parquet(out / "windows.parquet"),
    )
