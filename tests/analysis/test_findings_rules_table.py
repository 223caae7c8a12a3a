"""The findings' rule table says each rule once, beside every finding it decides."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from analysis import findings
from analysis.report.findings import estimate_text, mid_sentence, rules_table


def test_each_rule_is_said_once_for_all_the_findings_it_decides() -> None:
    rule = {"kind": "effect", "direction": "increase"}
    catalogue = {
        "findings": [
            {"claim": "A raises X", "rule": rule},
            {"claim": "B lowers Y", "rule": {"kind": "effect", "direction": "decrease"}},
            {"claim": "C raises Z", "rule": rule},
        ]
    }
    text = rules_table(catalogue)
    assert text.count("significant increase") == 1
    assert r"The change is a significant increase & A raises X \\" in text
    assert "\n & C raises Z \\\\" in text
    assert r"The change is a significant decrease & B lowers Y \\" in text


def test_every_threshold_says_which_words_of_the_study_it_reads() -> None:
    catalogue = {
        "findings": [
            {"claim": "Most time waits", "rule": {"kind": "beyond", "direction": "above",
                                                  "threshold": 0.5, "why": "most: more than half"}},
        ]
    }  # fmt: skip
    assert r"Most time waits {\footnotesize(threshold: most: more than half)}" in rules_table(
        catalogue
    )


def test_a_threshold_without_its_reason_is_refused(tmp_path: Path) -> None:
    doc = yaml.safe_load(Path("workflows/findings.yaml").read_text())
    rule = next(f["rule"] for f in doc["findings"] if f["rule"]["kind"] == "beyond")
    del rule["why"]
    path = tmp_path / "findings.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(findings.FindingsError, match="rule needs a `why`"):
        findings.load_catalogue(path)


def test_a_claim_or_reason_after_a_semicolon_loses_only_a_sentence_capital() -> None:
    assert mid_sentence("The MVA overpredicts") == "the MVA overpredicts"
    assert mid_sentence("A 2016 GET spends its time") == "a 2016 GET spends its time"
    # Names and acronyms keep theirs.
    assert mid_sentence("MVA is not valid here") == "MVA is not valid here"
    assert mid_sentence("SimpleMQ's middleware") == "SimpleMQ's middleware"
    assert mid_sentence("M/M/1 misses") == "M/M/1 misses"
    assert mid_sentence("") == ""


def _outcome(estimate: float, study_value: float) -> findings.Outcome:
    return findings.Outcome(
        id="x", claim="c", source="s", study_of="2016", study="", ours="",
        verdict=findings.Verdict.INCONCLUSIVE, estimate=estimate, ci_low=math.nan,
        ci_high=math.nan, unit="change", test="t", repetitions=3, needed=None,
        study_value=study_value, bottleneck="", construction="", reason="",
    )  # fmt: skip


def test_the_ratio_to_the_study_is_printed_only_where_it_means_something() -> None:
    assert estimate_text(_outcome(0.2, 0.1)).endswith("study +10.0\\,\\%, ratio 2.00")
    # The study's value printed as zero, or of the other sign: no ratio.
    assert estimate_text(_outcome(0.2, 0.0004)).endswith("study +0.0\\,\\%")
    assert estimate_text(_outcome(0.2, -0.1)).endswith("study -10.0\\,\\%")
