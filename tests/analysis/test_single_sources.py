"""Each default and each threshold has one definition that every user reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis import bottleneck, findings, validate
from analysis.studies.s2016 import designs as designs2016
from analysis.validate import LAW_TOLERANCE, interactive_law
from testbed.point import DEFAULT_WORKERS, Point

ROOT = Path(__file__).resolve().parents[2]


def test_a_point_without_a_worker_count_runs_the_default() -> None:
    point = Point.model_validate({"middlewares": 1})
    assert point.middleware.workers == DEFAULT_WORKERS


def test_the_catalogue_states_no_worker_count_of_its_own() -> None:
    # Every family with a middleware states its study's worker count; the rest of the time
    # the point model's default applies, not a second default in the catalogue.
    document = yaml.safe_load((ROOT / "workflows/catalogue.yaml").read_text())
    assert "workers" not in document["defaults"]["fixed"].get("middleware", {})


def test_the_interactive_law_holds_within_the_validations_tolerance() -> None:
    # 1,000 clients measured at X = 100,000/s and R = 9.35 ms: N/R is 7 % above X.
    law = interactive_law(1000, 100_000.0, 0.00935)
    assert law.relative_error == pytest.approx(-0.0695, abs=1e-3)
    assert abs(law.relative_error) <= LAW_TOLERANCE
    assert law.holds()


def test_the_laws_verdict_follows_the_one_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    # A tolerance written a second time anywhere would keep this 7 % error within 10 %.
    law = interactive_law(1000, 100_000.0, 0.00935)
    monkeypatch.setattr(validate, "LAW_TOLERANCE", 0.05)
    assert not law.holds()


def busy(fraction: float) -> pd.DataFrame:
    """One configuration on both designs, its busiest 2016 pool busy `fraction` of the time."""
    return pd.DataFrame(
        [
            {"servers": 3, "level_replication": "full", "level_writes": "10", "ratio": 0.9,
             "busiest_2016": "read 1", "busiest_fraction_2016": fraction,
             "busy_shared_2018": fraction},
        ]
    )  # fmt: skip


def test_a_pool_is_saturated_where_the_bottleneck_analysis_says_so() -> None:
    below = designs2016.comparison_numbers(busy(bottleneck.SATURATED - 0.05))
    assert below["SixteenDesignsSaturatedCase"] == "none"
    assert below["SixteenDesignsEighteenCase"] == "unsaturated"
    at = designs2016.comparison_numbers(busy(bottleneck.SATURATED))
    assert at["SixteenDesignsSaturatedCase"] == "read"
    assert (at["SixteenDesignsEighteenCase"], at["SixteenDesignsEighteenSaturated"]) == (
        "saturated",
        "1",
    )


def test_saturation_follows_the_one_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the threshold lowered where it is defined, a pool 60 % busy counts as saturated.
    assert designs2016.comparison_numbers(busy(0.6))["SixteenDesignsSaturatedCase"] == "none"
    monkeypatch.setattr(bottleneck, "SATURATED", 0.5)
    sixty = designs2016.comparison_numbers(busy(0.6))
    assert sixty["SixteenDesignsSaturatedCase"] == "read"
    assert sixty["SixteenDesignsSaturated"] == "50\\,\\%"


def test_the_findings_catalogue_has_no_confidence_level_of_its_own(tmp_path: Path) -> None:
    findings.load_catalogue(ROOT / "workflows/findings.yaml")
    document = yaml.safe_load((ROOT / "workflows/findings.yaml").read_text())
    path = tmp_path / "findings.yaml"
    path.write_text(yaml.safe_dump({**document, "level": 0.9}))
    with pytest.raises(findings.FindingsError, match="one confidence level"):
        findings.load_catalogue(path)
