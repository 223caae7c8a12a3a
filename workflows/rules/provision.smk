# ssh profiles with a `provision:` block: the VMs are provisioned by code (testbed/provision.py),
# one resource group and inventory per study. The plan (every study's VMs by size and region,
# the quota, the cost estimate) is shown first and must be confirmed (`provision: {confirm:
# true}` or MWLAB_AZURE_CONFIRM=1): without it the pipeline stops there, having created
# nothing. Runs of a study depend on its inventory, so provisioning happens once, before its
# first run; the Snakefile's onsuccess/onerror handlers delete what was created
# (provision_teardown), unless `provision: {keep: true}`.
import shlex
from pathlib import Path

from testbed import provision as provisioning

PROVISION = config.get("provision") or {}
# A profile that creates VMs (a dry run creates none, and so deletes none).
PROVISIONS = bool(PROVISION) and not provisioning.setting_flag(
    PROVISION.get("dry_run", True), "dry_run"
)
PROVISION_RECORDS = f"{RESULTS}/provisioned"
_PROVISION_STUDIES = sorted(
    {str(FAMILIES[run.family].study) for run in PLAN if run.spec.get("hosts") == "ssh"}
)


def _provision_args():
    """The settings of every `mwlab provision` call. Passed as a global of the shell command,
    not as params: a changed estimate or confirmation must not make Snakemake provision again
    (and so measure again) what was provisioned."""
    args = [
        f"--resource-group {PROVISION.get('resource_group', 'mwlab-study')}",
        f"--location {PROVISION.get('location', 'westeurope')}",
    ]
    for key, option in (
        ("ssh_public_key", "--ssh-public-key"),
        ("admin_user", "--admin-user"),
        ("remote_dir", "--remote-dir"),
        ("ready_timeout_s", "--ready-timeout"),
        ("ready_poll_s", "--ready-poll"),
    ):
        if PROVISION.get(key) is not None:
            args.append(f"{option} {shlex.quote(str(PROVISION[key]))}")
    for study, counts in sorted((PROVISION.get("machines") or {}).items()):
        args += [f"--machines {study}:{role}={n}" for role, n in sorted(counts.items())]
    # Every study's planned time: its VMs live until the teardown at the end.
    for study in _PROVISION_STUDIES:
        specs = [r.spec for r in PLAN if str(FAMILIES[r.family].study) == study]
        args.append(f"--hours {study}={provisioning.run_seconds(specs) / 3600:.4f}")
        args.append(f"--runs {study}={len(specs)}")
    if not PROVISIONS:
        args.append("--dry-run")
    if provisioning.setting_flag(PROVISION.get("confirm", False), "confirm"):
        args.append("--confirm")
    return " ".join(args)


PROVISION_ARGS = _provision_args()
PROVISION_PLAN_STUDIES = " ".join(f"--study {s}" for s in _PROVISION_STUDIES)


rule provision_plan:
    output:
        plan=f"{RESULTS}/provision/plan.txt",
    log:
        f"{RESULTS}/logs/provision-plan.log",
    shell:
        "python3 -m mwlab provision --plan {PROVISION_PLAN_STUDIES} {PROVISION_ARGS}"
        " --plan-out {output.plan} 2>&1 | tee {log}"


rule provision:
    input:
        plan=rules.provision_plan.output.plan,
    output:
        inventory=f"{RESULTS}/inventory-{{study}}.yaml",
    params:
        # What the VMs are: another group or region is another set of machines.
        group=PROVISION.get("resource_group", "mwlab-study"),
        location=PROVISION.get("location", "westeurope"),
        machines=lambda w: (PROVISION.get("machines") or {}).get(w.study),
    log:
        f"{RESULTS}/logs/provision-{{study}}.log",
    shell:
        "python3 -m mwlab provision --study {wildcards.study} --inventory {output.inventory}"
        " --record-dir {PROVISION_RECORDS} {PROVISION_ARGS} 2>&1 | tee {log}"


def provision_teardown(outcome):
    """The Snakefile's onsuccess/onerror: deletes every resource group this profile's
    provisioning created (its records under results/<profile>/provisioned/), whatever the
    measurement's outcome, unless `provision: {keep: true}`."""
    if not PROVISIONS:
        return
    try:
        deleted = provisioning.teardown(
            Path(PROVISION_RECORDS), keep=provisioning.setting_flag(PROVISION.get("keep", False), "keep"), say=print
        )
    except Exception as e:  # a handler must not hide the pipeline's own outcome
        print(f"teardown: failed ({e}); delete the groups under {PROVISION_RECORDS} by hand:")
        print("  mwlab provision --delete --resource-group GROUP")
        return
    if deleted:
        print(f"teardown: after {outcome}, deleted {', '.join(deleted)}")
        if outcome == "error":
            print(
                "teardown: the VMs are gone. Their pinned inventories stay under"
                f" {RESULTS}/hosts/ with the runs measured on them: measure again into another"
                " results folder, or remove those folders to measure every run again on new VMs"
            )
