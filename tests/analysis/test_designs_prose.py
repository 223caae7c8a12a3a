"""The design comparison's counts and cases, which the section words for none, some and all."""

from __future__ import annotations

import pandas as pd

from analysis.studies.s2016 import designs as designs2016


def grid(ratios: list[float], busiest: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"servers": 3 + 2 * i, "level_replication": "none" if i % 2 else "full",
             "level_writes": "10", "ratio": r, "busiest_2016": b,
             "busiest_fraction_2016": 0.5 + 0.01 * i, "busy_shared_2018": 0.5}
            for i, (r, b) in enumerate(zip(ratios, busiest, strict=True))
        ]
    )  # fmt: skip


def test_counts_of_none_and_all() -> None:
    n = designs2016.comparison_numbers(grid([0.5, 0.6], ["write 0", "write 1"]))
    # Faster in none of the 2 configurations; a write thread the busiest in every one.
    assert (n["SixteenDesignsFaster"], n["SixteenDesignsBoth"]) == ("0", "2")
    assert n["SixteenDesignsSixteenCase"] == "write"
    # The busiest configuration: servers, replication, writes, busy 51 %.
    assert n["SixteenDesignsSixteenTopConfig"] == r"\SixteenConfig{5}{none}{10}"
    assert n["SixteenDesignsSixteenTopBusy"] == r"51\,\%"


def test_a_mixed_count_names_both_kinds() -> None:
    n = designs2016.comparison_numbers(grid([1.2, 0.6, 0.7], ["write 0", "read 1", "read 0"]))
    assert (n["SixteenDesignsFaster"], n["SixteenDesignsBoth"]) == ("1", "3")
    # A write thread in 1 of 3 configurations and a read pool in 2.
    assert n["SixteenDesignsSixteenCase"] == "mixed"
    assert (n["SixteenDesignsSixteenWrites"], n["SixteenDesignsSixteenReads"]) == ("1", "2")
