"""The findings' rule table says each rule once, beside every finding it decides."""

from __future__ import annotations

from analysis.report.findings import rules_table


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
    assert r"The change is a significant increase & A raises X \newline C raises Z \\" in text
    assert r"The change is a significant decrease & B lowers Y \\" in text
