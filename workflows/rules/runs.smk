# One job per run (family x point x repetition), or per series (the points of one topology
# and repetition, measured in one run of it: testbed/series.py). Measurement jobs hold the
# slot of their machines so that two never share one: the single `testbed` resource for runs
# on this machine, with every core on emulated hosts so that no other job runs beside them
# (MEASUREMENT_THREADS), or their study's ssh machines' (workflows/rules/preflight.smk); a
# finished job is never repeated.


wildcard_constraints:
    family="[a-z0-9_]+",
    rep="[0-9]+",


# Further attempts at a run: after a failure (`retries`); a measurement run is measured again
# when unstable too, as often as a series step (`reruns`, workflows/scripts/run_point.py).
RETRIES = PROFILE.get("run", {}).get("retries", 1)
RERUNS = PROFILE.get("run", {}).get("reruns", 2)


def _study(family):
    """A family's study ("2018"); None for the calibration's runs, which run here."""
    return str(FAMILIES[family].study) if family in FAMILIES else None


def _isolated_families():
    """rule run_point serves the families (and the calibration) whose points run alone."""
    names = {run.family for run in PLAN + CALIBRATION_PLAN if run.series is None}
    return "|".join(sorted(names)) or "calibration"


rule run_point:
    wildcard_constraints:
        family=_isolated_families(),
    input:
        # ssh profiles: the inventory of the run's study as preflight pinned it.
        inventory=lambda w: preflight_inputs(_study(w.family)),
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
        retries=RETRIES,
        # A calibration run, or one whose trend is its result, is measured again only on a
        # disturbed machine, as a failed one is; any other unstable one up to `reruns` times.
        judge=lambda w: (
            "unstable" if measured_again_when_unstable(w.family, FAMILIES) else "disturbed"
        ),
        reruns=lambda w: RERUNS if measured_again_when_unstable(w.family, FAMILIES) else RETRIES,
    threads: MEASUREMENT_THREADS
    resources:
        # The slot of the machines it runs on: this one's, or its study's ssh machines'.
        **slot_resources(lambda w: _study(w.family)),
        attempt=lambda w, attempt: attempt,
    retries: max(RETRIES, RERUNS)
    log:
        f"{RESULTS}/logs/runs/{{family}}/{{point}}/rep{{rep}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/runs/{{family}}/{{point}}/rep{{rep}}.tsv"
    script:
        "../scripts/run_point.py"


# One rule per series: its outputs are its points' manifests, known when the plan is made.
for _key, _runs in SERIES.items():

    rule:
        name:
            "series_" + re.sub(r"\W", "_", _key)
        input:
            inventory=preflight_inputs(_study(_runs[0].family)),
            calibration=[CALIBRATION_JSON] if _runs[0].scale_model else [],
        output:
            manifests=[f"{RESULTS}/runs/{run.path}/run.json" for run in _runs],
        params:
            specs=[run.spec for run in _runs],
            scale_model=_runs[0].scale_model,
            series_dir=f"{RESULTS}/series/{_key}",
            failures=f"{RESULTS}/failures",
            retries=RETRIES,
            reruns=RERUNS,
            longest_rerun=PROFILE.get("run", {}).get("longest_rerun", 1.0),
        threads: MEASUREMENT_THREADS
        resources:
            **slot_resources(lambda w, study=_study(_runs[0].family): study),
            attempt=lambda w, attempt: attempt,
        retries: RETRIES
        log:
            f"{RESULTS}/logs/series/{_key}.log",
        benchmark:
            f"{RESULTS}/benchmarks/series/{_key}.tsv"
        script:
            "../scripts/run_series.py"
