"""Provisioning of the study's Azure VMs with the `az` CLI, and the inventory it produces.

The plan is data (a list of `az` invocations), so a dry run prints it and produces an
inventory with placeholder addresses from 198.18.0.0/15, without touching Azure.

One study's VMs live in a resource group of their own, tagged (group and VMs) with the study,
the measurement and, on each VM, its role, so that a group left behind can be found
(`az group list --tag measurement=NAME`). The sizes come from workflows/machines.yaml (each
study's roles' machine types, their `azure_size`); before anything is created the plan shows
the VMs by size and region, their vCPUs against the subscription's quota and an estimate of
the VM-hours and their cost (workflows/azure-prices.yaml), and nothing is created unless the
user confirms. After the VMs are created, provisioning waits until each one's cloud-init has
finished (asked through `az vm run-command`). A record per created group (written as soon as
the group exists) lets the pipeline delete it afterwards (`teardown`).
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from common.paths import CATALOGUE, MACHINES, PROFILES, WORKFLOWS
from testbed.point import Point

PRICES = WORKFLOWS / "azure-prices.yaml"
# Setting it to 1 confirms the plan, as `provision: {confirm: true}` or --confirm do.
CONFIRM_ENV = "MWLAB_AZURE_CONFIRM"
ROLES = ("client", "middleware", "server")

# Machine counts per study: the 2018 study used three client, two middleware and three
# server VMs; the 2016 study up to five clients, one middleware and seven servers; the 2015
# study (seed 003, SimpleMQ) up to three client machines, two middlewares and one database.
# A profile may set its own (`provision: {machines: {"2018": {server: 2, ...}}}`).
TOPOLOGIES: dict[str, dict[str, int]] = {
    "2018": {"client": 3, "middleware": 2, "server": 3},
    "2016": {"client": 5, "middleware": 1, "server": 7},
    "2015": {"client": 3, "middleware": 2, "server": 1},
}

# The estimate's assumptions, ours: each run spends this long beyond its planned seconds
# (starting its processes over ssh, populating, copying its results back), and the VMs live
# this long beyond the runs (creation, cloud-init, preflight, the analysis before teardown).
RUN_OVERHEAD_S = 30.0
SETUP_H = 0.5

# What each system's VMs install. The packages' own services would run beside the study's
# (which the testbed starts per run, on other ports): disabled. The 2015 study's database is
# Ubuntu 22.04's PostgreSQL, version 14; what the runs use of it (pg_stat_wal,
# track_wal_io_timing) arrived in 14, SKIP LOCKED in 9.5, and a run checks the version.
PACKAGES: dict[str, list[str]] = {
    "memcached": ["openjdk-17-jre-headless", "memcached", "libmemcached-tools", "iperf3", "rsync"],
    "simplemq": ["openjdk-17-jre-headless", "postgresql", "iperf3"],
}
SERVICES = {"memcached": "memcached", "simplemq": "postgresql"}
# memtier_benchmark, for the studies whose points name it (`driver: memtier`): installed on its
# own, so that an archive without the package installs everything else (preflight then names
# it as missing on the clients, before any run).
MEMTIER_DRIVERS = {"memtier"}
_MEMTIER = (
    "apt-get install -y memtier-benchmark || echo 'memtier-benchmark is not in this image's"
    " archive: points with driver memtier cannot run here'"
)


class ProvisionError(RuntimeError):
    """An `az` call failed, or the plan cannot go ahead; the message says why."""


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ProvisionError(f"cannot read {path}: {e}") from e


def study_sizes(study: str, machines: Path = MACHINES) -> dict[str, tuple[str, int]]:
    """Role -> (Azure size, vCPUs) of a study: its roles' machine types in machines.yaml."""
    doc = _yaml(machines)
    spec = (doc.get("studies") or {}).get(str(study))
    if spec is None:
        raise ProvisionError(f"{machines}: no study {study}")
    out = {}
    for role, name in spec["roles"].items():
        kind = doc["machine_types"][name]
        if "azure_size" not in kind:
            raise ProvisionError(f"{machines}: machine type {name} has no azure_size")
        out[role] = (str(kind["azure_size"]), int(kind["vcpus"]))
    return out


def _found(node: Any, key: str) -> set[str]:
    """Every value of `key` anywhere in a catalogue entry (its fixed settings and levels)."""
    if isinstance(node, dict):
        here = {str(node[key])} if key in node else set()
        return here.union(*(_found(v, key) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_found(v, key) for v in node))
    return set()


def study_software(study: str, catalogue: Path = CATALOGUE) -> tuple[str, set[str]]:
    """The system a study's families run (memcached or simplemq) and the load generators
    (`driver`) its points ask for, read from the catalogue file (the catalogue's default where
    a family's fixed settings name none)."""
    doc = _yaml(catalogue) or {}
    families = doc.get("families", {})
    default = ((doc.get("defaults") or {}).get("fixed") or {}).get("driver", Point().driver)
    systems: set[str] = set()
    drivers: set[str] = set()
    for family in families.values():
        if str(family.get("study")) != str(study):
            continue
        systems |= _found(family, "system") or {"memcached"}
        drivers |= _found(family, "driver")
        if "driver" not in (family.get("fixed") or {}):
            drivers.add(str(default))
    if len(systems) != 1:
        raise ProvisionError(f"study {study} runs {sorted(systems) or 'nothing'}: one system")
    system = systems.pop()
    return system, drivers if system == "memcached" else set()


def cloud_init(system: str, drivers: Iterable[str]) -> str:
    """The cloud-init file of a study's VMs: what the system and its load generators need."""
    doc: dict[str, Any] = {
        "package_update": True,
        "packages": list(PACKAGES[system]),
        "runcmd": [["systemctl", "disable", "--now", SERVICES[system]]],
    }
    if MEMTIER_DRIVERS & set(drivers):
        doc["runcmd"].append(["sh", "-c", _MEMTIER])
    return "#cloud-config\n" + yaml.safe_dump(doc, sort_keys=False, width=1000)


@dataclass(frozen=True)
class VmSpec:
    name: str
    role: str
    size: str
    vcpus: int = 0


@dataclass(frozen=True)
class Settings:
    study: str
    # The study's own group; `measurement` (default: this name) tags it and its VMs.
    resource_group: str = "mwlab-study"
    location: str = "westeurope"
    admin_user: str = "mwlab"
    ssh_public_key: Path = Path("~/.ssh/id_ed25519.pub")
    image: str = "Ubuntu2204"
    # Machines per role; None: the study's (TOPOLOGIES).
    machines: dict[str, int] | None = None
    measurement: str | None = None
    # Each machine's scratch directory is <remote_dir>/<its name>.
    remote_dir: str = "/tmp/mwlab"
    ready_timeout_s: float = 1800.0
    ready_poll_s: float = 15.0

    def _known(self) -> None:
        if self.study not in TOPOLOGIES:
            raise ProvisionError(
                f"unknown study {self.study!r}; known: {', '.join(sorted(TOPOLOGIES))}"
            )

    @property
    def tag(self) -> str:
        return self.measurement or self.resource_group

    def vms(self) -> list[VmSpec]:
        self._known()
        sizes = study_sizes(self.study)
        counts = {**TOPOLOGIES[self.study], **(self.machines or {})}
        unknown = sorted(set(counts) - set(ROLES))
        if unknown:
            raise ProvisionError(f"study {self.study}: no role {', '.join(unknown)}")
        return [
            VmSpec(f"mw{self.study}-{role}{i + 1}", role, *sizes[role])
            for role in ROLES
            for i in range(int(counts.get(role, 0)))
        ]

    @property
    def cloud_init(self) -> str:
        """The cloud-init file of the study's VMs: the packages they install."""
        self._known()
        return cloud_init(*study_software(self.study))

    def public_key(self) -> Path:
        """The ssh public key file, which must exist (checked before any az call)."""
        key = self.ssh_public_key.expanduser()
        if not key.is_file():
            raise ProvisionError(
                f"ssh public key {key} does not exist: create one (ssh-keygen -t ed25519) or"
                " name yours with --ssh-public-key or the profile's"
                " `provision: {ssh_public_key: FILE}`"
            )
        return key


class AzureCli(Protocol):
    def __call__(self, args: Sequence[str]) -> Any: ...


def real_az(args: Sequence[str]) -> Any:
    """Runs one `az` command and returns its JSON output."""
    if shutil.which("az") is None:
        raise ProvisionError(
            "the Azure CLI `az` is not installed (https://aka.ms/azure-cli); --dry-run shows"
            " the az calls without it"
        )
    proc = subprocess.run(
        ["az", *args, "--output", "json"], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ProvisionError(f"az {shlex.join(args)} failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def _run_command_answer(message: str) -> dict[str, Any]:
    return {"value": [{"code": "ProvisioningState/succeeded", "message": message}]}


@dataclass
class DryRunAz:
    """Records the plan and answers like `az vm create` with placeholder addresses."""

    calls: list[list[str]] = field(default_factory=list)

    def __call__(self, args: Sequence[str]) -> Any:
        self.calls.append(list(args))
        if list(args[:2]) == ["vm", "create"]:
            n = sum(1 for c in self.calls if c[:2] == ["vm", "create"])
            return {"privateIpAddress": f"198.18.1.{n}", "publicIpAddress": f"198.19.1.{n}"}
        if list(args[:3]) == ["vm", "run-command", "invoke"]:
            return _run_command_answer("Enable succeeded: \n[stdout]\nstatus: done\n\n[stderr]\n")
        return {}


def plan(settings: Settings) -> list[list[str]]:
    """Every `az` call, in order, that creates the study's VMs."""
    group = ["--resource-group", settings.resource_group]
    vnet = f"{settings.resource_group}-vnet"
    tags = [f"study={settings.study}", f"measurement={settings.tag}"]
    calls = [
        ["group", "create", "--name", settings.resource_group, "--location", settings.location,
         "--tags", *tags],
        ["network", "vnet", "create", *group, "--name", vnet, "--address-prefix", "10.0.0.0/16",
         "--subnet-name", "study", "--subnet-prefix", "10.0.0.0/24"],
    ]  # fmt: skip
    for vm in settings.vms():
        calls.append(
            ["vm", "create", *group, "--name", vm.name, "--image", settings.image,
             "--size", vm.size, "--admin-username", settings.admin_user,
             "--ssh-key-values", str(settings.ssh_public_key.expanduser()),
             "--vnet-name", vnet, "--subnet", "study", "--public-ip-sku", "Standard",
             "--custom-data", "cloud-init.yaml", "--tags", f"role={vm.role}", *tags]
        )  # fmt: skip
    return calls


def readiness_call(settings: Settings, name: str) -> list[str]:
    return ["vm", "run-command", "invoke", "--resource-group", settings.resource_group,
            "--name", name, "--command-id", "RunShellScript",
            "--scripts", "cloud-init status"]  # fmt: skip


_STATUS = re.compile(r"^status:\s*(.+?)\s*$", re.M)


def cloud_init_status(answer: Any) -> str:
    """`cloud-init status` as `az vm run-command invoke` returns it: the status word(s) of
    the script's stdout, in `value[0].message` ("running", "done", "error", ...)."""
    try:
        message = str(answer["value"][0]["message"])
    except (KeyError, IndexError, TypeError) as e:
        raise ProvisionError(f"no value[0].message in the run-command answer: {answer!r}") from e
    found = _STATUS.search(message)
    if found is None:
        raise ProvisionError(f"no cloud-init status in the run-command output: {message!r}")
    return found.group(1)


def wait_until_ready(
    settings: Settings,
    names: Sequence[str],
    az: AzureCli,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, int]:
    """Waits until every VM's cloud-init has finished; returns the checks each one took.
    Raises ProvisionError naming each VM whose cloud-init failed or did not finish within
    `settings.ready_timeout_s`."""
    timeout, poll = settings.ready_timeout_s, settings.ready_poll_s
    say(f"provision: waiting for cloud-init on {len(names)} VMs (at most {timeout:.0f} s each)")

    def one(name: str) -> int:
        start, checks, last, shown = clock(), 0, "", ""
        while True:
            checks += 1
            try:
                status = cloud_init_status(az(readiness_call(settings, name)))
            except ProvisionError as e:
                # The VM agent may not answer yet: not ready, unless it never does.
                status, last = "unknown", str(e)
            elapsed = clock() - start
            if status.startswith(("done", "degraded")):
                say(f"provision: {name}: cloud-init {status} ({checks} checks, {elapsed:.0f} s)")
                return checks
            if status.startswith("error"):
                raise ProvisionError(
                    f"{name}: cloud-init failed (status: {status}); its log is"
                    " /var/log/cloud-init-output.log on the VM"
                )
            if elapsed >= timeout:
                why = f"; last answer: {last}" if status == "unknown" and last else ""
                raise ProvisionError(
                    f"{name}: cloud-init has not finished after {elapsed:.0f} s (status:"
                    f" {status}, {checks} checks){why}; raise provision.ready_timeout_s or look"
                    " at /var/log/cloud-init-output.log on the VM"
                )
            if status != shown:
                say(f"provision: {name}: cloud-init {status} ({elapsed:.0f} s)")
                shown = status
            sleep(poll)

    checks: dict[str, int] = {}
    problems: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, len(names) or 1)) as pool:
        futures = {pool.submit(one, name): name for name in names}
        for future in concurrent.futures.as_completed(futures):
            try:
                checks[futures[future]] = future.result()
            except ProvisionError as e:
                problems.append(str(e))
    if problems:
        raise ProvisionError("not ready: " + "; ".join(sorted(problems)))
    say(f"provision: all {len(names)} VMs ready")
    return checks


def _record(record_dir: Path, settings: Settings, inventory: Path | None, vms: list[str]) -> Path:
    """What teardown needs to delete a group this provisioning created."""
    record_dir.mkdir(parents=True, exist_ok=True)
    path = record_dir / f"{settings.resource_group}.json"
    doc = {
        "resource_group": settings.resource_group,
        "study": settings.study,
        "location": settings.location,
        "measurement": settings.tag,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "inventory": str(inventory) if inventory else None,
        "vms": vms,
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)
    return path


def provision(
    settings: Settings,
    az: AzureCli,
    workdir: Path,
    record_dir: Path | None = None,
    inventory_path: Path | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Creates the VMs, waits until their cloud-init has finished and returns the inventory
    of what was created. With `record_dir`, records the group as soon as it exists, so that
    a failure later on still leaves it to teardown. The caller checks the ssh key first
    (`Settings.public_key`, as `mwlab provision` does before any az call)."""
    dry_run = isinstance(az, DryRunAz)
    vms = {vm.name: vm for vm in settings.vms()}
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "cloud-init.yaml").write_text(settings.cloud_init)
    private_key = settings.ssh_public_key.expanduser().with_suffix("")
    hosts: list[dict[str, Any]] = []
    for call in plan(settings):
        call = [str(workdir / a) if a == "cloud-init.yaml" else a for a in call]
        if call[:2] == ["vm", "create"]:
            say(f"provision: creating {call[call.index('--name') + 1]}")
        answer = az(call)
        if call[:2] == ["group", "create"] and record_dir is not None and not dry_run:
            _record(record_dir, settings, inventory_path, list(vms))
        if call[:2] == ["vm", "create"]:
            vm = vms[call[call.index("--name") + 1]]
            try:
                private, public = answer["privateIpAddress"], answer["publicIpAddress"]
            except (KeyError, TypeError) as err:
                raise ProvisionError(f"az vm create {vm.name}: no {err} in its answer") from err
            hosts.append(
                {"name": vm.name, "role": vm.role, "address": private,
                 "ssh": f"{settings.admin_user}@{public}",
                 # Its own directory: machines that share a file system (the test's stand-in
                 # VMs) must not clean up each other's runs.
                 "remote_dir": f"{settings.remote_dir.rstrip('/')}/{vm.name}"}
            )  # fmt: skip
    wait_until_ready(settings, list(vms), az, say=say)
    # The layout of testbed.inventory.Inventory, which the ssh hosts read.
    return {
        "user": settings.admin_user,
        # Without the private key beside the public one, ssh uses the agent's keys.
        "identity": str(private_key) if dry_run or private_key.is_file() else None,
        "remote_dir": settings.remote_dir,
        "machines": hosts,
    }


def deprovision_plan(settings: Settings) -> list[list[str]]:
    return [delete_call(settings.resource_group)]


def delete_call(group: str) -> list[str]:
    # Waits for the deletion (no --no-wait), so that a failure is seen and reported.
    return ["group", "delete", "--name", group, "--yes"]


def write_inventory(
    inventory: dict[str, Any], path: Path, settings: Settings, dry_run: bool
) -> None:
    header = (
        f"# Inventory of study {settings.study}, resource group {settings.resource_group}"
        + (" (dry run: placeholder addresses)" if dry_run else "")
        + "\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + yaml.safe_dump(inventory, sort_keys=False))


# ---- The plan shown before anything is created ----


@dataclass(frozen=True)
class Prices:
    region: str
    as_of: str
    source: str
    # size -> (vCPUs, quota family, USD per hour)
    sizes: dict[str, tuple[int, str, float]]


def load_prices(path: Path = PRICES) -> Prices:
    doc = _yaml(path)
    return Prices(
        region=str(doc["region"]),
        as_of=str(doc["prices_as_of"]),
        source=str(doc["source"]),
        sizes={
            name: (int(s["vcpus"]), str(s["quota_family"]), float(s["usd_per_hour"]))
            for name, s in doc["sizes"].items()
        },
    )


def run_seconds(specs: Iterable[dict[str, Any]]) -> float:
    """The planned seconds of runs (their specs): measured, warm-up and cool-down seconds
    plus RUN_OVERHEAD_S each. Reruns of unstable points and retries come on top."""
    return sum(
        float(s.get("duration_s", 0)) + float(s.get("warmup_s", 0))
        + float(s.get("cooldown_s", 0)) + RUN_OVERHEAD_S
        for s in specs
    )  # fmt: skip


# Quota name -> (used, limit, its display name).
Usages = dict[str, tuple[int, int, str]]


def usage_table(answer: Any) -> Usages:
    """`az vm list-usage`: quota name -> (used, limit, its display name)."""
    out = {}
    for item in answer or []:
        try:
            name = item["name"]["value"]
            out[name] = (
                int(item["currentValue"]),
                int(item["limit"]),
                item.get("localName") or item["name"].get("localizedValue") or name,
            )
        except (KeyError, TypeError, ValueError):
            continue
    return out


@dataclass
class Plan:
    """The VMs of one or more studies, the quota they need and what they would cost."""

    studies: list[Settings]
    # study -> planned seconds of its runs (run_seconds); a study missing here is unknown.
    seconds: dict[str, float] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)
    prices: Prices = field(default_factory=load_prices)

    def vms(self) -> list[tuple[Settings, VmSpec]]:
        return [(s, vm) for s in self.studies for vm in s.vms()]

    def check_sizes(self) -> None:
        """Every size is in the price table, with the vCPUs of the study's machine type."""
        for s, vm in self.vms():
            known = self.prices.sizes.get(vm.size)
            if known is None:
                raise ProvisionError(
                    f"{vm.size} ({vm.name}) is not in {PRICES.name}: add its vCPUs, quota"
                    " family and price"
                )
            if vm.vcpus and known[0] != vm.vcpus:
                raise ProvisionError(
                    f"{vm.size} has {known[0]} vCPUs ({PRICES.name}) but study {s.study}'s"
                    f" {vm.role} machines have {vm.vcpus} (workflows/machines.yaml)"
                )

    def need(self) -> dict[str, dict[str, int]]:
        """location -> quota name -> vCPUs (`cores`: Total Regional vCPUs)."""
        out: dict[str, dict[str, int]] = {}
        for s, vm in self.vms():
            vcpus, family, _ = self.prices.sizes[vm.size]
            here = out.setdefault(s.location, {})
            here["cores"] = here.get("cores", 0) + vcpus
            here[family] = here.get(family, 0) + vcpus
        return out

    def quota(self, usages: dict[str, Usages]) -> tuple[list[str], list[str]]:
        """Lines of the quota check and the shortages, from each location's usage table."""
        lines, short = [], []
        for location, need in self.need().items():
            table = usages.get(location, {})
            for name, vcpus in sorted(need.items(), key=lambda kv: kv[0] != "cores"):
                if name not in table:
                    lines.append(f"  {location} {name}: need {vcpus} vCPUs, no such quota listed")
                    continue
                used, limit, label = table[name]
                free = limit - used
                verdict = "ok" if vcpus <= free else f"SHORT by {vcpus - free}"
                lines.append(
                    f"  {location} {label}: need {vcpus} vCPUs, {used} of {limit} in use,"
                    f" {free} free: {verdict}"
                )
                if vcpus > free:
                    short.append(f"{label} in {location}: need {vcpus}, {free} free")
        return lines, short

    def wall_hours(self) -> float | None:
        if not self.seconds:
            return None
        return SETUP_H + sum(self.seconds.values()) / 3600

    def cost_lines(self) -> list[str]:
        wall = self.wall_hours()
        p = self.prices
        if wall is None:
            return ["cost: no estimate (no planned runs given: --hours or --profile)"]
        lines = [
            f"time: {SETUP_H:g} h set-up (creation, cloud-init, preflight, analysis) + "
            + " + ".join(
                f"{s} {self.seconds[s] / 3600:.1f} h ({self.runs.get(s, '?')} runs)"
                for s in sorted(self.seconds)
            )
            + f" = {wall:.1f} h, the studies measured one after another (less where they"
            " measure at once); every VM lives until the teardown at the end",
            f"cost ESTIMATE: {p.region} pay-as-you-go Linux prices of {p.as_of}"
            f" (workflows/azure-prices.yaml; {self.studies[0].location} may differ), compute"
            " only: no disks, public IPs or traffic; reruns and retries not included",
        ]
        by_size: dict[str, int] = {}
        for _, vm in self.vms():
            by_size[vm.size] = by_size.get(vm.size, 0) + 1
        total_h = total = 0.0
        for size, n in sorted(by_size.items()):
            price = p.sizes[size][2]
            hours = n * wall
            total_h += hours
            total += hours * price
            lines.append(
                f"  {size}: {n} VMs x {wall:.1f} h = {hours:,.1f} VM-hours x ${price:.3f}"
                f" = ${hours * price:,.2f}"
            )
        lines.append(f"  total: {total_h:,.1f} VM-hours, about ${total:,.2f} (an estimate)")
        return lines

    def lines(self, quota: list[str] | None, quota_note: str = "") -> list[str]:
        vms = self.vms()
        locations = sorted({s.location for s in self.studies})
        out = [f"plan: {len(vms)} VMs in {', '.join(locations)}"]
        for s in self.studies:
            own = [vm for t, vm in vms if t is s]
            groups: dict[tuple[str, str], int] = {}
            for vm in own:
                groups[(vm.role, vm.size)] = groups.get((vm.role, vm.size), 0) + 1
            what = ", ".join(
                f"{n} {role} x {size} ({self.prices.sizes[size][0]} vCPU)"
                for (role, size), n in groups.items()
            )
            vcpus = sum(self.prices.sizes[vm.size][0] for vm in own)
            out.append(
                f"  study {s.study}: group {s.resource_group} ({s.location}): {what}: {vcpus} vCPUs"
            )
        out.append("quota (az vm list-usage):" + (f" {quota_note}" if quota_note else ""))
        out += quota or []
        out += self.cost_lines()
        return out


def read_usages(plan_: Plan, az: AzureCli) -> dict[str, Usages]:
    return {
        location: usage_table(az(["vm", "list-usage", "--location", location]))
        for location in sorted({s.location for s in plan_.studies})
    }


def setting_flag(value: object, name: str) -> bool:
    """A yes/no setting as a profile gives it (true) or `--config` does (the string "true":
    Snakemake reads --config values as text)."""
    if isinstance(value, bool):
        return value
    words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
    if str(value).strip().lower() not in words:
        raise ProvisionError(f"provision: {name}: {value!r} is neither true nor false")
    return words[str(value).strip().lower()]


def confirmed(flag: bool) -> bool:
    return flag or os.environ.get(CONFIRM_ENV, "") == "1"


HOW_TO_CONFIRM = (
    "nothing was created. To create these VMs, confirm: `provision: {confirm: true}` in the"
    " profile's study.yaml (or snakemake --profile azure --config 'provision={\"confirm\":"
    f" true}}'), {CONFIRM_ENV}=1 in the environment, or `mwlab provision --confirm`"
)


def profile_config(profile: str) -> tuple[Path, dict[str, Any]]:
    """A profile's study.yaml: by name (workflows/profiles/NAME), folder or file."""
    path = Path(profile)
    if not path.exists():
        path = PROFILES / profile
    if path.is_dir():
        path = path / "study.yaml"
    if not path.is_file():
        raise ProvisionError(f"no profile {profile!r} (no {path})")
    return path, dict(_yaml(path) or {})


# ---- Teardown: the groups provisioning created ----


def teardown(
    record_dir: Path,
    keep: bool = False,
    az: AzureCli = real_az,
    say: Callable[[str], None] = print,
) -> list[str]:
    """Deletes every resource group recorded in `record_dir` (all at once, waiting for each),
    unless `keep`; returns the groups deleted. A group that cannot be deleted keeps its
    record, and the message says how to delete it by hand."""
    records = []
    for path in sorted(record_dir.glob("*.json")) if record_dir.is_dir() else []:
        try:
            records.append((path, json.loads(path.read_text())))
        except (OSError, ValueError) as e:
            say(f"teardown: cannot read {path}: {e}")
    if not records:
        return []
    groups = [doc["resource_group"] for _, doc in records]
    if keep:
        say(
            f"teardown: keeping {', '.join(groups)} (provision: {{keep: true}}); they cost"
            " money until deleted: mwlab provision --delete --resource-group GROUP"
        )
        return []

    def delete(item: tuple[Path, dict[str, Any]]) -> str | None:
        path, doc = item
        group = doc["resource_group"]
        say(
            f"teardown: deleting resource group {group} (study {doc.get('study')},"
            f" {len(doc.get('vms') or [])} VMs: {', '.join(doc.get('vms') or [])})"
        )
        try:
            az(delete_call(group))
        except ProvisionError as e:
            if "ResourceGroupNotFound" not in str(e) and "could not be found" not in str(e):
                say(
                    f"teardown: FAILED to delete {group}: {e}. It costs money until deleted:"
                    f" mwlab provision --delete --resource-group {group}"
                )
                return None
        path.unlink(missing_ok=True)
        # The inventory names machines that are gone; the pinned copy preflight wrote stays
        # with the runs measured on them.
        if doc.get("inventory"):
            Path(doc["inventory"]).unlink(missing_ok=True)
        say(f"teardown: deleted {group}")
        return group

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(records)) as pool:
        deleted = [g for g in pool.map(delete, records) if g]
    return deleted
