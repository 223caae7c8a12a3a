"""The design comparison's sentences read as prose whatever the counts: none, some, all."""

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


def test_counts_of_none_and_all_are_words() -> None:
    text = designs2016.sentences(grid([0.5, 0.6], ["write 0", "write 1"]))
    assert "it is the faster one in none of the 2 configurations." in text["Throughput"]
    assert "write thread in every configuration;" in text["BottleneckSixteen"]
    assert "read pool in 0" not in text["BottleneckSixteen"]
    # The configuration in words: servers, replication, writes.
    assert r"at $S=5$ with no replication and 10\,\% writes, busy 51" in text["BottleneckSixteen"]


def test_a_mixed_count_names_both_kinds() -> None:
    text = designs2016.sentences(grid([1.2, 0.6, 0.7], ["write 0", "read 1", "read 0"]))
    assert "it is the faster one in 1 of 3 configurations." in text["Throughput"]
    assert (
        "write thread in 1 of 3 configurations and a read pool in 2;" in text["BottleneckSixteen"]
    )
