# The environment the study ran in, recorded for the reproduction appendix.


if not DATASET:

    rule environment:
        output:
            json=TOOLS_JSON,
        log:
            f"{RESULTS}/logs/environment.log",
        shell:
            "python3 -m mwlab tools --json > {output.json} 2> {log}"


rule environment_table:
    input:
        json=TOOLS_JSON,
    output:
        tex=f"{RESULTS}/paper/environment.tex",
    log:
        f"{RESULTS}/logs/environment_table.log",
    shell:
        "python3 -m analysis.environment_table {input.json} {output.tex} 2> {log}"


rule setup_tables:
    input:
        catalogue=config.get("catalogue", "workflows/catalogue.yaml"),
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
        catalogue=config.get("catalogue", "workflows/catalogue.yaml"),
    output:
        table=f"{RESULTS}/paper/reproduction.tex",
        numbers=f"{RESULTS}/paper/reproduction-numbers.tex",
    params:
        results=RESULTS,
    log:
        f"{RESULTS}/logs/reproduction_tables.log",
    script:
        "../scripts/reproduction.py"
