"""Seed tables as LaTeX (analysis.studies.s2018.seed_tables) on small hand-made tables."""

from __future__ import annotations

import math

import pandas as pd

from analysis.studies.s2018.seed_tables import beside_rows, law_rows_tabular


def test_beside_rows_show_each_group_once_with_label_and_decimals() -> None:
    table = pd.DataFrame(
        [
            ("one_middleware", "write-only", "client_x", 6000.4, 12144.0, 11549.7),
            ("one_middleware", "write-only", "mw_queue", 4.04, math.nan, 1.25),
            ("two_middlewares", "write-only", "client_x", 9000.0, 13776.0, math.nan),
        ],
        columns=["setup", "workload", "quantity", "ours", "seed002", "seed004"],
    )
    rows = beside_rows(table, ["setup", "workload"])
    assert rows == [
        ["one middleware", "write-only", "X cl. [ops/s]", "6{,}000", "12{,}144", "11{,}550"],
        ["", "", "queue [ms]", "4.0", "--", "1.2"],
        ["two middlewares", "write-only", "X cl. [ops/s]", "9{,}000", "13{,}776", "--"],
    ]


def test_law_rows_tabular_formats_ours_beside_seed002() -> None:
    table = pd.DataFrame(
        [
            {
                "setup": "full_system",
                "workload": "write-only",
                "ours_points": 3,
                "ours_median_ms": 0.5,
                "ours_max_abs_ms": 1.234,
                "ours_max_abs_share": 0.1,
                "seed002_cells": 40,
                "seed002_median_ms": 2.25,
                "seed002_max_abs_ms": 7.0,
                "common_cells": 2,
            }
        ]
    )
    tex = law_rows_tabular(table)
    assert tex.startswith("\\begin{tabular}{llrrrrrrrr}")
    assert (
        "full system & write-only & 3 & 0.50 & 1.23 & 10.0\\,\\% & 40 & 2.2 & 7.0 & 2 \\\\" in tex
    )
