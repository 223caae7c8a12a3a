"""Provisioning plans the study's VMs and writes an inventory the ssh hosts can read."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from testbed.inventory import load_inventory
from testbed.provision import DryRunAz, ProvisionError, Settings, provision, setting_flag

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("study", "expected"),
    [("2018", {"client": 3, "middleware": 2, "server": 3}),
     ("2016", {"client": 5, "middleware": 1, "server": 7}),
     ("2015", {"client": 3, "middleware": 2, "server": 1})],
)  # fmt: skip
def test_dry_run_creates_the_study_topology(tmp_path: Path, study: str, expected: dict) -> None:
    inventory_path = tmp_path / "inventory.yaml"
    proc = subprocess.run(
        [sys.executable, "-m", "mwlab", "provision", "--study", study,
         "--inventory", str(inventory_path), "--dry-run"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    creates = [line for line in proc.stdout.splitlines() if line.startswith("az vm create")]
    assert len(creates) == sum(expected.values())
    inventory = load_inventory(inventory_path)
    assert Counter(m.role for m in inventory.machines) == Counter(expected)
    assert len({m.address for m in inventory.machines}) == len(inventory.machines)
    assert "dry run" in inventory_path.read_text().splitlines()[0]


def test_vm_sizes_follow_roles(tmp_path: Path) -> None:
    az = DryRunAz()
    provision(Settings(study="2018"), az, tmp_path)
    sizes = {
        call[call.index("--name") + 1]: call[call.index("--size") + 1]
        for call in az.calls
        if call[:2] == ["vm", "create"]
    }
    assert sizes["mw2018-middleware1"] == "Standard_A8_v2"
    assert sizes["mw2018-server3"] == "Standard_A1_v2"
    assert az.calls[0][:2] == ["group", "create"]


def test_the_2015_vms_are_the_seeds_m4_large_with_postgresql(tmp_path: Path) -> None:
    """Seed 003 ran every role on a 2 vCPU, 8 GiB m4.large; each VM installs PostgreSQL and
    Java for SimpleMQ, and the package's own PostgreSQL does not run beside the run's."""
    az = DryRunAz()
    inventory = provision(Settings(study="2015"), az, tmp_path)
    sizes = {call[call.index("--size") + 1] for call in az.calls if call[:2] == ["vm", "create"]}
    assert sizes == {"Standard_D2s_v3"}
    cloud_init = yaml.safe_load((tmp_path / "cloud-init.yaml").read_text())
    assert {"postgresql", "openjdk-17-jre-headless", "iperf3"} <= set(cloud_init["packages"])
    assert "memcached" not in cloud_init["packages"]
    assert ["systemctl", "disable", "--now", "postgresql"] in cloud_init["runcmd"]
    # ssh logs in as the admin user, not root: PostgreSQL runs as that user.
    assert inventory["user"] == "mwlab"
    assert [m["name"] for m in inventory["machines"] if m["role"] == "server"] == ["mw2015-server1"]


def test_unknown_study_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProvisionError, match="unknown study '2017'"):
        provision(Settings(study="2017"), DryRunAz(), tmp_path)


def test_failed_az_answer_is_reported(tmp_path: Path) -> None:
    def broken_az(args: list[str]) -> dict:
        return {} if args[:2] != ["vm", "create"] else {"privateIpAddress": "10.0.0.4"}

    with pytest.raises(ProvisionError, match="publicIpAddress"):
        provision(Settings(study="2018"), broken_az, tmp_path)


def test_yes_no_settings_read_as_a_profile_or_config_gives_them() -> None:
    """A profile gives `confirm: true`; `--config 'provision={"confirm": true}'` gives the text
    "true", and "false" must not read as yes."""
    assert setting_flag(True, "confirm") and setting_flag("true", "confirm")
    assert not setting_flag("false", "keep") and not setting_flag(False, "keep")
    with pytest.raises(ProvisionError, match="keep: 'maybe' is neither true nor false"):
        setting_flag("maybe", "keep")
