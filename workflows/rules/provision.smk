# ssh profiles: the VMs are provisioned by code, one inventory per study. Runs of a study
# depend on its inventory, so provisioning happens once, before the first run.

PROVISION = config.get("provision", {})


rule provision:
    output:
        inventory=f"{RESULTS}/inventory-{{study}}.yaml",
    params:
        dry_run="--dry-run" if PROVISION.get("dry_run", True) else "",
        group=PROVISION.get("resource_group", "mwlab-study"),
        location=PROVISION.get("location", "westeurope"),
    log:
        f"{RESULTS}/logs/provision-{{study}}.log",
    shell:
        "mwlab provision --study {wildcards.study} --inventory {output.inventory} "
        "--resource-group {params.group} --location {params.location} {params.dry_run} "
        "> {log} 2>&1"
