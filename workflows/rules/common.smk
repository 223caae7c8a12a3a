# The plan: every run of the profile, from the catalogue.
import re
from pathlib import Path

from snakemake.exceptions import WorkflowError

from mwlab.catalogue import calibration_needed, calibration_plan
from mwlab.catalogue import expand as plan_runs
from mwlab.catalogue import family_settings, load_catalogue, load_profile
from mwlab.catalogue import measured_again_when_unstable

from analysis import dataset as datasets
from common import paths
from common.environment import HOST_RECORD, TOOLS_RECORD

# A reference dataset (analysis/dataset.py) to rebuild the report from, instead of measuring:
# `make paper` sets it, with the dataset's own study.yaml and catalogue.yaml as the plan.
DATASET = config.get("dataset")

# The catalogue and the machines, as paths relative to the root (where Snakemake runs).
CATALOGUE_FILE = config.get("catalogue", str(paths.CATALOGUE.relative_to(paths.REPO)))
MACHINES_FILE = str(paths.MACHINES.relative_to(paths.REPO))
FAMILIES = load_catalogue(Path(CATALOGUE_FILE))
PROFILE = load_profile(config, source=f"profile {config['profile']}")
PLAN = plan_runs(FAMILIES, PROFILE)
# A piece of a measurement (`mwlab measure --families`): only these families' runs; the
# calibration is the whole profile's either way.
PIECE = [f for f in str(config.get("piece") or "").split(",") if f]
if PIECE:
    _unknown = sorted(set(PIECE) - {run.family for run in PLAN})
    if _unknown:
        raise ValueError(f"piece: no family {', '.join(_unknown)} in profile {config['profile']}")
    PLAN = [run for run in PLAN if run.family in PIECE]
# A later piece (`mwlab measure --onto`): the dataset of the earlier pieces, whose calibration
# this piece measures with, so that every piece runs under the same budgets.
ONTO = config.get("onto")
# The speed factors' calibration runs, when a point uses the scale model (workflows/machines.yaml).
CALIBRATION_PLAN = calibration_plan(PROFILE) if calibration_needed(PLAN) else []
CALIBRATION_JSON = f"{RESULTS}/calibration.json"
# A measurement on emulated hosts takes every core Snakemake has: the runs' CPU budgets assume
# the rest of the machine is the harness's, so no analysis job may run beside one (an
# analysis job takes a whole core). On ssh hosts the measurement runs elsewhere.
try:
    _CORES = workflow.cores
except WorkflowError:
    _CORES = 1  # a dry run without --cores: nothing runs
MEASUREMENT_THREADS = _CORES if PROFILE.get("hosts") == "emulated" else 1
RUNS = {run.path: run for run in PLAN + CALIBRATION_PLAN}
# Series (testbed/series.py): the runs each one measures, by series path.
SERIES = {}
for _run in PLAN:
    if _run.series is not None:
        SERIES.setdefault(_run.series, []).append(_run)
ACTIVE_FAMILIES = sorted({run.family for run in PLAN})
# What the analysis reads from the measurement: measured here, or restored from DATASET.
TOOLS_JSON = f"{RESULTS}/{TOOLS_RECORD}"
HOST_JSON = f"{RESULTS}/{HOST_RECORD}"
PROVENANCE_JSON = f"{RESULTS}/{datasets.PROVENANCE}"
RUN_TIMES = f"{RESULTS}/data/run_times.parquet"
TESTBED_RUNS = f"{RESULTS}/data/testbed_runs.parquet"
# Python modules whose changes must rerun the analysis (and only the analysis).
ANALYSIS_CODE = sorted(
    glob.glob("analysis/**/*.py", recursive=True) + glob.glob("common/*.py")
) + sorted(
    p
    for p in glob.glob("workflows/scripts/*.py")
    if not p.endswith(("run_point.py", "run_series.py"))
)


def family_table(family, table):
    return f"{RESULTS}/data/{family}/{table}.parquet"


def family_tables(table):
    """The table of every family the plan measures."""
    return [family_table(f, table) for f in ACTIVE_FAMILIES]


def runs_of(family):
    return [f"{RESULTS}/runs/{run.path}/run.json" for run in PLAN if run.family == family]


def settings_of(family):
    return family_settings(FAMILIES[family], PROFILE)
