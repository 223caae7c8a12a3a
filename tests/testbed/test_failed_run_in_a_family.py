"""A family with one real run and one that never started: the family's tables are built from
the real one, and validation flags the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.family import build
from analysis.validate import check_runs
from testbed.manifest import never_started, write_manifest
from testbed.point import Point
from testbed.run import RunOptions, run_point

pytestmark = pytest.mark.timeout(180)


def test_family_with_a_failed_run_goes_on(tmp_path: Path, base_port, loadgen_jar):
    ok, failed = "fam/vc=2/rep1", "fam/vc=2/rep2"
    spec = {"hosts": "local", "driver": "builtin", "virtual_clients": 2, "duration_s": 3}
    spec["workload"] = {"ratio": "1:1", "data_size": 128, "key_maximum": 100}
    point = Point.model_validate({**spec, "name": ok})
    opts = RunOptions(out=tmp_path / "runs" / ok, base_port=base_port, progress=False)
    assert run_point(point, opts)["status"] == "ok"
    (tmp_path / "runs" / failed).mkdir(parents=True)
    write_manifest(
        tmp_path / "runs" / failed / "run.json",
        never_started({**spec, "name": failed, "repetition": 2}, "mwlab run exited 1"),
    )
    keys = [ok, failed]
    frames = build(keys, tmp_path, {"warmup_s": 0, "cooldown_s": 0}, {k: {"vc": "2"} for k in keys})
    for name, frame in frames.items():
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
    assert set(frames["manifests"]["status"]) == {"ok", "failed"}
    # The point's statistics come from the run that measured something.
    points = frames["points"]
    client = points[(points["side"] == "client") & (points["type"] == "all")]
    assert client["repetitions"].tolist() == [1]
    assert client["throughput_ops_mean"].iloc[0] > 0
    # The machine's CPU over the clients' window, averaged over the point's repetitions.
    assert 0 < client["host_busy_mean"].iloc[0] <= 1
    assert "host_busy" not in points.columns
    table = check_runs(frames["runs"], frames["manifests"], "fam", frames["windows"]).set_index(
        "run"
    )
    assert table.loc[failed, "flags"] == "failed" and bool(table.loc[failed, "flagged"])
    assert "failed" not in table.loc[ok, "flags"]
    assert table.loc[ok, "throughput_ops"] > 0
