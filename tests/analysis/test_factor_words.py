"""The report's words: a 2^k r design's terms, "most" only for a majority, families and
study numbers."""

import pytest

from analysis.report import factor_words as fw

WORDS = {"servers": "the number of servers", "workers": "the number of workers"}
LETTERS = {"servers": "A", "workers": "C"}


def letter(term: str) -> str:
    return "".join(LETTERS[f] for f in term.split(":"))


def describe(term: str) -> str:
    return fw.term_words(term, WORDS, letter)


def test_terms_in_words() -> None:
    assert describe("servers") == "the number of servers ($q_{A}$)"
    assert describe("servers:workers") == (
        "the interaction of the number of servers and the number of workers ($q_{AC}$)"
    )
    with pytest.raises(ValueError, match="no words"):
        describe("clients")


def test_only_a_majority_share_is_most_of_the_variation() -> None:
    assert fw.share_case(0.97) == "most"
    assert fw.share_case(0.51) == "most"
    assert fw.share_case(0.5) == "largest"
    assert fw.share_case(0.28) == "largest"


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
    # A point reads as its levels, counts before their names.
    assert fw.point_words("setup=one_server,workload=write-only,virtual_clients=32") == (
        "one server, write-only, 32 virtual clients"
    )
