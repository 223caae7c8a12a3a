# The 2015 study's section (SimpleMQ): the database baseline, Table 2 and its drop, the
# scaling families with their models, the 2^4 design, the pop strategies, stability and the
# response-time distributions. A family the profile does not measure is left out of a rule's
# inputs; its script then says "not measured". Each script writes its figures and tables and
# its numbers as JSON; one rule turns all numbers into the macro file numbers2015.tex.

REFERENCE_2015 = "workflows/reference2015.yaml"
PAPER_2015 = f"{RESULTS}/paper/2015"
NUMBERS_2015 = f"{RESULTS}/data/2015"


def data_2015(family, *tables):
    """The family's tables as inputs named `<family>_<table>`, none when it is not measured."""
    if family not in ACTIVE_FAMILIES:
        return {}
    return {f"{family}_{t}": family_table(family, t) for t in tables}


rule r2015_baseline:
    input:
        **data_2015("mq_db_baseline", "points"),
        reference=REFERENCE_2015,
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2015}/baseline.pdf",
        numbers=f"{NUMBERS_2015}/baseline.json",
    log:
        f"{RESULTS}/logs/2015/baseline.log",
    script:
        "../scripts/r2015_baseline.py"


rule r2015_throughput:
    input:
        **data_2015("mq_db_baseline", "points"),
        **data_2015("mq_throughput", "points", "runs", "db_counters", "windows"),
        reference=REFERENCE_2015,
        code=ANALYSIS_CODE,
    output:
        table=f"{PAPER_2015}/table2.tex",
        drop_table=f"{PAPER_2015}/drop.tex",
        why_table=f"{PAPER_2015}/why.tex",
        numbers=f"{NUMBERS_2015}/throughput.json",
    log:
        f"{RESULTS}/logs/2015/throughput.log",
    script:
        "../scripts/r2015_throughput.py"


rule r2015_scaling:
    input:
        **data_2015("mq_db_baseline", "points"),
        **data_2015("mq_scale_clients", "points"),
        **data_2015("mq_scale_workers", "points"),
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2015}/scaling.pdf",
        numbers=f"{NUMBERS_2015}/scaling.json",
    log:
        f"{RESULTS}/logs/2015/scaling.log",
    script:
        "../scripts/r2015_scaling.py"


rule r2015_factorial:
    input:
        **data_2015("mq_factorial", "runs", "points", "histograms"),
        code=ANALYSIS_CODE,
    output:
        table=f"{PAPER_2015}/factorial.tex",
        distributions=f"{PAPER_2015}/distributions.tex",
        numbers=f"{NUMBERS_2015}/factorial.json",
    log:
        f"{RESULTS}/logs/2015/factorial.log",
    script:
        "../scripts/r2015_factorial.py"


rule r2015_pop:
    input:
        **data_2015("mq_pop_strategy", "points", "runs", "db_counters", "windows"),
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2015}/pop.pdf",
        table=f"{PAPER_2015}/pop.tex",
        numbers=f"{NUMBERS_2015}/pop.json",
    log:
        f"{RESULTS}/logs/2015/pop.log",
    script:
        "../scripts/r2015_pop.py"


rule r2015_stability:
    input:
        **data_2015("mq_stability", "points", "windows", "db_counters"),
        code=ANALYSIS_CODE,
    output:
        figure=f"{PAPER_2015}/stability.pdf",
        numbers=f"{NUMBERS_2015}/stability.json",
    log:
        f"{RESULTS}/logs/2015/stability.log",
    script:
        "../scripts/r2015_stability.py"


rule r2015_numbers:
    input:
        numbers=[
            rules.r2015_baseline.output.numbers,
            rules.r2015_throughput.output.numbers,
            rules.r2015_scaling.output.numbers,
            rules.r2015_factorial.output.numbers,
            rules.r2015_pop.output.numbers,
            rules.r2015_stability.output.numbers,
        ],
        code=ANALYSIS_CODE,
    output:
        tex=f"{RESULTS}/paper/numbers2015.tex",
    log:
        f"{RESULTS}/logs/2015/numbers.log",
    script:
        "../scripts/r2015_numbers.py"


REPORT_2015 = [
    rules.r2015_numbers.output.tex,
    *rules.r2015_baseline.output,
    *rules.r2015_throughput.output,
    *rules.r2015_scaling.output,
    *rules.r2015_factorial.output,
    *rules.r2015_pop.output,
    *rules.r2015_stability.output,
]
