# The environment the study ran in, recorded for the reproduction appendix.


if not DATASET:

    rule environment:
        output:
            json=TOOLS_JSON,
        log:
            f"{RESULTS}/logs/environment.log",
        shell:
            "python3 -m mwlab tools --json > {output.json} 2> {log}"


# The tools of the machine that builds the report, which the table sets beside the measurement's
# where they differ (a dataset measured elsewhere, or with other versions).
rule built_with:
    output:
        json=f"{RESULTS}/paper/built-with.json",
    log:
        f"{RESULTS}/logs/built_with.log",
    shell:
        "python3 -m mwlab tools --json --for paper > {output.json} 2> {log}"


rule environment_table:
    input:
        json=TOOLS_JSON,
        built_with=rules.built_with.output.json,
    output:
        tex=f"{RESULTS}/paper/environment.tex",
    log:
        f"{RESULTS}/logs/environment_table.log",
    shell:
        "python3 -m analysis.environment_table {input.json} {output.tex} {input.built_with}"
        " 2> {log}"


rule setup_tables:
    input:
        catalogue=CATALOGUE_FILE,
        code=ANALYSIS_CODE,
    output:
        tex=f"{RESULTS}/paper/setup.tex",
        numbers=f"{RESULTS}/paper/catalogue-numbers.tex",
    log:
        f"{RESULTS}/logs/setup_tables.log",
    script:
        "../scripts/setup_tables.py"


rule reproduction_tables:
    input:
        runs=RUN_TIMES,
        code=ANALYSIS_CODE,
        # The profile whose time the measured runs predict: the full grids.
        predicted="workflows/profiles/default/study.yaml",
        catalogue=CATALOGUE_FILE,
    output:
        table=f"{RESULTS}/paper/reproduction.tex",
        numbers=f"{RESULTS}/paper/reproduction-numbers.tex",
    params:
        results=RESULTS,
    log:
        f"{RESULTS}/logs/reproduction_tables.log",
    script:
        "../scripts/reproduction.py"
