# One job per run (family x point x repetition). Measurement jobs hold the single `testbed`
# resource so they never overlap; a finished run is never repeated.


wildcard_constraints:
    family="[a-z0-9_]+",
    rep="[0-9]+",


rule run_point:
    input:
        # ssh profiles: the inventory of the run's study, made by rule provision.
        inventory=lambda w: [
            path
            for study, path in config.get("inventories", {}).items()
            if w.family in FAMILIES and str(FAMILIES[w.family].study) == study
        ],
        # Points under the scale model take their CPU budgets from the calibration.
        calibration=lambda w: (
            [CALIBRATION_JSON] if RUNS[f"{w.family}/{w.point}/rep{w.rep}"].scale_model else []
        ),
    output:
        manifest=f"{RESULTS}/runs/{{family}}/{{point}}/rep{{rep}}/run.json",
    params:
        # The resolved point is a parameter, not a file: editing one family's levels reruns
        # only the points whose specification changed.
        spec=lambda w: RUNS[f"{w.family}/{w.point}/rep{w.rep}"].spec,
        scale_model=lambda w: RUNS[f"{w.family}/{w.point}/rep{w.rep}"].scale_model,
        failures=f"{RESULTS}/failures",
        retries=PROFILE.get("run", {}).get("retries", 1),
    resources:
        testbed=1,
        attempt=lambda w, attempt: attempt,
    retries: PROFILE.get("run", {}).get("retries", 1)
    log:
        f"{RESULTS}/logs/runs/{{family}}/{{point}}/rep{{rep}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/runs/{{family}}/{{point}}/rep{{rep}}.tsv"
    script:
        "../scripts/run_point.py"
