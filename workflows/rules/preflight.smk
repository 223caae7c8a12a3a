# ssh profiles: each study's machines are checked once, before its first run
# (testbed/preflight.py): host keys pinned, tools, cores, memory, kernel, clock and links. The
# runs use the pinned inventory it writes (mwlab.catalogue.pinned_inventory), and each study's
# runs hold the slot of its machines, so studies on disjoint machines measure at the same time.
from mwlab.catalogue import pinned_inventory
from testbed.drivers import resolve_driver
from testbed.inventory import load_inventory
from testbed.point import Point


def _study_specs(study):
    return [run.spec for run in PLAN if str(FAMILIES[run.family].study) == str(study)]


def _system(study):
    """What a study's points run: memcached or SimpleMQ (one per study)."""
    systems = {s.get("system", "memcached") for s in _study_specs(study)}
    if len(systems) != 1:
        raise WorkflowError(f"study {study} runs {sorted(systems)}: one system per study")
    return systems.pop()


def _machines(path):
    """The machines of an inventory that exists already (a user's; a provisioned one is made
    later, and each study's VMs are its own)."""
    try:
        inv = load_inventory(Path(path))
    except (OSError, ValueError):
        return None
    return {m.ssh or f"{inv.user}@{m.address}" for m in inv.machines}


def host_slots(inventories):
    """One Snakemake slot per set of studies whose inventories share a machine: study ->
    slot name (`machines_2016_2018`)."""
    groups = [({study}, _machines(path) or {f"study {study}"}) for study, path in inventories.items()]
    merged = []
    for studies, machines in groups:
        for other in [g for g in merged if g[1] & machines]:
            merged.remove(other)
            studies, machines = studies | other[0], machines | other[1]
        merged.append((studies, machines))
    return {
        study: "machines_" + "_".join(sorted(studies))
        for studies, _ in merged
        for study in studies
    }


SSH_STUDIES = sorted(
    {str(FAMILIES[run.family].study) for run in PLAN if run.spec.get("hosts") == "ssh"}
)
# Each study's record of its machines, archived with the dataset (analysis/dataset.py).
PREFLIGHT_RECORDS = [f"{RESULTS}/hosts/{s}/preflight.json" for s in SSH_STUDIES]
HOST_SLOTS = host_slots({s: config["inventories"][s] for s in SSH_STUDIES})
for _slot in sorted(set(HOST_SLOTS.values())):
    workflow.register_resource(_slot, 1)


def slot_resources(study_of):
    """A measurement rule's slots: `testbed` for runs on this machine, else its study's
    machines' (`study_of`: wildcards -> study, or None)."""
    out = {"testbed": lambda w: 0 if study_of(w) in HOST_SLOTS else 1}
    for name in sorted(set(HOST_SLOTS.values())):
        out[name] = lambda w, name=name: int(HOST_SLOTS.get(study_of(w)) == name)
    return out


def preflight_inputs(study):
    """What a study's runs wait for: its pinned inventory (nothing off ssh)."""
    return [pinned_inventory(PROFILE, study)] if str(study) in HOST_SLOTS else []


rule preflight:
    wildcard_constraints:
        study="|".join(SSH_STUDIES) or "none",
    input:
        inventory=lambda w: config["inventories"][w.study],
    output:
        inventory=f"{RESULTS}/hosts/{{study}}/inventory.yaml",
        record=f"{RESULTS}/hosts/{{study}}/preflight.json",
    params:
        system=lambda w: _system(w.study),
        # The load generators of the study's points (SimpleMQ's clients are its own).
        drivers=lambda w: " ".join(
            f"--driver {d}"
            for d in sorted(
                {resolve_driver(s.get("driver", Point().driver)) for s in _study_specs(w.study)}
            )
            if _system(w.study) == "memcached"
        ),
        # The machines of each role its largest point uses.
        needs=lambda w: " ".join(
            f"--need {role}={max(int(s.get(key, low)) for s in _study_specs(w.study))}"
            for role, key, low in (
                ("server", "servers", 1),
                ("middleware", "middlewares", 0),
                ("client", "client_machines", 1),
            )
        ),
    log:
        f"{RESULTS}/logs/preflight-{{study}}.log",
    shell:
        "python3 -m mwlab preflight --inventory {input.inventory} --system {params.system}"
        " {params.drivers} {params.needs} --out {RESULTS}/hosts/{wildcards.study} > {log} 2>&1"
