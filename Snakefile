# The study's pipeline. Rules live in workflows/rules/*.smk; profiles in workflows/profiles/.
import glob

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "workflows/profiles/default/study.yaml"


validate(config, "workflows/config.schema.yaml")

RESULTS = config["results"]


include: "workflows/rules/environment.smk"
include: "workflows/rules/paper.smk"


rule all:
    default_target: True
    input:
        "paper/report.pdf",
