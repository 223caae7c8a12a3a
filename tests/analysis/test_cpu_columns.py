"""Per-role CPU columns of the runs table, from the `cpu` section the testbed writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.bottleneck import cpu_utilisation, host_saturated, name_bottleneck
from analysis.parse import load_run
from analysis.parse.cpu import CPU_COLUMNS, cpu_columns
from testbed import cpuaccount
from testbed.cpubudget import CgroupSample, Hierarchy, HostCgroup

from .test_parse import make_run

V1 = Hierarchy(1, Path("/cg/cpu"), Path("/cg/cpuacct"))


def section(server_cpu_s: tuple[float, float], idle: int = 100) -> dict:
    """What a run writes: two servers at 0.5 core, an unbudgeted client, a 4 s window."""
    hosts = [
        HostCgroup("server1", "server", 0.5, V1, Path("mwlab/r/server1")),
        HostCgroup("server2", "server", 0.5, V1, Path("mwlab/r/server2")),
        HostCgroup("client1", "client", None, V1, Path("mwlab/r/client1")),
    ]

    def mark(at: float, busy: int, idle: int, cpu: dict[str, CgroupSample]) -> cpuaccount.Mark:
        return cpuaccount.Mark(at, cpuaccount.MachineSample(busy, idle, 0, 2), cpu, {})

    start = {h.host: CgroupSample(0.0, 0, 0, 0.0) for h in hosts}
    end = {
        "server1": CgroupSample(server_cpu_s[0], 800, 400, 0.9),
        "server2": CgroupSample(server_cpu_s[1], 800, 0, 0.0),
        "client1": CgroupSample(1.0, 0, 0, 0.0),
    }
    marks = {
        "window_start": mark(100.0, 0, 0, start),
        "window_end": mark(104.0, 800 - idle, idle, end),
    }
    return cpuaccount.section("cgroup-v1", hosts, marks)


def test_the_busiest_host_of_a_role_gives_its_columns():
    cols = cpu_columns(section((1.9, 0.4)))
    assert cols["cpu_accounting"] == "cgroup-v1"
    assert cols["cpu_util_server"] == 1.9 / (0.5 * 4)
    assert cols["throttled_share_server"] == 0.5
    assert cols["cpu_cores_client"] == 0.25
    assert math.isnan(cols["cpu_util_client"])  # unbudgeted: no utilisation of a budget
    assert math.isnan(cols["cpu_util_middleware"])
    assert cols["host_busy"] == 700 / 800
    assert cols["host_saturated"] == 0.0
    assert math.isnan(cols["host_speed_spread"])  # a run without the speed probe
    assert math.isnan(cols["host_speed_us"])
    speed = {"spread": 0.31, "piece_us_median": 1650.0}
    probed = cpu_columns(section((1.9, 0.4)) | {"machine_speed": speed})
    assert probed["host_speed_spread"] == 0.31
    assert probed["host_speed_us"] == 1650.0
    assert cols["cpu_outside_budgets_cores"] == pytest.approx(700 / 800 * 2 - (2.3 + 1.0) / 4)


def test_runs_without_accounting_have_every_column_unknown():
    cols = cpu_columns(None)
    assert list(cols) == CPU_COLUMNS
    assert cols["cpu_accounting"] is None
    assert all(math.isnan(v) for k, v in cols.items() if k != "cpu_accounting")


def test_ssh_hosts_count_their_vms_busy_share():
    cpu = {
        "accounting": "ssh",
        "machine": None,
        "hosts": [
            {"name": "mw1", "role": "middleware", "cores": 8, "util": 0.7},
            {"name": "mw2", "role": "middleware", "cores": 8, "util": 0.9},
        ],
    }
    cols = cpu_columns(cpu)
    assert cols["cpu_util_middleware"] == 0.9
    assert math.isnan(cols["host_busy"]) and math.isnan(cols["host_saturated"])


def test_load_run_puts_them_in_the_runs_table_and_they_name_the_bottleneck(tmp_path):
    run = make_run(tmp_path)
    data = json.loads((run / "run.json").read_text())
    data["cpu"] = section((1.95, 0.4))
    (run / "run.json").write_text(json.dumps(data))
    row = load_run(run).runs.iloc[0]
    assert row["cpu_util_server"] == 1.95 / 2
    assert cpu_utilisation(row) == {"server": 1.95 / 2}
    assert host_saturated(row) is False
    assert name_bottleneck({"server": 0.3, "client": 0.2}, cpu_utilisation(row), False) == (
        "server CPU"
    )
    # A saturated machine names the shared CPU instead.
    data["cpu"] = section((1.95, 0.4), idle=20)
    (run / "run.json").write_text(json.dumps(data))
    row = load_run(run).runs.iloc[0]
    assert bool(row["host_saturated"]) is True
    assert name_bottleneck({}, cpu_utilisation(row), host_saturated(row)) == "host CPU"


def test_older_runs_without_a_cpu_section_still_load(tmp_path):
    runs = load_run(make_run(tmp_path)).runs
    assert set(CPU_COLUMNS) <= set(runs.columns)
    assert pd.isna(runs.iloc[0]["cpu_util_server"])
