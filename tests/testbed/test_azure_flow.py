"""The study on Azure (`snakemake --profile azure`) end to end, with `az` the only stand-in
(tests/cloud/az, on PATH for this test only): the plan is confirmed, every study's VMs are
created (a namespace with a real sshd and a host key of its own each), provisioning waits
until each one's cloud-init has finished, preflight pins the new host keys, the runs measure
over ssh, and when the pipeline ends the resource groups are deleted. A second measurement
fails mid-way (one VM loses memcached after preflight, and the pipeline is stopped with
SIGTERM while its runs fail): the pipeline's onerror handler still deletes every group."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from testbed import emulation
from tests.capabilities import provided

from . import sshd
from .conftest import have, processes_in, processes_matching

pytestmark = [pytest.mark.netns, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
AZ = ROOT / "tests" / "cloud" / "az"
# The provisioned topology, small: what the two smallest families use.
MACHINES = {
    "2018": {"server": 2, "client": 1, "middleware": 0},
    "2015": {"server": 1, "client": 2, "middleware": 0},
}
VMS = {
    f"mw{study}-{role}{i + 1}": (study, role)
    for study, counts in MACHINES.items()
    for role, n in counts.items()
    for i in range(n)
}


def _profile(where: Path, results: Path, key: Path, remote: Path, group: str) -> Path:
    """A profile like cluster-smoke (its smallest grid: baseline_direct with two servers,
    mq_db_baseline at 10 clients) whose machines are provisioned."""
    smoke = yaml.safe_load((ROOT / "workflows/profiles/cluster-smoke/study.yaml").read_text())
    smoke["families"]["mq_db_baseline"]["levels"]["clients"] = ["10"]
    study = {
        "profile": "azure-smoke",
        "results": str(results),
        "hosts": "ssh",
        "inventories": {s: f"{results}/inventory-{s}.yaml" for s in MACHINES},
        "studies": sorted(MACHINES),
        "provision": {
            "dry_run": False,
            "confirm": True,
            "resource_group": group,
            "location": "westeurope",
            "ssh_public_key": f"{key}.pub",
            # The stand-in's VMs log in as root (Azure refuses that admin name).
            "admin_user": "root",
            "remote_dir": str(remote),
            "ready_poll_s": 0.2,
            "ready_timeout_s": 60,
            "machines": MACHINES,
        },
        "run": smoke["run"],
        "scale": smoke["scale"],
        "families": smoke["families"],
    }
    where.mkdir()
    (where / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    (where / "config.yaml").write_text(
        yaml.safe_dump(
            {"configfile": str(where / "study.yaml"), "cores": 2, "resources": ["testbed=1"],
             "rerun-incomplete": True, "printshellcmds": False}
        )
    )  # fmt: skip
    return where


def _pipeline(profile: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`snakemake --profile <profile> measured`: what `snakemake --profile azure` runs up to
    the measurement's end (the report's rules only analyse it further)."""
    command = [sys.executable, "-m", "snakemake", "--profile", str(profile), "measured"]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, check=False, env=env, timeout=600
    )


def _calls(state: Path) -> list[list[str]]:
    log = state / "calls.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [[a for a in json.loads(line) if a] for line in lines]


def _verb(call: list[str]) -> str:
    n = 3 if call[:2] in (["network", "vnet"], ["vm", "run-command"]) else 2
    return " ".join(call[:n])


def _value(call: list[str], option: str) -> str:
    return call[call.index(option) + 1]


def _show(title: str, calls: list[list[str]]) -> None:
    print(f"--- {title}: {len(calls)} az calls")
    for call in calls:
        print("az " + shlex.join(call))


def _groups_left(state: Path) -> list[str]:
    doc = state / "state.json"
    return sorted(json.loads(doc.read_text())["groups"]) if doc.exists() else []


def _torn_down(state: Path, prefix: str, results: Path, calls: list[list[str]]) -> None:
    """Every created group deleted, after every other call, and nothing of its VMs left."""
    created = {_value(c, "--name") for c in calls if _verb(c) == "group create"}
    deleted = [_value(c, "--name") for c in calls if _verb(c) == "group delete"]
    assert created and set(deleted) == created, (created, deleted)
    last = max(i for i, c in enumerate(calls) if _verb(c) != "group delete")
    assert all(i > last for i, c in enumerate(calls) if _verb(c) == "group delete")
    assert _groups_left(state) == []
    assert emulation.leftovers(prefix) == [], "namespaces or links left behind"
    assert processes_matching(str(state)) == [], "sshd left running"
    assert not list((results / "provisioned").glob("*.json")), "teardown records left"


def _self_removing_memcached(where: Path) -> Path:
    """A VM's ssh PATH whose memcached answers once (preflight's version probe) and is then
    gone: the VM loses it after preflight."""
    sshd.path_without(where, "memcached")
    real = shutil.which("memcached") or "/usr/bin/memcached"
    wrapper = where / "memcached"
    wrapper.write_text(f'#!/bin/sh\nrm -f "$0"\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    return where


def _wait_for_log(where: Path, text: str, proc: subprocess.Popen[str]) -> str:
    """The first line with `text` in a log under `where`, once one has it."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        for log in where.rglob("*.log") if where.exists() else []:
            lines = [ln for ln in log.read_text(errors="replace").splitlines() if text in ln]
            if lines:
                return lines[0]
        time.sleep(0.1)
    pytest.fail(f"no {text!r} in {where} (pipeline exit {proc.poll()})")


def test_azure_profile_provisions_measures_and_tears_down(tmp_path, netns_prefix):
    provided((ROOT / "build" / "loadgen.jar").exists(), "build/loadgen.jar", "make build")
    provided(have("sshd") and have("ssh"), "the openssh server or client", "make setup")
    started = time.monotonic()
    key = tmp_path / "keys" / "id"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    az_bin = tmp_path / "az-bin"
    az_bin.mkdir()
    (az_bin / "az").symlink_to(AZ)
    # The VMs' scratch directories: open to other users as a VM's /tmp is (PostgreSQL's user).
    remote = Path(tempfile.mkdtemp(prefix="mwlab-azure-", dir="/tmp"))
    remote.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "MWLAB_AZURE_CONFIRM"}
    env["PYTHONPATH"] = str(ROOT)
    env["PATH"] = f"{az_bin}:{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env |= {"MWLAB_AZ_STANDIN_PREFIX": netns_prefix, "MWLAB_AZ_STANDIN_RUNNING": "2"}
    states = [tmp_path / "az-state-1", tmp_path / "az-state-2"]
    try:
        # ---- A full measurement ----
        results = tmp_path / "results"
        group = f"{netns_prefix}-a"
        profile = _profile(tmp_path / "profile", results, key, remote, group)
        done = _pipeline(profile, env | {"MWLAB_AZ_STANDIN_STATE": str(states[0])})
        calls = _calls(states[0])
        _show("the measurement", calls)
        print(done.stdout[-6000:])
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]

        verbs = Counter(_verb(c) for c in calls)
        assert verbs["group create"] == 2 and verbs["network vnet create"] == 2
        creates = {_value(c, "--name"): c for c in calls if _verb(c) == "vm create"}
        assert set(creates) == set(VMS)
        for name, call in creates.items():
            study, role = VMS[name]
            assert _value(call, "--resource-group") == f"{group}-{study}"
            tags = set(call[call.index("--tags") + 1 :])
            assert {f"role={role}", f"study={study}", f"measurement={group}"} <= tags
        sizes = {n: _value(c, "--size") for n, c in creates.items()}
        assert sizes["mw2018-server1"] == "Standard_A1_v2"
        assert sizes["mw2018-client1"] == "Standard_A2_v2"
        assert {sizes[n] for n in VMS if n.startswith("mw2015")} == {"Standard_D2s_v3"}
        # The quota was read before the first VM existed.
        first_vm = min(i for i, c in enumerate(calls) if _verb(c) == "vm create")
        assert any(_verb(c) == "vm list-usage" for c in calls[:first_vm])
        # Readiness waited: cloud-init was asked more than once per VM (it answered
        # "running" twice), after the VM was created.
        for name in VMS:
            asked = [
                i
                for i, c in enumerate(calls)
                if _verb(c) == "vm run-command invoke" and _value(c, "--name") == name
            ]
            assert len(asked) > 1, name
            assert min(asked) > calls.index(creates[name])
        assert "cloud-init done" in done.stdout

        # cloud-init installs what each study's drivers need: no study's points name memtier.
        init_2018 = (results / ".provision-2018" / "cloud-init.yaml").read_text()
        init_2015 = yaml.safe_load((results / ".provision-2015" / "cloud-init.yaml").read_text())
        assert "libmemcached-tools" in init_2018 and "memtier" not in init_2018
        assert "postgresql" in init_2015["packages"] and "memtier" not in str(init_2015)

        # Preflight pinned each VM's own, new host key.
        for study in MACHINES:
            assert (results / "hosts" / study / "preflight.json").is_file()
            known = (results / "hosts" / study / "known_hosts").read_text().split("\n")
            keys = {line.split()[2] for line in known if line.strip()}
            assert len(keys) == sum(MACHINES[study].values()), known

        # The runs measured over ssh on the study's VMs.
        paths = sorted((results / "runs").rglob("run.json"))
        manifests = {p: json.loads(p.read_text()) for p in paths}
        family = {p: p.relative_to(results / "runs").parts[0] for p in paths}
        assert sorted(family.values()) == ["baseline_direct"] * 2 + ["mq_db_baseline"]
        for p, m in manifests.items():
            assert m["status"] == "ok" and m["host_kind"] == "ssh", p
            study = "2018" if family[p] == "baseline_direct" else "2015"
            assert {h["name"] for h in m["hosts"]} <= {n for n, v in VMS.items() if v[0] == study}

        # Teardown at the end deleted both groups and everything of their VMs.
        assert "teardown: deleting resource group" in done.stdout
        _torn_down(states[0], netns_prefix, results, calls)

        # ---- A measurement that fails mid-way ----
        # One VM loses memcached after preflight, so the 2018 runs fail there (a failed run
        # stands as data: the pipeline goes on); while they fail the pipeline is interrupted,
        # as a stop request (SIGTERM) would: it stops with an error, and the groups go.
        results2 = tmp_path / "results-2"
        group2 = f"{netns_prefix}-b"
        profile2 = _profile(tmp_path / "profile-2", results2, key, remote, group2)
        bin_dir = _self_removing_memcached(tmp_path / "server1-bin")
        env2 = env | {
            "MWLAB_AZ_STANDIN_STATE": str(states[1]),
            "MWLAB_AZ_STANDIN_PATHS": json.dumps({"mw2018-server1": str(bin_dir)}),
        }
        out2 = tmp_path / "pipeline-2.log"
        with out2.open("w") as sink:
            command = [sys.executable, "-m", "snakemake", "--profile", str(profile2), "measured"]
            proc = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT,
                                    text=True, env=env2)  # fmt: skip
            try:
                failing = _wait_for_log(results2 / "logs" / "series", "missing tools", proc)
                # SIGTERM, not SIGINT: started from a background job, the test's processes
                # may ignore SIGINT; Snakemake stops on SIGTERM after its running jobs.
                proc.send_signal(signal.SIGTERM)
                code = proc.wait(300)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(60)
        output = out2.read_text()
        calls2 = _calls(states[1])
        _show("the measurement that failed", calls2)
        print(output[-6000:])
        assert code != 0
        # It failed mid-way: provisioned, preflight passed, then the 2018 runs failed on the
        # VM that lost memcached.
        assert (results2 / "hosts" / "2018" / "preflight.json").is_file()
        assert "memcached on mw2018-server1" in failing
        assert "Will exit after finishing currently running jobs" in output
        assert "teardown: after error" in output
        _torn_down(states[1], netns_prefix, results2, calls2)
        assert processes_in(results2) == []
    finally:
        # A failed assertion must not leave VMs running: delete what the stand-in still has.
        for state in states:
            for name in _groups_left(state):
                subprocess.run(
                    [str(AZ), "group", "delete", "--name", name, "--yes"],
                    env=env | {"MWLAB_AZ_STANDIN_STATE": str(state)},
                    check=False,
                )
        shutil.rmtree(remote, ignore_errors=True)
        print(f"test wall time: {time.monotonic() - started:.0f} s")
    assert emulation.leftovers(netns_prefix) == []


# ---- The plan, its confirmation and the settings, without VMs ----


def _provision(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """`mwlab provision` with the stand-in az on PATH (its state in tmp_path/az-state)."""
    az_bin = tmp_path / "az-bin"
    if not az_bin.exists():
        az_bin.mkdir()
        (az_bin / "az").symlink_to(AZ)
    env = {k: v for k, v in os.environ.items() if k != "MWLAB_AZURE_CONFIRM"} | extra
    env["PATH"] = f"{az_bin}:{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env["MWLAB_AZ_STANDIN_STATE"] = str(tmp_path / "az-state")
    return subprocess.run(
        [sys.executable, "-m", "mwlab", "provision", *args],
        cwd=ROOT, capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip


def test_unconfirmed_plan_creates_nothing(tmp_path):
    key = tmp_path / "id.pub"
    key.write_text("ssh-ed25519 AAAA test\n")
    inventory = tmp_path / "inventory-2016.yaml"
    proc = _provision(tmp_path, "--study", "2016", "--inventory", str(inventory),
                      "--ssh-public-key", str(key), "--hours", "2016=10")  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    # The plan: sizes from workflows/machines.yaml (the 2016 servers are Basic A2s: 2 vCPU),
    # the quota and a dated estimate.
    assert "7 server x Standard_A2_v2 (2 vCPU)" in proc.stdout
    assert "1 middleware x Standard_A8_v2 (8 vCPU)" in proc.stdout
    assert "Total Regional vCPUs: need 32 vCPUs" in proc.stdout
    assert "cost ESTIMATE" in proc.stdout and "prices of 20" in proc.stdout
    assert "VM-hours" in proc.stdout
    assert "nothing was created" in proc.stderr and "MWLAB_AZURE_CONFIRM=1" in proc.stderr
    assert [_verb(c) for c in _calls(tmp_path / "az-state")] == ["vm list-usage"]
    assert not inventory.exists()


def test_a_missing_ssh_key_fails_before_any_az_call(tmp_path):
    missing = tmp_path / "nope.pub"
    proc = _provision(tmp_path, "--study", "2018", "--inventory", str(tmp_path / "inv.yaml"),
                      "--ssh-public-key", str(missing), MWLAB_AZURE_CONFIRM="1")  # fmt: skip
    assert proc.returncode == 1
    assert f"ssh public key {missing} does not exist" in proc.stderr
    assert _calls(tmp_path / "az-state") == []


def test_delete_needs_only_the_group(tmp_path):
    proc = _provision(tmp_path, "--delete", "--resource-group", "mwlab-study-2018")
    # The stand-in knows no such group: az's own answer is passed on.
    assert proc.returncode == 1 and "ResourceGroupNotFound" in proc.stderr
    assert _calls(tmp_path / "az-state") == [
        ["group", "delete", "--name", "mwlab-study-2018", "--yes", "--output", "json"]
    ]


def test_readiness_times_out_naming_the_vm():
    from testbed.provision import ProvisionError, Settings, wait_until_ready

    now = [0.0]

    def az(args):
        name = args[args.index("--name") + 1]
        status = "done" if name == "mw2018-server1" else "running"
        return {"value": [{"message": f"Enable succeeded: \n[stdout]\nstatus: {status}\n"}]}

    def sleep(seconds):
        now[0] += seconds

    settings = Settings(study="2018", ready_timeout_s=60, ready_poll_s=10)
    with pytest.raises(ProvisionError) as err:
        wait_until_ready(settings, ["mw2018-server1", "mw2018-client1"], az, say=lambda m: None,
                         clock=lambda: now[0], sleep=sleep)  # fmt: skip
    assert "mw2018-client1: cloud-init has not finished after" in str(err.value)
    assert "mw2018-server1" not in str(err.value)


def test_cloud_init_installs_memtier_only_where_a_driver_needs_it():
    from testbed.provision import Settings, cloud_init, study_software

    init = {s: yaml.safe_load(Settings(study=s).cloud_init) for s in ("2018", "2016", "2015")}
    # The catalogue names its drivers: 2018 the built-in generator, 2016 memaslap and the
    # built-in one, 2015's SimpleMQ its own clients. None is memtier.
    assert study_software("2018") == ("memcached", {"builtin"})
    assert study_software("2016")[1] == {"builtin", "memaslap"}
    assert "memtier" not in str(init)
    assert "memtier-benchmark" in cloud_init("memcached", {"builtin", "memtier"})
    assert "libmemcached-tools" in init["2016"]["packages"]
    assert "postgresql" in init["2015"]["packages"]
