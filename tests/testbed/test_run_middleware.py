"""Points with middlewares: the study's topology of two middlewares and six client instances."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from testbed.point import Point
from testbed.run import RunOptions, run_point

from .conftest import parse_stats

pytestmark = pytest.mark.timeout(180)

MIDDLEWARE = Path(__file__).resolve().parents[2] / "build" / "middleware.jar"


def middleware_counts(stats_dir: Path) -> dict[str, int]:
    counts = {"set": 0, "get": 0, "multiget": 0}
    with (stats_dir / "windows.csv").open() as f:
        for row in csv.DictReader(f):
            counts[row["type"]] += int(row["count"])
    return counts


def test_client_counts_match_middleware_counts(tmp_path, base_port, loadgen_jar):
    if not MIDDLEWARE.is_file():
        pytest.fail(f"{MIDDLEWARE} is missing: run `make build` first")
    point = Point.model_validate(
        {
            "name": "two-middlewares",
            "hosts": "local",
            "servers": 2,
            "middlewares": 2,
            "client_machines": 3,
            "instances_per_client": 2,
            "threads": 1,
            "virtual_clients": 2,
            "driver": "builtin",
            "workload": {"ratio": "1:3", "data_size": 1024, "key_maximum": 1000},
            # A generous server timeout: this is a healthy path on a possibly loaded machine.
            "middleware": {"workers": 4, "replication": None, "server_timeout_ms": 60000},
            "duration_s": 2,
        }
    )
    out = tmp_path / "run"
    manifest = run_point(point, RunOptions(out=out, base_port=base_port, progress=False))
    assert manifest["status"] == "ok", manifest["error"]
    mws = [p for p in manifest["processes"] if p["role"] == "middleware"]
    assert [p["exit_code"] for p in mws] == [0, 0]
    total_sets = total_keys = 0
    for m in (0, 1):
        name = f"middleware{m + 1}"
        stats_dir = out / "middlewares" / name / "stats"
        assert json.loads((stats_dir / "summary.json").read_text())["clean_shutdown"] is True
        seen = middleware_counts(stats_dir)
        # Instance i of every client machine talks to middleware i.
        sets = gets = 0
        for c in (1, 2, 3):
            r = json.loads((out / f"clients/client{c}.{m}/result.json").read_text())
            sets += r["ALL STATS"]["Sets"]["Count"]
            gets += r["ALL STATS"]["Gets"]["Count"]
        assert sets > 0 and gets > 0
        # Requests in flight when the clients stop: at most one per connection (3 x 2).
        assert 0 <= seen["set"] - sets <= 6
        assert 0 <= seen["get"] - gets <= 6
        total_sets += seen["set"]
        total_keys += seen["get"]
    shares = []
    for server in ("server1", "server2"):
        stats = parse_stats((out / "servers" / server / "stats.txt").read_text())
        # Full replication: every SET reaches every server, after the 1000 populated keys.
        assert stats["cmd_set"] - 1000 == total_sets
        shares.append(stats["cmd_get"])
    # Reads are balanced over the replicas.
    assert sum(shares) == total_keys
    assert min(shares) >= 0.3 * total_keys
