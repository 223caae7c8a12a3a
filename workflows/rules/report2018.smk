# The 2018 study's sections: baselines, writes, multi-gets, 2^k r designs, queueing models.
# Each section's script writes its figures and tables under {RESULTS}/paper/r2018/ and a
# fragment of number macros; numbers2018.tex joins the fragments.

R2018 = f"{RESULTS}/paper/r2018"
REFERENCE_2018 = "workflows/reference2018.yaml"


def data_2018(family, table="points"):
    return f"{RESULTS}/data/{family}/{table}.parquet"


rule r2018_baselines:
    input:
        direct=data_2018("baseline_direct"),
        middleware=data_2018("baseline_middleware"),
        reference=REFERENCE_2018,
        code=ANALYSIS_CODE,
    output:
        fig_direct=f"{R2018}/base-direct.pdf",
        fig_mw1=f"{R2018}/base-mw-one.pdf",
        fig_mw2=f"{R2018}/base-mw-two.pdf",
        fig_law=f"{R2018}/base-law.pdf",
        tab_direct=f"{R2018}/base-direct-max.tex",
        tab_mw=f"{R2018}/base-mw-max.tex",
        numbers=f"{R2018}/numbers-baselines.tex",
    log:
        f"{RESULTS}/logs/r2018/baselines.log",
    script:
        "../scripts/r2018_baselines.py"


rule r2018_writes:
    input:
        points=data_2018("write_throughput"),
        queue=data_2018("write_throughput", "queue"),
        windows=data_2018("write_throughput", "windows"),
        reference=REFERENCE_2018,
        code=ANALYSIS_CODE,
    output:
        fig=f"{R2018}/writes.pdf",
        table=f"{R2018}/writes-max.tex",
        numbers=f"{R2018}/numbers-writes.tex",
    log:
        f"{RESULTS}/logs/r2018/writes.log",
    script:
        "../scripts/r2018_writes.py"


R2018_SECTIONS = [rules.r2018_baselines, rules.r2018_writes]


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
