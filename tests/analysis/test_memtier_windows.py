"""Window length of a memtier JSON result: the built-in generator's `mwlab/window_ms` (its
--window-ms) against memtier's one-second windows, in read_memtier."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis import parse
from analysis.parse import ParseError
from testbed.services.memcached import memcached_command
from testbed.services.ports import LOOPBACK
from tests.analysis.conftest import DATA
from tests.analysis.test_parse import LOADGEN, _wait_port
from tests.capabilities import provided

MEMTIER = DATA / "memtier"
# The generator to run; another build of it can be named to test it before it is installed.
JAR = Path(os.environ.get("MWLAB_LOADGEN_JAR", LOADGEN))
PORT = 24076


def with_windows(window_ms: int, counts: list[int]) -> dict:
    """The built-in generator's fixture (3002 ms from start to finish) with its time series
    rewritten: `counts[i]` GETs and one SET in window i of `window_ms` milliseconds."""
    data = json.loads((DATA / "loadgen_result.json").read_text())
    data["mwlab"]["window_ms"] = window_ms
    for block, per in (("Gets", counts), ("Sets", [1] * len(counts))):
        entry = data["ALL STATS"][block]["Time-Serie"]["0"]
        data["ALL STATS"][block]["Time-Serie"] = {
            str(i): {**copy.deepcopy(entry), "Count": n} for i, n in enumerate(per)
        }
    return data


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    return path


def test_windows_of_window_ms_and_their_per_second_throughput(tmp_path: Path) -> None:
    counts = [100 + i for i in range(13)]  # 12 whole quarter seconds, then 2 ms to the finish
    res = parse.read_memtier(write(tmp_path, with_windows(250, counts)))
    assert res.window_ms == 250
    gets = res.windows[res.windows["type"] == "get"].set_index("window")
    assert list(gets.index) == list(range(13))
    assert list(gets["count"]) == counts
    assert list(gets["start_ms"]) == [res.start_ms + 250 * i for i in range(13)]
    whole = gets.loc[:11]
    assert (whole["end_ms"] - whole["start_ms"] == 250).all()
    assert list(whole["throughput_ops"]) == [4.0 * n for n in counts[:12]]
    # The last window ends at the finish time, like memtier's last second.
    last = gets.loc[12]
    assert last["end_ms"] == res.end_ms == last["start_ms"] + 2
    assert last["throughput_ops"] == pytest.approx(counts[12] / 0.002)


def test_long_windows_keep_their_length(tmp_path: Path) -> None:
    res = parse.read_memtier(write(tmp_path, with_windows(2000, [50, 7])))
    sets = res.windows[res.windows["type"] == "set"].set_index("window")
    assert list(sets["start_ms"]) == [res.start_ms, res.start_ms + 2000]
    assert list(sets["end_ms"]) == [res.start_ms + 2000, res.end_ms]
    assert list(sets["throughput_ops"]) == [0.5, pytest.approx(1 / 1.002)]


@pytest.mark.parametrize(
    "path",
    [*(MEMTIER / f"{n}.json" for n in ("read-only", "populate")), DATA / "loadgen_result.json"],
)
def test_without_window_ms_a_window_is_a_second(path: Path, tmp_path: Path) -> None:
    """memtier's output, and the built-in generator's before --window-ms, carry no window_ms;
    writing `window_ms: 1000` into them changes nothing."""
    res = parse.read_memtier(path)
    assert res.window_ms == 1000
    assert (res.windows["start_ms"] == res.start_ms + 1000 * res.windows["window"]).all()
    data = json.loads(path.read_text())
    data.setdefault("mwlab", {})["window_ms"] = 1000
    same = parse.read_memtier(write(tmp_path, data))
    assert same.windows.equals(res.windows)


@pytest.mark.parametrize("bad", [0, -250, "250", 2.5, True, None])
def test_bad_window_ms(bad: object, tmp_path: Path) -> None:
    data = with_windows(250, [1, 2])
    data["mwlab"]["window_ms"] = bad
    with pytest.raises(ParseError, match=r"result\.json: mwlab/window_ms is not a positive"):
        parse.read_memtier(write(tmp_path, data))


@pytest.fixture
def memcached() -> Iterator[int]:
    proc = subprocess.Popen(
        memcached_command(LOOPBACK, PORT, memory_mib=None, connections=None),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_port(PORT, proc)
        yield PORT
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_live_generator_with_quarter_second_windows(memcached: int, tmp_path: Path) -> None:
    provided(JAR.exists(), str(JAR), "make build")
    out = tmp_path / "result.json"
    subprocess.run(
        [
            "java",
            "-jar",
            str(JAR),
            "-s",
            "127.0.0.1",
            "-p",
            str(memcached),
            "-c",
            "2",
            "-t",
            "1",
            "--test-time=2",
            "--window-ms=250",
            "--key-maximum=200",
            f"--json-out-file={out}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    res = parse.read_memtier(out)
    assert res.window_ms == 250
    w = res.windows
    totals = res.totals.set_index("type")
    for kind in ("set", "get"):
        assert w.loc[w["type"] == kind, "count"].sum() == totals.loc[kind, "count"]
    # Two seconds are windows 0..7; the replies that arrive after the end follow.
    assert w["window"].max() >= 8
    assert (w["start_ms"] == res.start_ms + 250 * w["window"]).all()
    whole = w[w["end_ms"] - w["start_ms"] == 250]
    assert len(whole) >= 16
    assert (whole["throughput_ops"] == whole["count"] * 4).all()
