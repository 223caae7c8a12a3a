# Compiles the report and its supplement (the bulk tables) from the paper/ sources and the
# profile's generated inputs. Only the prose and the generated inputs are inputs: editing prose
# reruns only these rules.
# latexmk -g: Snakemake decided a rebuild is due; latexmk alone would miss a generated file
# that appeared since (\IfFileExists of the agreement appendix).

PAPER_GENERATED = FINDINGS_GENERATED + [
    f"{RESULTS}/paper/provenance.tex",
    rules.environment_table.output.tex,
    rules.setup_tables.output.tex,
    rules.setup_tables.output.numbers,
    rules.reproduction_tables.output.table,
    rules.reproduction_tables.output.numbers,
    rules.validation.output.tex,
    rules.validation.output.summary,
    rules.validation.output.lengths,
    rules.validation.output.numbers,
    rules.scale_model_tables.output.calibration,
    rules.scale_model_tables.output.validation,
    rules.scale_model_tables.output.check,
    rules.scale_model_tables.output.fits,
    rules.scale_model_tables.output.variation,
    rules.scale_model_tables.output.parameters,
    rules.scale_model_tables.output.numbers,
]


rule bulk_tables:
    input:
        validation=rules.validation.output.table,
        runs=RUN_TIMES,
        code=ANALYSIS_CODE,
    output:
        validation=f"{RESULTS}/tables/validation.csv",
        families=f"{RESULTS}/tables/families.csv",
    log:
        f"{RESULTS}/logs/bulk_tables.log",
    script:
        "../scripts/bulk_tables.py"


rule supplement:
    input:
        csv=rules.bulk_tables.output,
        tex="paper/supplement.tex",
        preamble="paper/preamble.tex",
        sections=sorted(glob.glob("paper/sections/*.tex")),
        generated=PAPER_GENERATED + REPORT_2018 + REPORT_2016 + REPORT_2015,
    output:
        pdf=f"{RESULTS}/supplement.pdf",
        aux=f"{RESULTS}/supplement-build/supplement.aux",
    params:
        generated=f"{RESULTS}/paper",
        build=f"{RESULTS}/supplement-build",
    log:
        f"{RESULTS}/logs/supplement.log",
    shell:
        "mkdir -p {params.build} && "
        "TEXINPUTS=paper:{params.generated}: latexmk -g -pdf -interaction=nonstopmode "
        "-halt-on-error -output-directory={params.build} paper/supplement.tex > {log} 2>&1 "
        "|| (tail -40 {log} >&2; exit 1); "
        "python3 workflows/scripts/check_latex_log.py {params.build}/supplement.log && "
        "cp {params.build}/supplement.pdf {output.pdf}"


# The report cites the supplement's labels through xr (\externaldocument{supplement}), which
# reads supplement.aux from TEXINPUTS: the supplement is built first and never reads the report's.
rule paper:
    input:
        tex="paper/report.tex",
        preamble="paper/preamble.tex",
        sections=sorted(glob.glob("paper/sections/*.tex")),
        generated=PAPER_GENERATED + REPORT_2018 + REPORT_2016 + REPORT_2015 + AGREEMENT,
        supplement=rules.supplement.output.pdf,
        supplement_aux=rules.supplement.output.aux,
    output:
        pdf=f"{RESULTS}/report.pdf",
    params:
        generated=f"{RESULTS}/paper",
        build=f"{RESULTS}/paper-build",
        supplement_build=f"{RESULTS}/supplement-build",
    log:
        f"{RESULTS}/logs/paper.log",
    shell:
        "mkdir -p {params.build} && "
        "TEXINPUTS=paper:{params.generated}:{params.supplement_build}: latexmk -g -pdf "
        "-interaction=nonstopmode -halt-on-error -output-directory={params.build} "
        "paper/report.tex > {log} 2>&1 "
        "|| (tail -40 {log} >&2; exit 1); "
        "python3 workflows/scripts/check_latex_log.py {params.build}/report.log && "
        "cp {params.build}/report.pdf {output.pdf}"
