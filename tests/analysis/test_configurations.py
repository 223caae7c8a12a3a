"""A configuration that several families measured is one configuration: its runs pool."""

from __future__ import annotations

import pandas as pd

from analysis import configurations, findings

SPEC = {"servers": 3, "middleware": {"workers": 8}, "workload": {"ratio": "1:0"}}


def test_the_same_specification_in_two_families_is_shared_the_run_length_aside() -> None:
    specs = {
        "writes": {"workers=8": {**SPEC, "duration_s": 10, "name": "writes/workers=8/rep1"}},
        "factorial": {"w=8": {**SPEC, "duration_s": 24}, "w=32": {**SPEC, "servers": 1}},
    }
    assert configurations.shared(specs) == {
        ("writes", "workers=8"): [("factorial", "w=8")],
        ("factorial", "w=8"): [("writes", "workers=8")],
    }
    # The same family twice is not sharing.
    assert configurations.shared({"a": {"p": SPEC, "q": SPEC}}) == {}


def _runs(family: str, point: str, level: str, xs: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"run": f"{family}/{point}/rep{i}", "point": point, "repetition": i, "side": "client",
          "type": "all", "status": "ok", "throughput_ops": x, "level_workers": level,
          "scale": 1.0} for i, x in enumerate(xs, start=1)]
    )  # fmt: skip


def test_a_level_pools_the_runs_of_its_configuration_from_every_family() -> None:
    a = pd.concat([_runs("a", "w=8", "8", [100, 101, 99]), _runs("a", "w=32", "32", [200, 201])])
    b = _runs("b", "workers=8", "eight", [130, 131, 129])
    data = findings.Data(
        families={"a": {"runs": a}, "b": {"runs": b}},
        shared={("a", "w=8"): [("b", "workers=8")], ("b", "workers=8"): [("a", "w=8")]},
    )
    runs = data.runs("a")
    at8 = runs[runs["point"] == "w=8"]
    # Six runs under a's point and level, b's numbered apart so that no pair mixes families.
    assert len(at8) == 6 and set(at8["level_workers"]) == {"8"}
    assert sorted(at8["repetition"]) == [1, 2, 3, 1001, 1002, 1003]
    assert data.pooled_from("a", {"w=8"}) == ["b"] and data.pooled_from("a", {"w=32"}) == []
    # The session difference between the families widens the level's interval.
    alone = findings.level_sample(data, "a", data.runs("a", pooled=False).query("point == 'w=8'"),
                                  "throughput_ops", "all")  # fmt: skip
    pooled = findings.level_sample(data, "a", at8, "throughput_ops", "all")
    assert pooled.mean > alone.mean and pooled.std_error > 5 * alone.std_error
