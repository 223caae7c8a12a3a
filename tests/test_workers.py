"""The middleware's worker count walks one way under one name: `middleware.workers` in the
catalogue and the point, one default (testbed.point.DEFAULT_WORKERS) that the plan writes into
every point with a middleware, and `--workers` on the command line the testbed launches."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from mwlab.catalogue import Family, expand, load_catalogue, load_profile
from testbed.point import DEFAULT_WORKERS, Point
from testbed.services.middleware import DEFAULT_MQ_WORKERS, middleware_flags

ROOT = Path(__file__).resolve().parents[1]
MIDDLEWARE_MAIN = ROOT / "middleware/core/src/main/java/org/mwlab/middleware/Main.java"
SIMPLEMQ_COMMAND = (
    ROOT / "middleware/simplemq/src/main/java/org/mwlab/simplemq/MiddlewareCommand.java"
)


def flag(command: list[str], name: str) -> str:
    """The value that follows `name` on a command line; it must be there once."""
    assert command.count(name) == 1, command
    return command[command.index(name) + 1]


def without_workers(family: Family) -> Family:
    """The family as a catalogue entry that states no worker count at all."""
    fixed = {**family.fixed, "middleware": dict(family.fixed.get("middleware", {}))}
    fixed["middleware"].pop("workers", None)
    assert all(f.name != "workers" for f in family.factors)
    return dataclasses.replace(family, fixed=fixed)


def test_a_point_without_a_worker_count_launches_the_one_default() -> None:
    point = Point.model_validate({"servers": 2, "middlewares": 1})
    flags = middleware_flags(point.middleware, ["10.0.0.1:11211", "10.0.0.2:11211"])
    assert flag(flags, "--workers") == str(DEFAULT_WORKERS)
    assert "-t" not in flags  # one name: the point's
    stated = Point.model_validate({"middlewares": 1, "middleware": {"workers": 24}})
    assert flag(middleware_flags(stated.middleware, ["10.0.0.1:11211"]), "--workers") == "24"


def test_the_plan_writes_the_default_into_every_point_with_a_middleware() -> None:
    profile = load_profile(
        yaml.safe_load((ROOT / "workflows/profiles/smoke/study.yaml").read_text())
    )
    families = load_catalogue()
    for name in ("batching_2018", "baseline_direct"):
        families[name] = without_workers(families[name])
    plan = expand(families, profile, cores=2)
    batching = [r for r in plan if r.family == "batching_2018"]
    assert batching
    for run in batching:
        assert run.spec["middleware"]["workers"] == DEFAULT_WORKERS
        launched = middleware_flags(Point.model_validate(run.spec).middleware, ["h:1"])
        assert flag(launched, "--workers") == str(DEFAULT_WORKERS)
    # A stated count is kept; a point without a middleware gets none from the plan.
    assert {r.spec["middleware"]["workers"] for r in plan if r.family == "multiget"} == {64}
    direct = [r for r in plan if r.family == "baseline_direct"]
    assert direct and all("workers" not in r.spec["middleware"] for r in direct)


def test_a_worker_count_below_one_fails_the_plan() -> None:
    profile = load_profile(
        yaml.safe_load((ROOT / "workflows/profiles/smoke/study.yaml").read_text())
    )
    families = load_catalogue()
    family = families["batching_2018"]
    families = {
        "batching_2018": dataclasses.replace(
            family, fixed={**family.fixed, "middleware": {"workers": 0}}
        )
    }
    with pytest.raises(ValueError, match=r"middleware\.workers"):
        expand(families, profile, cores=2)


def java_default(source: Path, option: str) -> int:
    """The defaultValue of the picocli option named `option` in a Java source."""
    text = source.read_text()
    found = re.findall(
        r"@Option\(\s*names\s*=\s*\{[^}]*\"" + re.escape(option) + r"\"[^}]*\}[^)]*?"
        r"defaultValue\s*=\s*\"(\d+)\"",
        text,
    )
    assert len(found) == 1, f"{source}: no single {option} option with a default"
    return int(found[0])


@pytest.mark.parametrize(
    ("source", "default"),
    [(MIDDLEWARE_MAIN, DEFAULT_WORKERS), (SIMPLEMQ_COMMAND, DEFAULT_MQ_WORKERS)],
    ids=["middleware", "simplemq"],
)
def test_the_middlewares_standalone_default_is_the_testbeds(source: Path, default: int) -> None:
    # Run standalone, a middleware takes its own default; the testbed always passes the count.
    # The two must not drift apart.
    assert java_default(source, "--workers") == default
    assert re.search(r"names\s*=\s*\{\s*\"-t\",\s*\"--workers\"\s*\}", source.read_text())
