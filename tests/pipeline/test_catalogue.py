"""The catalogue expands into valid testbed points; profiles narrow it with clear errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from mwlab.catalogue import CatalogueError, expand, load_catalogue, load_profile
from testbed.point import Point
from testbed.provision import TOPOLOGIES

ROOT = Path(__file__).resolve().parents[2]


def profile(name: str) -> dict[str, Any]:
    return load_profile(
        yaml.safe_load((ROOT / f"workflows/profiles/{name}/study.yaml").read_text())
    )


@pytest.mark.parametrize("name", ["smoke", "quick", "default", "azure"])
def test_every_planned_point_is_a_valid_testbed_point(name: str) -> None:
    runs = expand(load_catalogue(), profile(name))
    assert runs
    for run in runs:
        Point.model_validate(run.spec)
    assert len({run.path for run in runs}) == len(runs)


def test_azure_runs_the_study_grid() -> None:
    runs = expand(load_catalogue(), profile("azure"))
    counts = Counter(run.family for run in runs)
    # Seed 004, Table 2: 2 setups x 2 workloads x 9 client counts x 3 repetitions.
    assert counts["baseline_direct"] == 2 * 2 * 9 * 3
    # 2^3 designs for read-only and write-only, three repetitions each.
    assert counts["factorial_2018"] == 8 * 2 * 3
    assert {run.spec["duration_s"] for run in runs} == {80}


def test_replication_levels_resolve_against_servers() -> None:
    runs = expand(load_catalogue(), profile("azure"))
    replication = {
        (run.spec["servers"], run.levels["replication"]): run.spec["middleware"]["replication"]
        for run in runs
        if run.family == "replication_2016"
    }
    assert replication[(7, "half")] == 4
    assert replication[(5, "none")] == 1
    assert replication[(3, "full")] is None  # all servers


def test_two_middleware_setup_targets_one_instance_per_middleware() -> None:
    runs = expand(load_catalogue(), profile("azure"))
    run = next(r for r in runs if r.levels.get("setup") == "two_middlewares")
    assert (run.spec["middlewares"], run.spec["instances_per_client"], run.spec["threads"]) == (
        2, 2, 1,
    )  # fmt: skip


def test_unknown_level_in_a_profile_is_named() -> None:
    bad = profile("smoke")
    bad["families"]["baseline_direct"]["levels"]["virtual_clients"] = [3]
    with pytest.raises(CatalogueError, match=r"virtual_clients: unknown levels \['3'\]"):
        expand(load_catalogue(), bad)


def test_profile_schema_rejects_unknown_keys() -> None:
    bad = profile("smoke") | {"hostz": "local"}
    with pytest.raises(CatalogueError, match="hostz"):
        load_profile(bad)


def test_catalogue_errors_name_the_file(tmp_path: Path) -> None:
    broken = yaml.safe_load((ROOT / "workflows/catalogue.yaml").read_text())
    broken["families"]["multiget"]["factors"]["size"]["levels"] = []
    path = tmp_path / "catalogue.yaml"
    path.write_text(yaml.safe_dump(broken))
    with pytest.raises(CatalogueError, match=str(path)):
        load_catalogue(path)


def test_the_2016_families_run_the_2016_design() -> None:
    runs = expand(load_catalogue(), profile("azure"))
    for run in runs:
        family = run.family
        point = Point.model_validate(run.spec)
        if point.system == "simplemq":
            continue  # the 2015 study: no memcached middleware
        design = point.middleware.design
        if family.endswith("_2018") or family in {"baseline_direct", "baseline_middleware",
                                                  "write_throughput", "multiget"}:  # fmt: skip
            assert design == "2018", run.path
        elif family != "designs_2016":
            assert design == "2016", run.path
    workers = {r.spec["middleware"]["workers"] for r in runs if r.family == "max_throughput_2016"}
    assert workers == {8, 16, 24, 32}  # threads per read pool
    for family in ("replication_2016", "writes_2016", "factorial_2016", "designs_2016"):
        assert {r.spec["middleware"]["workers"] for r in runs if r.family == family} == {24}


def test_design_comparison_runs_the_writes_grid_on_both_designs() -> None:
    runs = expand(load_catalogue(), profile("azure"))
    mine = [r for r in runs if r.family == "designs_2016"]
    # S ∈ {3,5,7} × R ∈ {1,S} × writes ∈ {1,5,10} % on two designs, three repetitions.
    assert len(mine) == 3 * 2 * 3 * 2 * 3
    by_design: dict[str, list[dict]] = {"2016": [], "2018": []}
    for r in mine:
        spec = {**r.spec, "name": "", "middleware": dict(r.spec["middleware"])}
        by_design[spec["middleware"].pop("design")].append(spec)
    # Apart from the design, both halves are the same points.
    assert by_design["2016"] == by_design["2018"]
    writes_grid = {
        (r.spec["servers"], r.spec["middleware"]["replication"], r.spec["workload"]["ratio"])
        for r in runs
        if r.family == "writes_2016"
    }
    assert {
        (r.spec["servers"], r.spec["middleware"]["replication"], r.spec["workload"]["ratio"])
        for r in mine
    } == writes_grid


def test_unknown_design_is_named(tmp_path: Path) -> None:
    broken = yaml.safe_load((ROOT / "workflows/catalogue.yaml").read_text())
    broken["families"]["writes_2016"]["fixed"]["middleware"]["design"] = 2017
    path = tmp_path / "catalogue.yaml"
    path.write_text(yaml.safe_dump(broken))
    with pytest.raises(CatalogueError, match=r"families/writes_2016/fixed/middleware/design"):
        load_catalogue(path)
    # A factor's levels are not covered by the schema: expansion names the point.
    broken = yaml.safe_load((ROOT / "workflows/catalogue.yaml").read_text())
    broken["families"]["designs_2016"]["factors"]["design"]["levels"] = ["2016", "2017"]
    path.write_text(yaml.safe_dump(broken))
    with pytest.raises(CatalogueError, match=r"designs_2016, point design=2017,.*'2017' is not"):
        expand(load_catalogue(path), profile("smoke") | {"families": {}})


def test_the_middlewares_timeout_is_dilated_with_the_testbeds_clock() -> None:
    # At s = 0.05 one second of the study lasts 20 s on the testbed: a middleware that
    # failed server replies after its own 1 s would fail what the study's waited for.
    runs = expand(load_catalogue(), profile("default"))
    scaled = [r for r in runs if r.scale_model is not None]
    assert scaled
    for run in scaled:
        timeout = run.spec["middleware"]["server_timeout_ms"]
        assert timeout == round(1000 / run.spec["scale"])


def test_azure_runs_the_2015_study_on_its_own_vms() -> None:
    """The SimpleMQ families run over ssh on the 2015 study's VMs, at the study's own scale
    (no dilated commit delay: the VMs' disks are real)."""
    runs = [r for r in expand(load_catalogue(), profile("azure")) if r.family.startswith("mq_")]
    assert {r.family for r in runs} == {
        "mq_db_baseline", "mq_throughput", "mq_scale_clients", "mq_scale_workers",
        "mq_factorial", "mq_pop_strategy", "mq_stability",
    }  # fmt: skip
    for run in runs:
        point = Point.model_validate(run.spec)
        assert (point.system, point.hosts) == ("simplemq", "ssh")
        # The provisioned VMs as preflight pinned them (workflows/rules/preflight.smk).
        assert point.inventory == Path("results/azure/hosts/2015/inventory.yaml")
        assert point.scale == 1 and point.queue_settings.commit_delay_ms == 0


def test_every_azure_point_fits_its_studys_provisioned_vms() -> None:
    """`mwlab provision` creates at least the machines of each role that any point of its
    study asks for."""
    families = load_catalogue()
    for run in expand(families, profile("azure")):
        vms = TOPOLOGIES[str(families[run.family].study)]
        spec = run.spec
        need = {"server": spec["servers"], "middleware": spec.get("middlewares", 0),
                "client": spec["client_machines"]}  # fmt: skip
        assert all(n <= vms[role] for role, n in need.items()), (run.path, need, vms)


def test_the_cluster_profile_plans_the_studies_it_has_machines_for() -> None:
    """Machines one already has: a study runs on its inventory's machines, as preflight pins
    them; a planned study without an inventory is refused, naming the study."""
    cluster = profile("cluster")
    with pytest.raises(CatalogueError, match=r"the 2018 study runs on ssh machines but the"):
        expand(load_catalogue(), cluster)
    chosen = {**cluster, "inventories": {"2016": "lab.yaml"}, "studies": ["2016"]}
    runs = expand(load_catalogue(), chosen)
    assert {r.family for r in runs} == {
        "max_throughput_2016", "replication_2016", "writes_2016", "factorial_2016",
        "designs_2016",
    }  # fmt: skip
    assert {r.spec["inventory"] for r in runs} == {"results/cluster/hosts/2016/inventory.yaml"}
    assert {r.spec["hosts"] for r in runs} == {"ssh"}
