"""The setup section's tables (mwlab.plan_tables): worker counts come from the planned points,
defaults included."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from mwlab import plan_tables as setup_tables
from mwlab.catalogue import PlannedRun, expand, load_catalogue, load_profile
from testbed.point import DEFAULT_WORKERS

ROOT = Path(__file__).resolve().parents[1]


def test_worker_counts_are_the_points_and_a_dash_without_a_middleware() -> None:
    profile = load_profile(
        yaml.safe_load((ROOT / "workflows/profiles/smoke/study.yaml").read_text())
    )
    families = load_catalogue()
    plan = expand(families, profile, cores=2)

    # A family with a middleware whose catalogue entry states no worker count runs the
    # point model's default.
    def without_workers(run: PlannedRun) -> PlannedRun:
        middleware = {k: v for k, v in run.spec["middleware"].items() if k != "workers"}
        return dataclasses.replace(run, spec={**run.spec, "middleware": middleware})

    plan = [without_workers(r) if r.family == "batching_2018" else r for r in plan]
    macros = setup_tables.catalogue_macros(families, plan, profile)
    assert r"\newcommand{\CatBaselineDirectWorkers}{--}" in macros
    assert rf"\newcommand{{\CatBatchingEighteenWorkers}}{{{DEFAULT_WORKERS}}}" in macros
    assert r"\newcommand{\CatMultigetWorkers}{64}" in macros


def test_family_rows_name_factors_in_words_and_count_repetitions() -> None:
    profile = load_profile(
        yaml.safe_load((ROOT / "workflows/profiles/smoke/study.yaml").read_text())
    )
    families = load_catalogue()
    plan = expand(families, profile, cores=2)
    family = families["baseline_direct"]
    runs = [r for r in plan if r.family == family.name]
    text = "\n".join(setup_tables.family_rows(family, runs, profile))
    assert "virtual clients:" in text and "virtual_clients" not in text
    reps = setup_tables.family_settings(family, profile)["repetitions"]
    assert f"{reps} repetition{'' if reps == 1 else 's'} of" in text
