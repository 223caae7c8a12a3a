# The plan: every run of the profile, from the catalogue.
import re
from pathlib import Path

from mwlab.catalogue import calibration_needed, calibration_plan
from mwlab.catalogue import expand as plan_runs
from mwlab.catalogue import family_settings, load_catalogue, load_profile

FAMILIES = load_catalogue(Path(config.get("catalogue", "workflows/catalogue.yaml")))
PROFILE = load_profile(config, source=f"profile {config['profile']}")
PLAN = plan_runs(FAMILIES, PROFILE)
# The speed factors' calibration runs, when a point uses the scale model (workflows/machines.yaml).
CALIBRATION_PLAN = calibration_plan(PROFILE) if calibration_needed(PLAN) else []
CALIBRATION_JSON = f"{RESULTS}/calibration.json"
RUNS = {run.path: run for run in PLAN + CALIBRATION_PLAN}
# Series (testbed/series.py): the runs each one measures, by series path.
SERIES = {}
for _run in PLAN:
    if _run.series is not None:
        SERIES.setdefault(_run.series, []).append(_run)
ACTIVE_FAMILIES = sorted({run.family for run in PLAN})
# Python modules whose changes must rerun the analysis (and only the analysis).
ANALYSIS_CODE = sorted(glob.glob("analysis/**/*.py", recursive=True)) + sorted(
    p
    for p in glob.glob("workflows/scripts/*.py")
    if not p.endswith(("run_point.py", "run_series.py"))
)


def runs_of(family):
    return [f"{RESULTS}/runs/{run.path}/run.json" for run in PLAN if run.family == family]


def settings_of(family):
    return family_settings(FAMILIES[family], PROFILE)
