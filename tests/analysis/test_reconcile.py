"""Client and middleware throughput of one run, over one absolute interval.

In a closed loop the middleware cannot complete more requests than the clients send: over
the same interval its count exceeds the clients' by at most the requests in flight.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import aggregate, parse
from analysis.parse import ParseError
from testbed.services.memcached import memcached_command
from testbed.services.middleware import command_flags, middleware_command
from testbed.services.ports import LOOPBACK
from tests.analysis.conftest import DATA
from tests.analysis.test_parse import _wait_port
from tests.analysis.test_real_run import _middleware_jar

MEMCACHED_PORT, MIDDLEWARE_PORT = 24060, 24061


def _sides(client: pd.DataFrame, middleware: pd.DataFrame) -> pd.DataFrame:
    """One run's windows of both sides, as `load_run` lays them out."""
    frames = []
    for side, source, w in (("client", "client1.0", client), ("middleware", "mw1", middleware)):
        frames.append(
            w.assign(run="r", point="p", repetition=1, side=side, source=source)[
                parse.WINDOW_COLUMNS[:3] + ["side", "source"] + [
                    c for c in parse.WINDOW_COLUMNS[5:] if c in w.columns
                ]
            ]
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _binned(times_ms: np.ndarray, origin: float, windows: int) -> pd.DataFrame:
    """One-second windows from `origin` with the completions that fall into each."""
    edges = origin + 1000.0 * np.arange(windows + 1)
    counts, _ = np.histogram(times_ms, bins=edges)
    return pd.DataFrame(
        {
            "window": range(windows),
            "start_ms": edges[:-1],
            "end_ms": edges[1:],
            "type": "get",
            "keys": 1,
            "count": counts,
            "throughput_ops": counts.astype(float),
            "response_us_mean": 1000.0,
        }
    )


def test_sides_are_averaged_over_the_same_seconds() -> None:
    # A closed loop of 10 clients whose rate falls as the run goes on; the middleware
    # answers each request 15 ms before its client sees the reply. The middleware's
    # windows start 380 ms after the clients', so, cut to the clients' stable interval on
    # their own, its windows would end 620 ms earlier and miss the slowest part of the run.
    clients, delay = 10, 15.0
    rate = [300, 300, 250, 200, 150, 100, 50, 20]
    done_mw = np.concatenate([s * 1000 + np.arange(r) * 1000 / r for s, r in enumerate(rate)])
    windows = _sides(_binned(done_mw + delay, 0.0, 8), _binned(done_mw, 380.0, 7))
    kept = aggregate.trim_to_clients(windows, warmup_s=1, cooldown_s=1)
    per_side = kept.groupby("side")
    span = per_side.agg(lo=("start_ms", "min"), hi=("end_ms", "max"))
    assert abs(span.loc["client", "lo"] - span.loc["middleware", "lo"]) <= 500
    assert abs(span.loc["client", "hi"] - span.loc["middleware", "hi"]) <= 500
    totals = aggregate.per_source_totals(kept)
    x = totals[totals["type"] == "all"].set_index("side")["throughput_ops"]
    seconds = per_side["window"].nunique().min()
    assert x["middleware"] - x["client"] <= clients / seconds


def test_empty_middleware_windows_count_as_zero(tmp_path: Path) -> None:
    stats = tmp_path / "stats"
    stats.mkdir()
    for f in (DATA / "stats2016").iterdir():
        (stats / f.name).write_bytes(f.read_bytes())
    windows = pd.read_csv(stats / "windows.csv")
    gone = sorted(windows["window"].unique())[1]
    windows[windows["window"] != gone].to_csv(stats / "windows.csv", index=False)
    read = parse.read_stats_dir(stats)
    filled = parse.with_empty_windows(read.windows, read.queue)
    empty = filled[filled["window"] == gone]
    kinds = read.windows[["type", "keys"]].drop_duplicates()
    assert len(empty) == len(kinds) and (empty["count"] == 0).all()
    assert (empty["throughput_ops"] == 0).all() and empty["response_us_mean"].isna().all()
    queue_windows = set(read.queue["window"])
    assert set(filled["window"]) == queue_windows
    # The mean over windows counts the empty one: it is lower than over the busy ones.
    busy = read.windows.groupby("window")["throughput_ops"].sum().mean()
    assert filled.groupby("window")["throughput_ops"].sum().mean() < busy


def _memaslap_with_skipped_print(tmp_path: Path) -> Path:
    """The fixture with its second print gone, as memaslap prints when a connection is down:
    the next print's Global time is 3 s while its Period row still says 1 s."""
    text = (DATA / "memaslap.txt").read_text()
    clear = "\x1b[1;1H\x1b[2J"
    head, *prints = text.split(clear)
    path = tmp_path / "memaslap.txt"
    path.write_text(clear.join([head, prints[0], *prints[2:]]))
    return path


def test_memaslap_windows_span_their_prints(tmp_path: Path) -> None:
    res = parse.read_memaslap(_memaslap_with_skipped_print(tmp_path))
    get = res.windows[res.windows["type"] == "get"].set_index("window")
    assert get["start_s"].tolist() == [0.0, 1.0, 3.0]
    assert get["end_s"].tolist() == [1.0, 3.0, 4.0]
    # The window after the skipped print is two seconds long: its rate is over both.
    assert get.loc[1, "throughput_ops"] == pytest.approx(get.loc[1, "count"] / 2)


def test_memaslap_types_not_yet_printed_have_zero_rows(tmp_path: Path) -> None:
    text = (DATA / "memaslap.txt").read_text()
    first = text.index("Set Statistics")
    path = tmp_path / "memaslap.txt"
    path.write_text(text[:first] + text[text.index("Total Statistics", first) :])
    res = parse.read_memaslap(path)
    sets = res.windows[res.windows["type"] == "set"].set_index("window")
    assert sets.loc[0, "count"] == 0 and sets.loc[0, "throughput_ops"] == 0
    assert np.isnan(sets.loc[0, "response_us_mean"])
    assert sets.loc[1, "count"] == 6204


def _client_dir(tmp_path: Path, launch: object | None) -> Path:
    d = tmp_path / "client1.0"
    d.mkdir(parents=True)
    (d / "memaslap.txt").write_bytes((DATA / "memaslap.txt").read_bytes())
    if launch is not None:
        (d / "launch.json").write_text(json.dumps(launch))
    return d


def test_memaslap_origin_from_launch_record(tmp_path: Path) -> None:
    res = parse.read_memaslap(DATA / "memaslap.txt")
    assert np.isnan(parse.memaslap_origin_ms(_client_dir(tmp_path / "a", None), res))
    start = parse.memaslap_origin_ms(_client_dir(tmp_path / "b", {"start_ms": 5000}), res)
    assert start == 5000
    # Exit: four seconds of timing and one of rest before it (Run time: 4.0s).
    both = {"start_ms": 5000, "exit_ms": 20_000}
    assert parse.memaslap_origin_ms(_client_dir(tmp_path / "c", both), res) == 15_000
    with pytest.raises(ParseError, match="start_ms"):
        parse.memaslap_origin_ms(_client_dir(tmp_path / "d", {"start_ms": "soon"}), res)
    with pytest.raises(ParseError, match="launch record"):
        bad = _client_dir(tmp_path / "e", None)
        (bad / "launch.json").write_text("{")
        parse.memaslap_origin_ms(bad, res)


def test_memaslap_through_the_middleware(tmp_path: Path) -> None:
    """memaslap's windows placed by its launch record fall on the middleware's time line,
    and the middleware answered every request memaslap counted, plus at most those in
    flight when memaslap stopped."""
    concurrency = 8
    cfg = tmp_path / "workload.cfg"
    cfg.write_text("key\n16 16 1\nvalue\n128 128 1\ncmd\n0 0.05\n1 0.95\n")
    client = tmp_path / "client1.0"
    client.mkdir()
    mc = subprocess.Popen(
        memcached_command(
            LOOPBACK, MEMCACHED_PORT, threads=None, memory_mib=None, connections=None
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    mw = None
    try:
        _wait_port(MEMCACHED_PORT, mc)
        flags = command_flags(
            [f"{LOOPBACK}:{MEMCACHED_PORT}"],
            workers=4,
            sharded=False,
            stats_dir=str(tmp_path / "stats"),
        )
        mw = subprocess.Popen(
            middleware_command(_middleware_jar(), LOOPBACK, MIDDLEWARE_PORT, flags),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_port(MIDDLEWARE_PORT, mw, timeout=60)
        start_ms = time.time() * 1000
        out = subprocess.run(
            ["memcaslap", "-s", f"127.0.0.1:{MIDDLEWARE_PORT}", "-F", str(cfg), "-T", "1",
             "-c", str(concurrency), "-t", "5s", "-S", "1s", "-w", "1k"],
            check=True, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        exit_ms = time.time() * 1000
    finally:
        if mw is not None:
            mw.send_signal(signal.SIGTERM)
            mw.wait(timeout=30)
        mc.terminate()
        mc.wait(timeout=10)
    (client / "memaslap.txt").write_text(out.stdout)
    (client / "launch.json").write_text(json.dumps({"start_ms": start_ms, "exit_ms": exit_ms}))
    res = parse.read_memaslap(client / "memaslap.txt")
    origin = parse.memaslap_origin_ms(client, res)
    stats = parse.read_stats_dir(tmp_path / "stats")
    assert stats.summary.get("clean_shutdown") is True
    # memaslap times from after its connections are open until a second before it exits.
    assert start_ms <= origin <= exit_ms - 1000 * res.run_time_s
    mw_first = stats.queue["start_ms"].min()  # the middleware's first arrival
    assert start_ms <= mw_first <= origin + 1000 * res.windows["end_s"].min()
    # Every request memaslap counted passed through the middleware; it may have answered
    # those in flight when memaslap stopped reading.
    counted = int(res.totals.set_index("type").loc["total", "count"])
    answered = int(stats.windows["count"].sum())
    assert counted <= answered <= counted + concurrency
    # Both sides' windows of the reconciled interval lie in one span of the run.
    client_w = res.windows.assign(
        start_ms=origin + 1000 * res.windows["start_s"],
        end_ms=origin + 1000 * res.windows["end_s"],
        response_us_p50=np.nan,
    )
    mw_w = parse.with_empty_windows(stats.windows, stats.queue)
    kept = aggregate.trim_to_clients(_sides(client_w, mw_w), warmup_s=1, cooldown_s=1)
    assert set(kept["side"]) == {"client", "middleware"}
    span = kept.groupby("side").agg(lo=("start_ms", "min"), hi=("end_ms", "max"))
    assert (span["lo"].max() - span["lo"].min()) <= 500
    assert (span["hi"].max() - span["hi"].min()) <= 500
