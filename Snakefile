# The study's pipeline: runs every experiment family of workflows/catalogue.yaml, analyses
# the runs and compiles the report. Rules live in workflows/rules/*.smk; profiles in
# workflows/profiles/ (`snakemake --profile workflows/profiles/smoke`, or `--profile azure`).
import glob
import os

import yaml
from snakemake.utils import min_version, validate

# 9.17: a job selected alone is charged its resources (measurement jobs run alone:
# tests/pipeline/test_scheduling.py).
min_version("9.17")

if not config:
    # No profile given: the default one.
    with open("workflows/profiles/default/study.yaml") as handle:
        config.update(yaml.safe_load(handle))

validate(config, "workflows/config.schema.yaml")

RESULTS = config["results"]


include: "workflows/rules/scheduler.smk"
include: "workflows/rules/common.smk"
include: "workflows/rules/environment.smk"
include: "workflows/rules/provision.smk"
include: "workflows/rules/preflight.smk"
if not DATASET:

    include: "workflows/rules/runs.smk"


include: "workflows/rules/calibration.smk"
include: "workflows/rules/analysis.smk"
include: "workflows/rules/report2018.smk"
include: "workflows/rules/report2016.smk"
include: "workflows/rules/report2015.smk"
include: "workflows/rules/findings.smk"
include: "workflows/rules/dataset.smk"
include: "workflows/rules/paper.smk"


rule all:
    default_target: True
    input:
        f"{RESULTS}/report.pdf",


# Profiles that provision VMs delete them when the pipeline ends, whether it succeeded or a
# job failed (workflows/rules/provision.smk); a dry run or a profile without VMs deletes none.
onsuccess:
    provision_teardown("success")


onerror:
    provision_teardown("error")
