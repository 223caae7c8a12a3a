# Compiles the report from paper/ sources and the generated inputs.


rule paper:
    input:
        tex="paper/report.tex",
        sections=sorted(glob.glob("paper/sections/*.tex")),
        environment=rules.environment_table.output.tex,
        validation=rules.validation.output.tex,
    output:
        pdf="paper/report.pdf",
    params:
        generated=lambda w, input: os.path.dirname(input.environment),
    log:
        f"{RESULTS}/logs/paper.log",
    shell:
        "mkdir -p paper/build && "
        "TEXINPUTS=paper:{params.generated}: latexmk -pdf -interaction=nonstopmode -halt-on-error "
        "-output-directory=paper/build paper/report.tex > {log} 2>&1 "
        "|| (tail -40 {log} >&2; exit 1); "
        "cp paper/build/report.pdf {output.pdf}"
