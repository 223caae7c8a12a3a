"""CPU budgets of emulated hosts (cgroups) and the CPU accounting of every run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis.parse import read_memtier
from common import cfs
from testbed import cpuaccount, cpubudget
from testbed.cpubudget import CgroupSample, Hierarchy, HostCgroup
from testbed.point import Point
from testbed.run import WARMUP_LAUNCH_S, RunError, RunOptions, run_point
from tests.capabilities import need

from .conftest import REPO, no_leftovers, processes_in

pytestmark = pytest.mark.timeout(300)


def emulated(**kw) -> Point:
    spec = {
        "name": "cpu",
        "hosts": "emulated",
        "servers": 1,
        "client_machines": 1,
        "threads": 2,
        "virtual_clients": 8,
        "driver": "builtin",
        "workload": {"ratio": "0:1", "data_size": 1024, "key_maximum": 1000},
        "duration_s": 4,
    }
    spec.update(kw)
    return Point.model_validate(spec)


@pytest.fixture
def hierarchy() -> Hierarchy:
    # The hierarchy a run uses: v1 or v2, under $MWLAB_CGROUP_ROOT or the machine's root.
    found = cpubudget.detect(cpubudget.root_from_env())
    need(not isinstance(found, str), f"no usable cgroups: {found}")
    assert not isinstance(found, str)
    return found


def options(tmp_path: Path, name: str, base_port: int, prefix: str, **kw) -> RunOptions:
    return RunOptions(
        out=tmp_path / name,
        base_port=base_port,
        progress=False,
        netns_prefix=prefix,
        linkcap_cache=tmp_path / "linkcap.json",
        **kw,
    )


def no_cgroups_left(prefix: str) -> None:
    assert cpubudget.leftovers(cpubudget.root_from_env(), prefix) == [], "cgroups left behind"


# --- planning: periods, quotas and the fit check ------------------------------------------


def test_a_small_budget_gets_a_longer_period_so_its_quota_is_at_least_1_ms():
    assert cfs.period_us(1.0) == cfs.PERIOD_US
    assert cfs.quota_us(0.5) == round(0.5 * cfs.PERIOD_US)
    assert cfs.period_us(0.05) == 20_000
    assert cfs.quota_us(0.05) == 1000
    assert cfs.quota_us(2.0) == 2 * cfs.PERIOD_US  # more than one core
    with pytest.raises(ValueError, match="below the smallest"):
        cfs.period_us(0.0005)


def test_budgets_that_do_not_fit_the_machine_are_named_with_their_sum():
    point = emulated(servers=3, middlewares=1, budgets_cores={"server": 0.5, "middleware": 1})
    why = cpubudget.check_fits(point, 2)
    assert why is not None
    assert "server 0.5 × 3" in why and "middleware 1.0 × 1" in why
    assert "2.5 cores" in why and "2 cores" in why and "1.6" in why
    # The same budgets fit a bigger machine; unbudgeted roles count for nothing.
    assert cpubudget.check_fits(point, 4) is None
    assert cpubudget.check_fits(emulated(servers=7), 2) is None
    # The reserve: 0.4 core on small machines, a tenth on large ones.
    assert cpubudget.check_fits(emulated(budgets_cores={"server": 1.6}), 2) is None
    assert cpubudget.check_fits(emulated(budgets_cores={"server": 1.61}), 2) is not None
    assert cpubudget.check_fits(emulated(budgets_cores={"server": 14.4}), 16) is None
    assert cpubudget.check_fits(emulated(budgets_cores={"server": 14.5}), 16) is not None


def test_budgets_of_other_host_kinds_need_no_room_and_a_too_small_budget_is_refused():
    assert cpubudget.check_fits(emulated(hosts="local", budgets_cores={"server": 9}), 2) is None
    why = cpubudget.check_fits(emulated(budgets_cores={"client": 0.0001}), 2)
    assert why is not None and why.startswith("budgets_cores.client:")


def test_mwlab_run_refuses_a_point_that_does_not_fit_before_starting_anything(tmp_path):
    cores = cpuaccount.cores()
    out = tmp_path / "refused"
    proc = subprocess.run(
        [
            *(str(REPO / ".venv/bin/python"), "-m", "mwlab", "run", "--out", str(out)),
            *("--hosts", "emulated", "--servers", "3", "--budget-server", str(cores)),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "CPU budgets do not fit this machine" in proc.stderr
    assert f"server {float(cores)} × 3 = {3 * cores:g} cores" in proc.stderr
    assert not out.exists()


# --- cgroup v2 and /proc/stat, from their files ----------------------------------------------


def test_cgroup_v2_is_found_and_laid_out_with_cpu_max(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("memory\n")
    found = cpubudget.detect(root)
    assert found == Hierarchy(2, root.resolve(), root.resolve())
    cgroups = cpubudget.RunCgroups(found, "runA")
    cg = cgroups.add("server1", "server", 0.25)
    assert cg.dirs() == [root.resolve() / "mwlab" / "runA" / "server1"]
    # Open until the measurement begins, bound over it, open again after it.
    cpu_max = cg.dirs()[0] / "cpu.max"
    assert cpu_max.read_text() == f"max {cfs.period_us(0.25)}"
    cgroups.bind()
    assert cpu_max.read_text() == cpubudget.cpu_max(0.25)
    cgroups.release()
    assert cpu_max.read_text() == f"max {cfs.period_us(0.25)}"
    # The runs' cgroups weigh more than other work on the machine.
    assert (root / "mwlab" / "cpu.weight").read_text() == str(cpubudget.WEIGHT_V2)
    assert cpubudget.parse_cpu_max(cpubudget.cpu_max(0.25)) == (
        cfs.quota_us(0.25),
        cfs.period_us(0.25),
    )
    assert cpubudget.parse_cpu_max(cpubudget.cpu_max(None))[0] is None
    # The cpu controller is handed down to the run's cgroups.
    assert (root / "cgroup.subtree_control").read_text() == "+cpu"
    assert (root / "mwlab" / "runA" / "cgroup.subtree_control").read_text() == "+cpu"
    assert cg.wrap(["memcached"])[-1] == "memcached"
    assert str(cg.procs_files()[0]) in cg.wrap(["memcached"])[2]


def test_cgroup_v1_separate_cpu_and_cpuacct_hierarchies_are_both_joined(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (tmp_path / "cpuacct").mkdir()
    (tmp_path / "cpuacct" / "cpuacct.usage").write_text("0\n")
    found = cpubudget.detect(tmp_path)
    assert isinstance(found, Hierarchy) and found.version == 1
    cg = HostCgroup("client1", "client", None, found, Path("mwlab/r/client1"))
    assert [p.parent.parent.parent.parent.name for p in cg.procs_files()] == ["cpu", "cpuacct"]


def test_no_cpu_controller_is_a_reason_not_a_failure(tmp_path):
    assert "no cgroup file system" in str(cpubudget.detect(tmp_path / "absent"))
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    assert "no cgroup cpu controller" in str(cpubudget.detect(tmp_path))


def test_cpu_stat_of_either_version_becomes_seconds():
    v1 = "nr_periods 40\nnr_throttled 10\nthrottled_time 2500000000\nnr_bursts 0\n"
    assert cpubudget.sample_from(1, "3000000000\n", v1) == CgroupSample(3.0, 40, 10, 2.5)
    v2 = "usage_usec 1500000\nuser_usec 1\nsystem_usec 2\nnr_periods 8\nnr_throttled 2\n"
    v2 += "throttled_usec 250000\n"
    assert cpubudget.sample_from(2, None, v2) == CgroupSample(1.5, 8, 2, 0.25)


def test_proc_stat_splits_busy_idle_and_steal():
    text = (
        "cpu  100 5 50 800 20 3 2 40 7 0\n"
        "cpu0 50 2 25 400 10 1 1 20 3 0\ncpu1 50 3 25 400 10 2 1 20 4 0\nintr 1 2\n"
    )
    s = cpuaccount.parse_proc_stat(text)
    assert (s.busy, s.idle, s.steal, s.cores) == (160, 820, 40, 2)


def test_the_machine_saturates_when_its_idle_time_falls_below_five_percent():
    cg = HostCgroup("server1", "server", 0.5, Hierarchy(1, Path("/x"), Path("/x")), Path("m"))

    def mark(at: float, busy: int, idle: int, cpu_s: float) -> cpuaccount.Mark:
        machine = cpuaccount.MachineSample(busy, idle, 0, 2)
        return cpuaccount.Mark(at, machine, {"server1": CgroupSample(cpu_s, 0, 0, 0.0)}, {})

    busy = {"window_start": mark(10, 0, 0, 1.0), "window_end": mark(12, 390, 10, 2.0)}
    s = cpuaccount.section("cgroup-v1", [cg], busy)
    assert s["host_saturated"] is True
    assert s["hosts"][0]["util"] == pytest.approx(1.0)  # 1 s of CPU in 2 s at half a core
    assert s["outside_budgets_cores"] == pytest.approx(390 / 400 * 2 - 0.5)
    assert "saturated" in str(cpuaccount.saturation_warning(s))
    calm = {"window_start": mark(10, 0, 0, 1.0), "window_end": mark(12, 300, 100, 1.5)}
    s = cpuaccount.section("cgroup-v1", [cg], calm)
    assert s["host_saturated"] is False and cpuaccount.saturation_warning(s) is None


# --- real cgroups ----------------------------------------------------------------------------


def test_a_busy_loop_uses_no_more_than_its_budget_and_is_throttled(hierarchy):
    cgroups = cpubudget.RunCgroups(hierarchy, f"mwt-loop{os.getpid()}")
    try:
        cg = cgroups.add("busy", "client", 0.2)
        cgroups.bind()
        loop = subprocess.Popen(cg.wrap(["sh", "-c", "while :; do :; done"]))
        try:
            before, t0 = cg.sample(), time.monotonic()
            time.sleep(2.0)
            after, t1 = cg.sample(), time.monotonic()
            assert cg.pids() == [loop.pid]
            assert f"mwlab/{cgroups.run}/busy" in Path(f"/proc/{loop.pid}/cgroup").read_text()
        finally:
            loop.kill()
            loop.wait(30)
        cores = (after.cpu_s - before.cpu_s) / (t1 - t0)
        # The quota caps it (a period's worth of slack); a loaded machine may give it less,
        # but it ran, and it ran into its quota.
        assert 0 < cores <= 0.2 * 1.15
        assert after.nr_throttled > before.nr_throttled
    finally:
        assert cgroups.teardown() == []
    no_cgroups_left(cgroups.run)


# --- a real cgroup v2 hierarchy, mounted by the test -------------------------------------
#
# A machine has one cgroup v2 hierarchy; `mount -t cgroup2` on a scratch directory shows it
# there, as `<root>/unified` beside a v1 layout (where systemd's hybrid mode puts it). Its cpu
# controller is there only where no v1 hierarchy holds it: on a v1 host the v2 code is then
# tested as far as the kernel allows it (detection, the refusal, joining, accounting from
# cpu.stat, teardown), and the cpu.max it writes by the file layout above.


@pytest.fixture
def cgroup2(tmp_path: Path) -> Iterator[Path]:
    """The cgroup v2 hierarchy, mounted at `<scratch>/root/unified`."""
    need(os.geteuid() == 0, "mounting cgroup2 needs root")
    mount = tmp_path / "root" / "unified"
    mount.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "cgroup2", "none", str(mount)], capture_output=True, text=True
    )
    need(done.returncode == 0, f"cannot mount cgroup2: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True, timeout=60)


def v2_has_cpu(mount: Path) -> bool:
    return "cpu" in (mount / "cgroup.controllers").read_text().split()


def test_a_mounted_cgroup2_is_found_as_v2_or_refused_without_the_cpu_controller(cgroup2):
    for root in (cgroup2, cgroup2.parent):  # unified, or beside where v1 would be
        found = cpubudget.detect(root)
        if v2_has_cpu(cgroup2):
            assert found == Hierarchy(2, cgroup2.resolve(), cgroup2.resolve())
            assert found.name == "cgroup-v2"
        else:
            assert found == f"no cgroup cpu controller under {root}"


def test_cgroup2_budgets_bind_a_busy_loop_or_are_refused_cleanly_without_cpu(cgroup2):
    hierarchy = Hierarchy(2, cgroup2.resolve(), cgroup2.resolve())
    cgroups = cpubudget.RunCgroups(hierarchy, f"mwt-v2-{os.getpid()}")
    if not v2_has_cpu(cgroup2):
        # The cpu controller cannot be handed down: nothing is made, nothing is left.
        with pytest.raises(cpubudget.CgroupError, match=r"'\+cpu'.*cgroup\.subtree_control"):
            cgroups.add("busy", "client", 0.2)
        assert cgroups.teardown() == []
        assert not (cgroup2 / cpubudget.PARENT / cgroups.run).exists()
        return
    try:
        cg = cgroups.add("busy", "client", 0.2)
        cpu_max = cg.dirs()[0] / "cpu.max"
        period = cfs.period_us(0.2)
        assert cpu_max.read_text().split() == ["max", str(period)]
        cgroups.bind()
        assert cpu_max.read_text().split() == cpubudget.cpu_max(0.2).split()
        loop = subprocess.Popen(cg.wrap(["sh", "-c", "while :; do :; done"]))
        try:
            deadline = time.monotonic() + 30
            while cg.pids() != [loop.pid]:
                assert time.monotonic() < deadline, "the loop never joined its cgroup"
                time.sleep(0.05)
            before, t0 = cg.sample(), time.monotonic()
            time.sleep(2.0)
            after, t1 = cg.sample(), time.monotonic()
        finally:
            loop.kill()
            loop.wait(30)
        assert 0 < (after.cpu_s - before.cpu_s) / (t1 - t0) <= 0.2 * 1.15
        assert after.nr_throttled > before.nr_throttled
        cgroups.release()
        assert cpu_max.read_text().split() == ["max", str(period)]
    finally:
        assert cgroups.teardown() == []
    assert not (cgroup2 / cpubudget.PARENT / cgroups.run).exists()


def test_cgroup2_joining_accounting_and_teardown_work_without_the_cpu_controller(cgroup2):
    # What of a host's v2 cgroup needs no controller: joining before exec, its processes,
    # its CPU time (cpu.stat's usage is there with or without the cpu controller), removal.
    hierarchy = Hierarchy(2, cgroup2.resolve(), cgroup2.resolve())
    run = f"mwt-v2join-{os.getpid()}"
    group = cgroup2 / cpubudget.PARENT / run / "client1"
    group.mkdir(parents=True)
    cg = HostCgroup("client1", "client", None, hierarchy, group.relative_to(cgroup2))
    loop = subprocess.Popen(cg.wrap(["sh", "-c", "while :; do :; done"]))
    try:
        deadline = time.monotonic() + 30
        while cg.pids() != [loop.pid]:
            assert loop.poll() is None, "the loop did not start in its cgroup"
            assert time.monotonic() < deadline, "the loop never joined its cgroup"
            time.sleep(0.05)
        assert f"0::/mwlab/{run}/client1" in Path(f"/proc/{loop.pid}/cgroup").read_text()
        before = cg.sample()
        deadline = time.monotonic() + 30
        while cg.sample().cpu_s <= before.cpu_s:
            assert time.monotonic() < deadline, "a busy loop used no CPU in 30 s"
            time.sleep(0.1)
    finally:
        loop.kill()
        loop.wait(30)
    # The removal waits for the killed process to leave, as a run's teardown does.
    assert cpubudget._rmdir(group, 30) is None
    for d in (group.parent, group.parent.parent):
        with contextlib.suppress(OSError):  # the parent is shared with other runs
            d.rmdir()
    assert not group.parent.exists()


def test_cgroup2_a_killed_runs_cgroups_are_found_emptied_and_removed(cgroup2):
    # What `mwlab measure` reclaims after a `kill -9` (run_names, run_pids, remove_run): a
    # run's host cgroups, one with a service left in it. None of it needs the cpu controller.
    hierarchy = Hierarchy(2, cgroup2.resolve(), cgroup2.resolve())
    run = f"mwt-v2reclaim-{os.getpid()}"
    top = cgroup2 / cpubudget.PARENT / run
    for host in ("server1", "client1"):
        (top / host).mkdir(parents=True)
    cg = HostCgroup("server1", "server", None, hierarchy, Path(cpubudget.PARENT, run, "server1"))
    left = subprocess.Popen(cg.wrap(["sleep", "600"]))
    try:
        deadline = time.monotonic() + 30
        while cg.pids() != [left.pid]:
            assert left.poll() is None, "the service did not start in its cgroup"
            assert time.monotonic() < deadline, "the service never joined its cgroup"
            time.sleep(0.05)
        assert run in cpubudget.run_names(hierarchy)
        assert cpubudget.run_pids(hierarchy, run) == [left.pid]
        # The removal waits for the killed service to leave, as the reclaim does.
        assert cpubudget.remove_run(hierarchy, run, grace_s=30) == []
        assert left.wait(30) == -signal.SIGKILL
    finally:
        left.kill()
        left.wait(30)
        for d in (top / "server1", top / "client1", top):
            with contextlib.suppress(OSError):
                d.rmdir()
    assert not top.exists()
    assert run not in cpubudget.run_names(hierarchy)


# A process with two busy threads: the main one, and one named like a JIT compiler thread.
TWO_LOOPS = """
import threading
def spin():
    open(f"/proc/self/task/{threading.get_native_id()}/comm", "w").write("C2 CompilerThre")
    while True:
        pass
threading.Thread(target=spin, daemon=True).start()
while True:
    pass
"""


def thread_names(pid: int) -> list[str]:
    names = []
    for comm in Path(f"/proc/{pid}/task").glob("*/comm"):
        try:
            names.append(comm.read_text().strip())
        except OSError:
            continue  # the thread ended meanwhile
    return names


def test_exempt_threads_leave_the_budget_on_v1_and_stay_in_it_on_v2(hierarchy):
    # cgroup v2 moves single threads only within threaded subtrees: there the host's threads
    # all stay under its budget, and none is reported exempt.
    cgroups = cpubudget.RunCgroups(hierarchy, f"mwt-exempt{os.getpid()}")
    try:
        cg = cgroups.add("mw", "middleware", 0.1)
        assert (cg.exempt is not None) == (hierarchy.version == 1)
        proc = subprocess.Popen(cg.wrap(["python3", "-c", TWO_LOOPS]))
        try:
            # The thread renames itself first thing; a loaded machine may take a while.
            deadline = time.monotonic() + 30
            while "C2 CompilerThre" not in thread_names(proc.pid):
                assert proc.poll() is None, "the process ended"
                assert time.monotonic() < deadline, "the thread never renamed itself"
                time.sleep(0.05)
            cgroups.bind()
            if hierarchy.version == 1:
                assert cg.exempted == {"C2 CompilerThre"}
                shares = hierarchy.cpu / cg.exempt / "cpu.shares"  # type: ignore[operator]
                assert int(shares.read_text()) == cpubudget.EXEMPT_SHARES_V1
            else:
                assert cg.exempted == set()
            before, t0 = cg.sample(), time.monotonic()
            time.sleep(2.0)
            after, t1 = cg.sample(), time.monotonic()
            assert cg.pids() == [proc.pid]
        finally:
            proc.kill()
            proc.wait(30)
        budgeted = (after.cpu_s - before.cpu_s) / (t1 - t0)
        exempt = (after.exempt_cpu_s - before.exempt_cpu_s) / (t1 - t0)
        # The main loop is held to its quota (on v2 with the compiler-named one); on v1 the
        # compiler-named loop runs in a cgroup that has none (how much it gets is what the
        # machine leaves idle: its weight is lowest).
        assert budgeted <= 0.1 * 1.15
        entry = cpuaccount.host_entry(cg, (before, after), after, t1 - t0)
        if hierarchy.version == 1:
            assert exempt > 0
            quota = hierarchy.cpu / cg.exempt / "cpu.cfs_quota_us"  # type: ignore[operator]
            assert quota.read_text().strip() == "-1"
            assert entry["exempt_threads"] == ["C2 CompilerThre"]
            moved = after.exempt_cpu_s - before.exempt_cpu_s
            assert entry["exempt_cpu_s_window"] == pytest.approx(moved)
        else:
            assert exempt == 0
            assert entry["exempt_threads"] == [] and entry["exempt_cpu_s_window"] == 0
    finally:
        assert cgroups.teardown() == []
    no_cgroups_left(cgroups.run)


def test_budgeted_run_accounts_cpu_and_throttles_the_server(
    tmp_path, base_port, netns_prefix, loadgen_jar, hierarchy
):
    # Tight: memcached wants more than this even when the machine is busy with other work.
    point = emulated(budgets_cores={"server": 0.05})
    manifest = run_point(point, options(tmp_path, "run", base_port, netns_prefix))
    no_leftovers(netns_prefix)
    no_cgroups_left(netns_prefix)
    assert manifest["status"] == "ok", manifest["error"]
    cpu = manifest["cpu"]
    assert cpu["accounting"] == hierarchy.name
    assert cpu["budgets_cores"] == {"server1": 0.05, "client1": None}
    hosts = {h["name"]: h for h in cpu["hosts"]}
    server, client = hosts["server1"], hosts["client1"]
    assert server["quota_us"] == cfs.quota_us(0.05)
    assert 0 < server["util"] <= 1.1
    assert server["nr_throttled"] > 0 and server["throttled_s"] > 0
    assert 0 < server["throttled_share"] <= 1
    assert server["cpu_s_window"] <= server["cpu_s_run"]
    assert client["util"] is None and client["cores_window"] > 0
    assert client["nr_throttled"] == 0
    assert cpu["window_s"] >= point.duration_s
    machine = cpu["machine"]
    assert machine["cores"] == cpuaccount.cores()
    assert 0 < machine["busy_share"] <= 1
    assert machine["busy_share"] + machine["idle_share"] + machine["steal_share"] == (
        pytest.approx(1)
    )
    assert cpu["hosts_cores"] == pytest.approx(server["cores_window"] + client["cores_window"])
    assert isinstance(cpu["host_saturated"], bool)
    assert (cpu["host_saturated"]) == any("saturated" in w for w in manifest["warnings"])
    # The whole run reads back as JSON with the same numbers.
    assert json.loads((tmp_path / "run" / "run.json").read_text())["cpu"] == cpu


def test_a_budgeted_middleware_runs_its_jit_and_collector_outside_the_budget_on_v1_only(
    tmp_path, base_port, netns_prefix, loadgen_jar, hierarchy
):
    point = emulated(middlewares=1, budgets_cores={"middleware": 0.3})
    manifest = run_point(point, options(tmp_path, "run", base_port, netns_prefix))
    no_leftovers(netns_prefix)
    no_cgroups_left(netns_prefix)
    assert manifest["status"] == "ok", manifest["error"]
    cpu = manifest["cpu"]
    mw = next(h for h in cpu["hosts"] if h["name"] == "middleware1")
    # Its JVM compiles with C1 only, so its code is settled before the measurement.
    java = next(p["command"] for p in manifest["processes"] if p["role"] == "middleware")
    assert java[: java.index("-jar")] == ["java", *cpubudget.BUDGETED_JVM_FLAGS]
    if hierarchy.version == 1:
        assert "stats-collector" in mw["exempt_threads"]
        assert {"C1 CompilerThre", "C2 CompilerThre"} & set(mw["exempt_threads"])
        assert mw["exempt_cpu_s_window"] > 0
        assert mw["exempt_cpu_s_run"] >= mw["exempt_cpu_s_window"]
    else:
        # v2 moves no single thread out of a host's cgroup: the JIT runs within the budget.
        assert mw["exempt_threads"] == []
        assert mw["exempt_cpu_s_window"] == 0 and mw["exempt_cpu_s_run"] == 0
    unbudgeted = [h for h in cpu["hosts"] if h["budget_cores"] is None]
    assert all(h["exempt_threads"] == [] for h in unbudgeted)
    if cpu["hosts_cores"] is not None:
        total = sum(h["cores_window"] for h in cpu["hosts"])
        assert cpu["hosts_cores"] == pytest.approx(
            total + mw["exempt_cpu_s_window"] / cpu["window_s"]
        )


def test_a_budgeted_middleware_is_warmed_up_with_its_quota_open_before_it_is_measured(
    tmp_path, base_port, netns_prefix, loadgen_jar, hierarchy
):
    # 0.02 cores holds the middleware far below what it serves with its quota open.
    point = emulated(middlewares=1, budgets_cores={"middleware": 0.02})
    manifest = run_point(point, options(tmp_path, "run", base_port, netns_prefix))
    no_leftovers(netns_prefix)
    no_cgroups_left(netns_prefix)
    assert manifest["status"] == "ok", manifest["error"]
    warm = read_memtier(tmp_path / "run/warmup/clients/client1.0/result.json")
    measured = read_memtier(tmp_path / "run/clients/client1.0/result.json")

    def ops_per_s(r) -> float:
        return float(r.windows["count"].sum()) / ((r.end_ms - r.start_ms) / 1000)

    assert warm.end_ms - warm.start_ms <= 1000 * (WARMUP_LAUNCH_S + 1)
    assert measured.start_ms >= warm.end_ms  # before the measurement, and not part of it
    # At most what its quota lets it serve, at the CPU per request it spent when measured (a
    # period's worth of slack on the quota): the warm-up served more, so its quota was open.
    mw = next(h for h in manifest["cpu"]["hosts"] if h["role"] == "middleware")
    per_request_s = mw["cores_window"] / ops_per_s(measured)
    budgeted_at_most = 0.02 * 1.15 / per_request_s
    assert ops_per_s(warm) > 1.2 * budgeted_at_most, (ops_per_s(warm), budgeted_at_most)


def test_processes_are_in_their_hosts_cgroups_and_sigterm_removes_them(
    tmp_path, base_port, mwlab_run, netns_prefix, loadgen_jar, hierarchy
):
    out = tmp_path / "run"
    args = [
        "--out", str(out), "--hosts", "emulated", "--driver", "builtin", "--duration", "30",
        "--ratio", "1:0", "--data-size", "64", "--base-port", str(base_port),
        "--netns-prefix", netns_prefix, "--linkcap-cache", str(tmp_path / "linkcap.json"),
        "--budget-server", "0.3", "--budget-client", "0.5", "--pause-at", "clients",
    ]  # fmt: skip
    run = mwlab_run(args)
    run.wait_for("paused at clients")
    # The clients were just started: wait until each has joined and exec'd its command.
    deadline = time.monotonic() + 60
    while any(ln.split(" ", 2)[1] in ("sh", "ip") for ln in processes_in(out)):
        assert time.monotonic() < deadline, processes_in(out)
        time.sleep(0.1)
    seen = {}
    for line in processes_in(out):
        pid, command = line.split(" ", 1)
        cgroups = Path(f"/proc/{pid}/cgroup").read_text()
        host = "server1" if "memcached" in command else "client1"
        seen[host] = f"{command}\n{cgroups}"
    assert set(seen) == {"server1", "client1"}
    for host, cgroups in seen.items():
        # One line per hierarchy: cpu and cpuacct (v1, unless co-mounted), or the unified one.
        ours = [ln for ln in cgroups.splitlines() if ln.endswith(f":/mwlab/{netns_prefix}/{host}")]
        assert len(ours) == len(hierarchy.controllers()), cgroups
    # The clients are measuring: the budgets bind, and the runs' cgroups weigh more.
    server = hierarchy.cpu / "mwlab" / netns_prefix / "server1"
    if hierarchy.version == 1:
        assert int((server / "cpu.cfs_quota_us").read_text()) == cfs.quota_us(0.3)
        assert int((hierarchy.cpu / "mwlab" / "cpu.shares").read_text()) == cpubudget.SHARES_V1
    else:
        assert (server / "cpu.max").read_text().split() == cpubudget.cpu_max(0.3).split()
        assert int((hierarchy.cpu / "mwlab" / "cpu.weight").read_text()) == cpubudget.WEIGHT_V2
    run.send("SIGTERM")
    assert run.finish() == 143
    no_leftovers(netns_prefix)
    no_cgroups_left(netns_prefix)
    assert processes_in(out) == []


def test_a_failed_run_leaves_no_cgroup(tmp_path, base_port, netns_prefix, loadgen_jar, hierarchy):
    opts = options(tmp_path, "fail", base_port, netns_prefix, fail_at="clients")
    manifest = run_point(emulated(budgets_cores={"client": 0.5}, servers=2), opts)
    assert manifest["status"] == "failed"
    assert "injected failure" in manifest["error"]
    assert [h["name"] for h in manifest["cpu"]["hosts"]] == ["server1", "server2", "client1"]
    no_leftovers(netns_prefix)
    no_cgroups_left(netns_prefix)


def test_without_cgroups_the_run_goes_on_unbudgeted_with_a_warning(
    tmp_path, base_port, netns_prefix, loadgen_jar
):
    opts = options(tmp_path, "none", base_port, netns_prefix, cgroup_root=tmp_path / "absent")
    manifest = run_point(emulated(budgets_cores={"server": 0.3}), opts)
    no_leftovers(netns_prefix)
    assert manifest["status"] == "ok", manifest["error"]
    assert any("no CPU budgets" in w and "absent" in w for w in manifest["warnings"])
    cpu = manifest["cpu"]
    assert cpu["accounting"] == "machine"
    assert cpu["hosts"] == [] and cpu["budgets_cores"] == {}
    assert 0 < cpu["machine"]["busy_share"] <= 1


def test_run_point_refuses_a_point_that_does_not_fit(tmp_path):
    point = emulated(budgets_cores={"server": 64.0})
    with pytest.raises(RunError, match="do not fit"):
        run_point(point, RunOptions(out=tmp_path / "x", progress=False, linkcap_cache=None))
    assert not (tmp_path / "x").exists()


def test_local_hosts_record_the_machine_and_ignore_budgets_with_a_warning(
    tmp_path, base_port, loadgen_jar
):
    point = emulated(hosts="local", duration_s=2, budgets_cores={"server": 0.5})
    opts = RunOptions(out=tmp_path / "local", base_port=base_port, progress=False)
    manifest = run_point(point, opts)
    assert manifest["status"] == "ok", manifest["error"]
    assert any("emulated hosts only" in w for w in manifest["warnings"])
    cpu = manifest["cpu"]
    assert cpu["accounting"] == "machine" and cpu["hosts"] == []
    assert 0 < cpu["machine"]["busy_share"] <= 1
    assert cpu["outside_budgets_cores"] == pytest.approx(
        cpu["machine"]["busy_share"] * cpu["machine"]["cores"]
    )


def test_cgroups_that_cannot_be_made_leave_the_run_unbudgeted_with_a_warning(
    tmp_path, base_port, netns_prefix, loadgen_jar
):
    # A cgroup v1 layout whose `mwlab` is a file: no host's cgroup can be created under it.
    root = tmp_path / "cgroup"
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (root / "cpuacct").mkdir()
    (root / "cpuacct" / "cpuacct.usage").write_text("0\n")
    (root / "cpu" / "mwlab").write_text("")
    opts = options(tmp_path, "run", base_port, netns_prefix, cgroup_root=root)
    manifest = run_point(emulated(duration_s=1, budgets_cores={"server": 0.3}), opts)
    no_leftovers(netns_prefix)
    assert manifest["status"] == "ok", manifest["error"]
    assert any("cannot create cgroup" in w for w in manifest["warnings"]), manifest["warnings"]
    assert manifest["cpu"]["accounting"] == "machine" and manifest["cpu"]["hosts"] == []
    # Nothing was left half-made: no run directory in either hierarchy.
    assert list((root / "cpuacct").iterdir()) == [root / "cpuacct" / "cpuacct.usage"]
    assert sorted(p.name for p in (root / "cpu").iterdir()) == ["cpu.cfs_quota_us", "mwlab"]


def test_the_populating_loader_runs_outside_the_servers_budget(
    tmp_path, base_port, mwlab_run, netns_prefix, loadgen_jar, hierarchy
):
    out = tmp_path / "run"
    args = [
        "--out", str(out), "--hosts", "emulated", "--driver", "builtin", "--duration", "5",
        "--ratio", "0:1", "--data-size", "64", "--key-maximum", "100000",
        "--base-port", str(base_port), "--netns-prefix", netns_prefix,
        "--linkcap-cache", str(tmp_path / "linkcap.json"), "--budget-server", "0.3",
        "--pause-at", "populate",
    ]  # fmt: skip
    run = mwlab_run(args)
    run.wait_for("paused at populate")
    deadline = time.monotonic() + 60
    while any(ln.split(" ", 2)[1] in ("sh", "ip") for ln in processes_in(out)):
        assert time.monotonic() < deadline, processes_in(out)
        time.sleep(0.1)
    server = f":/mwlab/{netns_prefix}/server1"
    placed = {}
    for line in processes_in(out):
        pid, command = line.split(" ", 1)
        placed[command.split()[0]] = Path(f"/proc/{pid}/cgroup").read_text()
    assert set(placed) == {"memcached", "java"}, placed
    assert server in placed["memcached"]
    assert f"/mwlab/{netns_prefix}/" not in placed["java"]
    run.send("SIGTERM")
    assert run.finish() == 143
    no_leftovers(netns_prefix)
    no_cgroups_left(netns_prefix)


def test_budgets_lift_once_the_clients_end(
    tmp_path, base_port, mwlab_run, netns_prefix, loadgen_jar, hierarchy
):
    out = tmp_path / "run"
    args = [
        "--out", str(out), "--hosts", "emulated", "--driver", "builtin", "--duration", "2",
        "--ratio", "1:0", "--data-size", "64", "--base-port", str(base_port),
        "--netns-prefix", netns_prefix, "--linkcap-cache", str(tmp_path / "linkcap.json"),
        "--budget-server", "0.3", "--pause-at", "stop",
    ]  # fmt: skip
    run = mwlab_run(args)
    run.wait_for("paused at stop")
    server = hierarchy.cpu / "mwlab" / netns_prefix / "server1"
    if hierarchy.version == 1:
        # Shut-down and log collection are harness work: no quota any more.
        assert int((server / "cpu.cfs_quota_us").read_text()) == -1
    else:
        assert (server / "cpu.max").read_text().split()[0] == "max"
    run.send("SIGTERM")
    assert run.finish() == 143
    no_cgroups_left(netns_prefix)
