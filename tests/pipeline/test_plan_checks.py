"""A bad catalogue or profile fails when the plan is made (`snakemake -n`), not in a run:
every planned point passes the checks a run does first (the point model, the CPU budgets)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mwlab.catalogue import CatalogueError, calibration_plan, expand, load_catalogue, load_profile

ROOT = Path(__file__).resolve().parents[2]


def profile(name: str) -> dict[str, Any]:
    return load_profile(
        yaml.safe_load((ROOT / f"workflows/profiles/{name}/study.yaml").read_text())
    )


def catalogue_with(tmp_path: Path, family: str, fixed: dict[str, Any]) -> Path:
    document = yaml.safe_load((ROOT / "workflows/catalogue.yaml").read_text())
    document["families"][family].setdefault("fixed", {}).update(fixed)
    path = tmp_path / "catalogue.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def test_a_bad_value_in_the_catalogue_names_family_point_and_field(tmp_path: Path) -> None:
    path = catalogue_with(tmp_path, "batching_2018", {"middleware": {"workers": 0}})
    with pytest.raises(CatalogueError) as err:
        expand(load_catalogue(path), profile("smoke"), cores=2)
    message = str(err.value)
    assert "family batching_2018, point batch=1,workload=write-only,virtual_clients=4" in message
    assert "middleware.workers: Input should be greater than or equal to 1" in message


def test_a_bad_value_in_a_profile_fails_the_plan_of_an_isolated_family() -> None:
    # Families run alone (not in series) were planned without the point model's check.
    bad = profile("azure")
    bad["families"]["multiget"] = {"fixed": {"client_window_ms": 10}}
    with pytest.raises(CatalogueError, match=r"family multiget, point sharding=sharded,size=1:"
                       r" invalid point: client_window_ms: Input should be greater"):  # fmt: skip
        expand(load_catalogue(), bad, cores=2)


def test_budgets_that_do_not_fit_the_machine_fail_the_plan() -> None:
    bad = profile("smoke")
    bad["families"]["baseline_direct"] |= {
        "hosts": "emulated",
        "fixed": {"budgets_cores": {"server": 1.0, "client": 0.5}},
    }
    # One server at 1 core and three clients at 0.5: 2.5 cores, on a machine of 2 (less the
    # harness's reserve) they do not fit; on 8 they do.
    with pytest.raises(CatalogueError, match=r"family baseline_direct, point setup=one_server,"
                       r".*CPU budgets do not fit this machine"):  # fmt: skip
        expand(load_catalogue(), bad, cores=2)
    assert expand(load_catalogue(), bad, cores=8)


def test_calibration_points_are_checked_against_the_machine() -> None:
    with pytest.raises(CatalogueError, match=r"calibration point target=.*CPU budgets do not fit"):
        calibration_plan(profile("default"), cores=0.5)


def test_snakemake_dry_run_fails_on_a_bad_catalogue(tmp_path: Path) -> None:
    path = catalogue_with(tmp_path, "batching_2018", {"middleware": {"workers": 0}})
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        [Path(sys.executable).parent / "snakemake", "results/smoke/report.pdf", "--profile",
         "workflows/profiles/smoke", "--dry-run", "--nolock", "--config", f"catalogue={path}"],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "family batching_2018, point batch=1" in out, out[-3000:]
    assert "middleware.workers: Input should be greater than or equal to 1" in out
