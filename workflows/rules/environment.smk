# The environment the study ran in, recorded for the reproduction appendix.


rule environment:
    output:
        json=f"{RESULTS}/environment/tools.json",
    log:
        f"{RESULTS}/logs/environment.log",
    shell:
        "python3 -m mwlab tools --json > {output.json} 2> {log}"


rule environment_table:
    input:
        json=rules.environment.output.json,
    output:
        tex=f"{RESULTS}/paper/environment.tex",
    log:
        f"{RESULTS}/logs/environment_table.log",
    shell:
        "python3 -m analysis.environment_table {input.json} {output.tex} 2> {log}"
