"""The built-in load generator against a real memcached server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import memcached_stats

pytestmark = pytest.mark.timeout(120)


def loadgen(jar: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["java", "-jar", str(jar), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_sequential_requests_populate_every_key_once(loadgen_jar, memcached, tmp_path):
    out = tmp_path / "pop.json"
    r = loadgen(
        loadgen_jar, "-p", str(memcached), "-c", "2", "-t", "2", "--ratio=1:0",
        "--key-pattern=S:S", "--requests=allkeys", "--key-minimum=1", "--key-maximum=1000",
        "--data-size=512", f"--json-out-file={out}",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    stats = memcached_stats(memcached)
    assert stats["curr_items"] == 1000
    assert stats["cmd_set"] == 1000
    result = json.loads(out.read_text())
    assert result["ALL STATS"]["Sets"]["Count"] == 1000
    assert result["mwlab"]["counts"]["set_errors"] == 0


def test_json_layout_and_counts_agree_with_the_server(loadgen_jar, memcached, tmp_path):
    loadgen(
        loadgen_jar, "-p", str(memcached), "-c", "1", "-t", "1", "--ratio=1:0",
        "--key-pattern=S:S", "--requests=allkeys", "--key-minimum=1", "--key-maximum=500",
        "--data-size=256",
    )  # fmt: skip
    before = memcached_stats(memcached)
    out = tmp_path / "run.json"
    r = loadgen(
        loadgen_jar, "-p", str(memcached), "-c", "3", "-t", "2", "--test-time=2",
        "--ratio=1:3", "--multi-key-get=3", "--key-minimum=1", "--key-maximum=500",
        "--data-size=256", "--expiry-range=9999-10000", f"--json-out-file={out}",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["run information"]["Threads"] == 2
    assert d["run information"]["Connections per thread"] == 3
    stats = d["ALL STATS"]
    runtime = stats["Runtime"]
    assert runtime["Total duration"] == runtime["Finish time"] - runtime["Start time"]
    assert runtime["Total duration"] >= 1900  # it ran its test time
    sets, gets, totals = stats["Sets"], stats["Gets"], stats["Totals"]
    assert sets["Count"] > 0 and gets["Count"] > 0
    assert totals["Count"] == sets["Count"] + gets["Count"]
    # One SET then one 3-key GET per cycle, on each connection.
    assert abs(sets["Count"] - gets["Count"]) <= 6
    counts = d["mwlab"]["counts"]
    assert counts["keys_requested"] == 3 * gets["Count"]
    assert counts["misses"] == 0 and gets["Misses/sec"] == 0
    for block in (sets, gets):
        series = block["Time-Serie"]
        assert sum(s["Count"] for s in series.values()) == block["Count"]
        p = block["Percentile Latencies"]
        assert block["Min Latency"] <= p["p50.00"] <= p["p99.00"] <= block["Max Latency"] + 0.01
        assert "Compressed Histogram" in p["Histogram log format"]
        assert abs(block["Ops/sec"] - block["Count"] / (runtime["Total duration"] / 1000)) < 1
    hist = d["mwlab"]["histogram_us"]
    assert sum(hist["sets"].values()) == sets["Count"]
    assert sum(hist["gets"].values()) == gets["Count"]
    # The server saw what the generator reports (memcached counts GET keys, not requests),
    # plus what was still unanswered when the generator stopped waiting: at most one request
    # per connection (6), a SET or a 3-key GET.
    after = memcached_stats(memcached)
    unanswered_sets = after["cmd_set"] - before["cmd_set"] - sets["Count"]
    unanswered_keys = after["cmd_get"] - before["cmd_get"] - counts["keys_requested"]
    assert unanswered_sets >= 0 and unanswered_keys >= 0 and unanswered_keys % 3 == 0
    assert unanswered_sets + unanswered_keys // 3 <= 6


def test_bad_flags_are_rejected_with_a_message(loadgen_jar):
    r = loadgen(loadgen_jar, "--ratio", "1-2", "--test-time=1")
    assert r.returncode == 2
    assert "ratio must look like S:G" in r.stderr
    r = loadgen(loadgen_jar, "-P", "redis", "--test-time=1")
    assert r.returncode == 2 and "memcache_text" in r.stderr


def test_unreachable_server_fails_clearly(loadgen_jar, base_port, tmp_path):
    out = tmp_path / "r.json"
    r = loadgen(loadgen_jar, "-p", str(base_port + 49), "--test-time=1", f"--json-out-file={out}")
    assert r.returncode == 1
    assert "cannot connect" in r.stderr
    assert json.loads(out.read_text())["mwlab"]["failure"].startswith("cannot connect")
