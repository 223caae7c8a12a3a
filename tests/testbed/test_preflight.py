"""Preflight of an ssh inventory: new machines whose host keys nothing trusts, one of them
without a tool the study needs on its ssh PATH."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from testbed.inventory import load_inventory
from testbed.preflight import PreflightError, run_preflight

from . import sshd

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

ROLES = [("server1", "server"), ("middleware1", "middleware"), ("client1", "client")]


def test_preflight_names_the_missing_tool_then_pins_every_machine(tmp_path, netns_prefix):
    bin_dir = sshd.path_without(tmp_path / "server-bin", "memcached")
    paths = {"server1": str(bin_dir)}
    with sshd.ssh_machines(tmp_path, netns_prefix, ROLES, trusted=False, paths=paths) as (
        inventory,
        _remote,
    ):
        out = tmp_path / "hosts"
        lines: list[str] = []
        with pytest.raises(PreflightError) as failed:
            run_preflight(inventory, "memcached", ["builtin"], out, say=lines.append)
        # The machine and the tool, at once, and nothing the runs could take for ready.
        assert "server1: missing memcached on its ssh PATH" in str(failed.value)
        assert "middleware1" not in str(failed.value) and "client1" not in str(failed.value)
        assert not (out / "inventory.yaml").exists()
        assert lines[0].startswith("preflight: server1 (server, root@198.1")  # 198.18.0.0/15

        # Installed (here: on that machine's PATH), the same preflight passes.
        (bin_dir / "memcached").symlink_to(shutil.which("memcached") or "/usr/bin/memcached")
        if shutil.which("memtier_benchmark") is None:
            # A load generator a point names is never swapped for one the clients have.
            with pytest.raises(PreflightError, match="client1: missing memtier_benchmark"):
                run_preflight(inventory, "memcached", ["memtier"], out, say=lines.append)
        record = run_preflight(inventory, "memcached", ["builtin"], out, say=lines.append)
        machines = {m["name"]: m for m in record["machines"]}
        assert set(machines) == {name for name, _ in ROLES}
        server = machines["server1"]
        assert server["tools"]["memcached"].startswith("memcached ")
        assert server["cores"] >= 1 and server["memory_mib"] > 0 and server["kernel"]
        # The machines share this one's clock: the offset lies within the call's uncertainty.
        assert abs(server["clock_offset_ms"]) <= server["clock_uncertainty_ms"] + 50
        assert set(record["links_mbit"]) == {"server", "middleware", "client"}
        # Capped by the emulated links underneath the machines (100 Mbit/s for the server).
        assert 0 < record["links_mbit"]["server"] <= 100
        assert record["drivers"] == ["builtin"]
        assert machines["client1"]["tools"]["java"]
        assert json.loads((out / "preflight.json").read_text()) == record

        # Every machine's key is pinned, and the runs' ssh checks it strictly.
        known = (out / "known_hosts").read_text().splitlines()
        assert len([k for k in known if k.strip()]) == len(ROLES)
        pinned = load_inventory(out / "inventory.yaml")
        assert pinned.known_hosts == (out / "known_hosts").resolve()
        host = pinned.ssh_host(pinned.machines[0], "check")
        assert "StrictHostKeyChecking=yes" in host.ssh_options
        assert host.run("echo ok").stdout.strip() == "ok"
        # A machine whose key is not the pinned one is refused.
        # (ssh-keygen -R: the entries may be hashed, as Debian's ssh_config asks).
        subprocess.run(
            ["ssh-keygen", "-R", host.address, "-f", str(out / "known_hosts")],
            capture_output=True,
            check=True,
            timeout=30,
        )
        refused = host.run("echo ok")
        assert refused.returncode != 0 and "ok" not in refused.stdout
        # The raw inventory, as written, trusted no key.
        assert "StrictHostKeyChecking=no" not in yaml.safe_dump(
            yaml.safe_load(inventory.read_text())
        )
