"""2^k r summaries read as prose: factors in words, "most" only for a majority."""

import pytest

from analysis.report import factor_words as fw

WORDS = {"servers": "the number of servers", "workers": "the number of workers"}
LETTERS = {"servers": "A", "workers": "C"}


def letter(term: str) -> str:
    return "".join(LETTERS[f] for f in term.split(":"))


def describe(term: str) -> str:
    return fw.term_words(term, WORDS, letter)


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def test_terms_in_words() -> None:
    assert describe("servers") == "the number of servers ($q_{A}$)"
    assert describe("servers:workers") == (
        "the interaction of the number of servers and the number of workers ($q_{AC}$)"
    )
    with pytest.raises(ValueError, match="no words"):
        describe("clients")


def test_same_term_on_both_responses_is_not_named_twice() -> None:
    text = fw.summary(2, ("servers", 0.97), ("servers", 0.95), 0.01, describe, pct)
    assert text.count("the number of servers") == 1
    assert "and also most of the response-time variation (95.0 %)" in text


def test_minority_share_is_not_called_most() -> None:
    text = fw.summary(1, ("workers", 0.28), ("servers", 0.6), 0.17, describe, pct)
    assert text.startswith("With 1 repetition, the number of workers ($q_{C}$) explains the ")
    assert "largest share of the throughput variation (28.0 %)" in text
    assert "the number of servers ($q_{A}$) most of the response-time" in text


def test_one_repetition_has_no_error_share_to_report() -> None:
    text = fw.summary(1, ("workers", 0.6), ("workers", 0.5), 0.0, describe, pct)
    assert "zero by construction" in text
    assert "error explains" not in text
    assert "error explains 1" in fw.summary(
        3, ("workers", 0.6), ("workers", 0.5), 0.01, describe, pct
    )


def test_tables_name_families_and_study_numbers_in_words() -> None:
    assert fw.family_words("baseline_direct") == "baseline, no middleware"
    # A family without words reads as its parts, never as code.
    assert fw.family_words("new_family") == "new family"
    path = ["baselines_middleware", "one_middleware", "write-only", "client_r"]
    assert fw.reference_words(path) == (
        "with middleware, one middleware, write-only, client response time"
    )
    assert fw.reference_unit(path) == "ms"
    assert fw.reference_words(["writes", "8", "client_x"]).endswith("8 workers, client throughput")
    assert fw.reference_unit(["multiget", "keys_per_s", "sharded", "6"]) == "keys/s"
