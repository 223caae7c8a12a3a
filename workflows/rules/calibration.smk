# The scale model's calibration: a few runs of named points (workflows/machines.yaml) on
# emulated hosts, through rule run_point like every run, and the fit of the per-role speed
# factors to the study's numbers. Every run under the scale model depends on its result.
from mwlab.catalogue import calibration_settings, scale_settings


if ONTO and not DATASET:

    rule calibration_of_pieces:
        input:
            manifest=f"{ONTO}/{datasets.MANIFEST}",
        output:
            calibration=CALIBRATION_JSON,
        log:
            f"{RESULTS}/logs/calibration.log",
        run:
            datasets.restore(Path(ONTO), Path(RESULTS), ["calibration.json"])

elif not DATASET:

    rule calibrate:
        input:
            runs=[f"{RESULTS}/runs/{run.path}/run.json" for run in CALIBRATION_PLAN],
            machines=MACHINES_FILE,
        output:
            calibration=CALIBRATION_JSON,
        params:
            runs=[
                {
                    "path": run.path,
                    "dir": f"{RESULTS}/runs/{run.path}",
                    "target": run.levels["target"],
                    "speed": float(run.levels["speed"]),
                }
                for run in CALIBRATION_PLAN
            ],
            settings=lambda w: calibration_settings(PROFILE),
        log:
            f"{RESULTS}/logs/calibration.log",
        script:
            "../scripts/calibrate.py"


rule scale_model_tables:
    input:
        calibration=[CALIBRATION_JSON] if CALIBRATION_PLAN else [],
        check=(
            [f"{RESULTS}/data/scale_check/runs.parquet"]
            if "scale_check" in ACTIVE_FAMILIES
            else []
        ),
        # Each fit is checked where a family measured its target's configuration.
        points=(
            [family_table(f, "points") for f in ACTIVE_FAMILIES if f != "scale_check"]
            if CALIBRATION_PLAN
            else []
        ),
        # Ours beside the study numbers left out of the fit, as the study sections' tables
        # compute it: from the points the validation kept, and the 2016 maximum's and the
        # 2015 database baseline's numbers (functions: those rules are defined after this file).
        validation=[f"{RESULTS}/data/validation.parquet"] if CALIBRATION_PLAN else [],
        sixteen=lambda w: [rules.r2016_max_throughput.output.numbers] if CALIBRATION_PLAN else [],
        fifteen=lambda w: [rules.r2015_baseline.output.numbers] if CALIBRATION_PLAN else [],
        # The study's configurations (clients, workers) at which ours is read.
        reference="workflows/reference2018.yaml",
        machines=MACHINES_FILE,
        code=ANALYSIS_CODE,
    output:
        calibration=f"{RESULTS}/paper/scale-calibration.tex",
        validation=f"{RESULTS}/paper/scale-validation.tex",
        check=f"{RESULTS}/paper/scale-check.tex",
        fits=f"{RESULTS}/paper/scale-fits.tex",
        variation=f"{RESULTS}/paper/scale-variation.tex",
        parameters=f"{RESULTS}/paper/scale-parameters.tex",
        numbers=f"{RESULTS}/paper/scale-model-numbers.tex",
    params:
        # The profile's s as the plan reads it (1 without the scale model).
        scale=scale_settings(None, PROFILE)["factor"],
        # Each family's study: the check's factors are read beside its own study's families.
        studies={f: str(FAMILIES[f].study) for f in ACTIVE_FAMILIES},
    log:
        f"{RESULTS}/logs/scale-model.log",
    script:
        "../scripts/scale_model.py"
