"""`mwlab mq bench --database-cores` (soak/cpusplit.py) on the machine's real cgroups: the
harness and what it starts run under the other cores' budget, the database's processes
(a running process tree, as the postmaster and its children) under the database's, and
closing leaves no cgroup behind and the harness where it was."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from soak.cpusplit import CpuSplit
from testbed import cpubudget
from testbed.cpubudget import CgroupError
from tests.capabilities import need

pytestmark = pytest.mark.timeout(120)


def members(split_cg: cpubudget.HostCgroup) -> set[int]:
    return {int(x) for p in split_cg.procs_files() for x in p.read_text().split()}


def test_the_database_tree_and_everything_else_get_their_own_budgets() -> None:
    found = cpubudget.detect(cpubudget.root_from_env())
    need(not isinstance(found, str), f"no usable cgroups: {found}")
    split = CpuSplit.open(1.0, cores=2)
    started: list[subprocess.Popen[bytes]] = []
    try:
        assert (split.database.budget, split.others.budget) == (1.0, 1.0)
        # Started after the split opened: a child of the harness, so under the others' budget.
        client = subprocess.Popen(["sleep", "60"])
        started.append(client)
        assert client.pid in members(split.others)
        # A server with a child already running: the whole tree moves, and its later children
        # are forked under the database's budget.
        server = subprocess.Popen(["sh", "-c", "sleep 60 & wait"])
        started.append(server)
        for _ in range(100):
            kids = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
            if kids:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        split.take_database(server.pid)
        inside = members(split.database)
        assert {server.pid, *map(int, kids)} <= inside
        assert client.pid not in inside and server.pid not in members(split.others)
        assert split.describe() == {"database_cores": 1.0, "other_cores": 1.0,
                                    "cgroup": found.name}  # fmt: skip
    finally:
        problems = split.close()
        for p in started:
            p.wait(10)  # killed by the teardown, as anything left in the cgroups
    assert problems == []
    assert f"mqbench-{os.getpid()}" not in cpubudget.run_names(found)


def test_a_database_budget_that_leaves_nothing_for_the_rest_is_refused() -> None:
    with pytest.raises(CgroupError, match="--database-cores 2: the machine has 2 cores"):
        CpuSplit.open(2.0, cores=2)
