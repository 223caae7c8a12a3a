# The 2016 study's sections: maximum throughput, replication, writes, their models, and the
# comparison of the two middleware designs. Each script writes its figures and tables, and
# its numbers as JSON; one rule turns all numbers into the macro file numbers2016.tex.

REFERENCE_2016 = "workflows/reference2016.yaml"
PAPER_2016 = f"{RESULTS}/paper/2016"
NUMBERS_2016 = f"{RESULTS}/data/2016"


def data_2016(family, *tables, prefix=""):
    return {f"{prefix}{t}": family_table(family, t) for t in tables}


rule r2016_max_throughput:
    input:
        **data_2016(
            "max_throughput_2016",
            "points",
            "windows",
            "histograms",
            "runs",
            "pools",
            "pool_requests",
        ),
        reference=REFERENCE_2016,
        code=ANALYSIS_CODE,
    output:
        throughput=f"{PAPER_2016}/max-throughput.pdf",
        percentiles=f"{PAPER_2016}/max-percentiles.pdf",
        breakdown=f"{PAPER_2016}/max-breakdown.pdf",
        table=f"{PAPER_2016}/max-config.tex",
        grid=f"{PAPER_2016}/max-grid.tex",
        gamma=f"{PAPER_2016}/max-gamma.pdf",
        sides=f"{PAPER_2016}/max-sides.pdf",
        numbers=f"{NUMBERS_2016}/max_throughput.json",
    log:
        f"{RESULTS}/logs/2016/max_throughput.log",
    script:
        "../scripts/r2016_max_throughput.py"


rule r2016_replication:
    input:
        **data_2016("replication_2016", "points", "runs", "pool_requests"),
        reference=REFERENCE_2016,
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2016}/replication.pdf",
        table=f"{PAPER_2016}/replication.tex",
        times_set=f"{PAPER_2016}/replication-times-set.tex",
        times_get=f"{PAPER_2016}/replication-times-get.tex",
        numbers=f"{NUMBERS_2016}/replication.json",
    log:
        f"{RESULTS}/logs/2016/replication.log",
    script:
        "../scripts/r2016_replication.py"


rule r2016_writes:
    input:
        **data_2016("writes_2016", "points", "runs", "pool_requests"),
        reference=REFERENCE_2016,
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2016}/writes.pdf",
        table=f"{PAPER_2016}/writes.tex",
        times_set=f"{PAPER_2016}/writes-times-set.tex",
        times_get=f"{PAPER_2016}/writes-times-get.tex",
        scalability=f"{PAPER_2016}/writes-scalability.tex",
        numbers=f"{NUMBERS_2016}/writes.json",
    log:
        f"{RESULTS}/logs/2016/writes.log",
    script:
        "../scripts/r2016_writes.py"


rule r2016_queueing:
    input:
        **data_2016(
            "max_throughput_2016",
            "points",
            "windows",
            "histograms",
            "queue",
            "pools",
            "pool_requests",
            "runs",
            prefix="max_",
        ),
        **data_2016(
            "replication_2016",
            "points",
            "windows",
            "queue",
            "pools",
            "pool_requests",
            "runs",
            prefix="repl_",
        ),
        reference=REFERENCE_2016,
        code=ANALYSIS_CODE,
    output:
        open_table=f"{PAPER_2016}/open-models.tex",
        mmm_table=f"{PAPER_2016}/mmm.tex",
        mva_table=f"{PAPER_2016}/mva.tex",
        mva_figure=f"{PAPER_2016}/mva.pdf",
        mva_seed_table=f"{PAPER_2016}/mva-seed.tex",
        numbers=f"{NUMBERS_2016}/queueing.json",
        models=f"{RESULTS}/data/models2016.json",
    log:
        f"{RESULTS}/logs/2016/queueing.log",
    script:
        "../scripts/r2016_queueing.py"


rule r2016_designs:
    input:
        **data_2016("designs_2016", "points", "runs", "pools", "middlewares"),
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2016}/designs.pdf",
        table=f"{PAPER_2016}/designs.tex",
        numbers=f"{NUMBERS_2016}/designs.json",
    log:
        f"{RESULTS}/logs/2016/designs.log",
    script:
        "../scripts/r2016_designs.py"


rule r2016_factorial:
    input:
        **data_2016("factorial_2016", "runs"),
        reference=REFERENCE_2016,
        code=ANALYSIS_CODE,
    output:
        table=f"{PAPER_2016}/factorial.tex",
        seed_table=f"{PAPER_2016}/factorial-seed.tex",
        diagnostics=f"{PAPER_2016}/factorial-diagnostics.pdf",
        numbers=f"{NUMBERS_2016}/factorial.json",
    log:
        f"{RESULTS}/logs/2016/factorial.log",
    script:
        "../scripts/r2016_factorial.py"


rule r2016_interactive:
    input:
        runs=[
            family_table(family, "runs")
            for family in (
                "max_throughput_2016",
                "replication_2016",
                "writes_2016",
                "factorial_2016",
                "designs_2016",
            )
            if family in ACTIVE_FAMILIES
        ],
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2016}/interactive-law.pdf",
        table=f"{PAPER_2016}/interactive-law.tex",
        numbers=f"{NUMBERS_2016}/interactive.json",
    log:
        f"{RESULTS}/logs/2016/interactive.log",
    script:
        "../scripts/r2016_interactive.py"


rule r2016_numbers:
    input:
        numbers=[
            rules.r2016_max_throughput.output.numbers,
            rules.r2016_replication.output.numbers,
            rules.r2016_writes.output.numbers,
            rules.r2016_queueing.output.numbers,
            rules.r2016_designs.output.numbers,
            rules.r2016_factorial.output.numbers,
            rules.r2016_interactive.output.numbers,
        ],
        code=ANALYSIS_CODE,
    output:
        tex=f"{RESULTS}/paper/numbers2016.tex",
    log:
        f"{RESULTS}/logs/2016/numbers.log",
    script:
        "../scripts/r2016_numbers.py"


REPORT_2016 = [
    rules.r2016_numbers.output.tex,
    *rules.r2016_max_throughput.output,
    *rules.r2016_replication.output,
    *rules.r2016_writes.output,
    *rules.r2016_queueing.output,
    *rules.r2016_designs.output,
    *rules.r2016_factorial.output,
    *rules.r2016_interactive.output,
]
