# From raw runs to tidy data, validation, analyses and the report's generated inputs.
# Every analysis rule lists the analysis code as input: changing it reruns the analysis,
# never a measurement.


if not DATASET:

    rule family_data:
        input:
            runs=lambda w: runs_of(w.family),
            code=ANALYSIS_CODE,
        output:
            **{
                table: family_table("{family}", table)
                for table in datasets.FAMILY_TABLES
            },
        params:
            results=RESULTS,
            settings=lambda w: settings_of(w.family),
            levels=lambda w: {r.path: r.levels for r in PLAN if r.family == w.family},
        log:
            f"{RESULTS}/logs/data/{{family}}.log",
        script:
            "../scripts/family_data.py"

    # The runs' manifests as the two per-run tables the report reads (the reproduction
    # appendix's times, the testbed section's hosts), so that a dataset carries no run.json.
    rule run_tables:
        input:
            runs=[f"{RESULTS}/runs/{run.path}/run.json" for run in PLAN],
            code=ANALYSIS_CODE,
        output:
            run_times=RUN_TIMES,
            testbed_runs=TESTBED_RUNS,
        params:
            results=RESULTS,
        log:
            f"{RESULTS}/logs/run_tables.log",
        script:
            "../scripts/run_tables.py"


rule validation:
    input:
        runs=family_tables("runs"),
        manifests=family_tables("manifests"),
        windows=family_tables("windows"),
        run_times=RUN_TIMES,
        code=ANALYSIS_CODE,
    output:
        table=f"{RESULTS}/data/validation.parquet",
        tex=f"{RESULTS}/paper/validation.tex",
        summary=f"{RESULTS}/paper/validation-summary.tex",
        lengths=f"{RESULTS}/paper/validation-lengths.tex",
        numbers=f"{RESULTS}/paper/validation-numbers.tex",
    params:
        failures=f"{RESULTS}/failures",
        # Each family's study: the run lengths the text cites are per study.
        studies={f: str(FAMILIES[f].study) for f in ACTIVE_FAMILIES},
    log:
        f"{RESULTS}/logs/validation.log",
    script:
        "../scripts/validation.py"
