# From raw runs to tidy data, validation, analyses and the report's generated inputs.
# Every analysis rule lists the analysis code as input: changing it reruns the analysis,
# never a measurement.


rule family_data:
    input:
        runs=lambda w: runs_of(w.family),
        code=ANALYSIS_CODE,
    output:
        windows=f"{RESULTS}/data/{{family}}/windows.parquet",
        runs=f"{RESULTS}/data/{{family}}/runs.parquet",
        points=f"{RESULTS}/data/{{family}}/points.parquet",
        manifests=f"{RESULTS}/data/{{family}}/manifests.parquet",
        histograms=f"{RESULTS}/data/{{family}}/histograms.parquet",
        queue=f"{RESULTS}/data/{{family}}/queue.parquet",
        pools=f"{RESULTS}/data/{{family}}/pools.parquet",
        pool_requests=f"{RESULTS}/data/{{family}}/pool_requests.parquet",
        middlewares=f"{RESULTS}/data/{{family}}/middlewares.parquet",
    params:
        results=RESULTS,
        settings=lambda w: settings_of(w.family),
        levels=lambda w: {r.path: r.levels for r in PLAN if r.family == w.family},
    log:
        f"{RESULTS}/logs/data/{{family}}.log",
    script:
        "../scripts/family_data.py"


rule validation:
    input:
        runs=expand(f"{RESULTS}/data/{{family}}/runs.parquet", family=ACTIVE_FAMILIES),
        manifests=expand(f"{RESULTS}/data/{{family}}/manifests.parquet", family=ACTIVE_FAMILIES),
        windows=expand(f"{RESULTS}/data/{{family}}/windows.parquet", family=ACTIVE_FAMILIES),
        code=ANALYSIS_CODE,
    output:
        table=f"{RESULTS}/data/validation.parquet",
        tex=f"{RESULTS}/paper/validation.tex",
        summary=f"{RESULTS}/paper/validation-summary.tex",
        lengths=f"{RESULTS}/paper/validation-lengths.tex",
        numbers=f"{RESULTS}/paper/validation-numbers.tex",
    params:
        failures=f"{RESULTS}/failures",
    log:
        f"{RESULTS}/logs/validation.log",
    script:
        "../scripts/validation.py"
