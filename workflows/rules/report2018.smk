# The 2018 study's sections: baselines, writes, multi-gets, 2^k r designs, queueing models.
# Each section's script writes its figures and tables under {RESULTS}/paper/r2018/ and a
# fragment of number macros; numbers2018.tex joins the fragments.

R2018 = f"{RESULTS}/paper/r2018"
REFERENCE_2018 = "workflows/reference2018.yaml"


def data_2018(family, table="points"):
    return family_table(family, table)


rule r2018_baselines:
    input:
        direct=data_2018("baseline_direct"),
        middleware=data_2018("baseline_middleware"),
        queue=data_2018("baseline_middleware", "queue"),
        windows=data_2018("baseline_middleware", "windows"),
        validation=f"{RESULTS}/data/validation.parquet",
        reference=REFERENCE_2018,
        code=ANALYSIS_CODE,
    output:
        fig_direct=f"{R2018}/base-direct.pdf",
        fig_mw1=f"{R2018}/base-mw-one.pdf",
        fig_mw2=f"{R2018}/base-mw-two.pdf",
        fig_law=f"{R2018}/base-law.pdf",
        tab_direct=f"{R2018}/base-direct-max.tex",
        tab_mw=f"{R2018}/base-mw-max.tex",
        tab_seeds_mw=f"{R2018}/seeds-mw-max.tex",
        tab_seeds_law=f"{R2018}/seeds-law-base.tex",
        tab_linkcap=f"{R2018}/base-linkcap.tex",
        fig_mw_stats=f"{R2018}/base-mw-stats.pdf",
        fig_law_mod=f"{R2018}/base-law-modified.pdf",
        numbers=f"{R2018}/numbers-baselines.tex",
    log:
        f"{RESULTS}/logs/r2018/baselines.log",
    script:
        "../scripts/r2018_baselines.py"


rule r2018_batching:
    input:
        points=data_2018("batching_2018"),
        validation=f"{RESULTS}/data/validation.parquet",
        code=ANALYSIS_CODE,
    output:
        fig=f"{R2018}/batching.pdf",
        table=f"{R2018}/batching.tex",
        numbers=f"{R2018}/numbers-batching.tex",
    log:
        f"{RESULTS}/logs/r2018/batching.log",
    script:
        "../scripts/r2018_batching.py"


rule r2018_writes:
    input:
        points=data_2018("write_throughput"),
        queue=data_2018("write_throughput", "queue"),
        windows=data_2018("write_throughput", "windows"),
        validation=f"{RESULTS}/data/validation.parquet",
        reference=REFERENCE_2018,
        code=ANALYSIS_CODE,
    output:
        fig=f"{R2018}/writes.pdf",
        table=f"{R2018}/writes-max.tex",
        tab_seeds=f"{R2018}/seeds-writes.tex",
        tab_seeds_law=f"{R2018}/seeds-law-full.tex",
        numbers=f"{R2018}/numbers-writes.tex",
    log:
        f"{RESULTS}/logs/r2018/writes.log",
    script:
        "../scripts/r2018_writes.py"


rule r2018_multiget:
    input:
        points=data_2018("multiget"),
        histograms=data_2018("multiget", "histograms"),
        windows=data_2018("multiget", "windows"),
        manifests=data_2018("multiget", "manifests"),
        runs=data_2018("multiget", "runs"),
        validation=f"{RESULTS}/data/validation.parquet",
        reference=REFERENCE_2018,
        code=ANALYSIS_CODE,
    output:
        fig_percentiles=f"{R2018}/mget-percentiles.pdf",
        fig_hist=f"{R2018}/mget-hist.pdf",
        fig_split=f"{R2018}/mget-split.pdf",
        table=f"{R2018}/mget.tex",
        numbers=f"{R2018}/numbers-multiget.tex",
    log:
        f"{RESULTS}/logs/r2018/multiget.log",
    script:
        "../scripts/r2018_multiget.py"


rule r2018_factorial:
    input:
        runs=data_2018("factorial_2018", "runs"),
        reference=REFERENCE_2018,
        code=ANALYSIS_CODE,
    output:
        table_read=f"{R2018}/fact-read.tex",
        table_write=f"{R2018}/fact-write.tex",
        fig_read=f"{R2018}/fact-read.pdf",
        fig_write=f"{R2018}/fact-write.pdf",
        numbers=f"{R2018}/numbers-factorial.tex",
    log:
        f"{RESULTS}/logs/r2018/factorial.log",
    script:
        "../scripts/r2018_factorial.py"


rule r2018_models:
    input:
        write_points=data_2018("write_throughput"),
        write_windows=data_2018("write_throughput", "windows"),
        write_queue=data_2018("write_throughput", "queue"),
        base_points=data_2018("baseline_middleware"),
        base_windows=data_2018("baseline_middleware", "windows"),
        direct_points=data_2018("baseline_direct"),
        validation=f"{RESULTS}/data/validation.parquet",
        reference=REFERENCE_2018,
        code=ANALYSIS_CODE,
    output:
        table_mm1=f"{R2018}/models-mm1.tex",
        table_mmm=f"{R2018}/models-mmm.tex",
        fig_mm=f"{R2018}/models-mm.pdf",
        table_mva=f"{R2018}/models-mva.tex",
        table_util=f"{R2018}/models-util.tex",
        table_comp_one=f"{R2018}/models-comp-one.tex",
        table_comp_two=f"{R2018}/models-comp-two.tex",
        table_seeds=f"{R2018}/seeds-mva.tex",
        numbers=f"{R2018}/numbers-models.tex",
        mva_data=f"{RESULTS}/data/models_2018/mva.parquet",
    log:
        f"{RESULTS}/logs/r2018/models.log",
    script:
        "../scripts/r2018_models.py"


R2018_SECTIONS = [
    rules.r2018_baselines,
    rules.r2018_batching,
    rules.r2018_writes,
    rules.r2018_multiget,
    rules.r2018_factorial,
    rules.r2018_models,
]


rule r2018_numbers:
    input:
        [r.output.numbers for r in R2018_SECTIONS],
    output:
        f"{RESULTS}/paper/numbers2018.tex",
    log:
        f"{RESULTS}/logs/r2018/numbers.log",
    shell:
        "cat {input} > {output} 2> {log}"


REPORT_2018 = [rules.r2018_numbers.output[0]] + [
    f for r in R2018_SECTIONS for f in r.output if f != r.output.numbers
]
