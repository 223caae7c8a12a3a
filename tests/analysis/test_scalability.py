"""The ideal implementation of the 2016 study's §2.3: throughput linear in the servers from
the fewest servers without replication, per share of writes."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.models.scalability import ideal_linear


def points() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "servers": [3, 5, 7, 3, 7, 3],
            "level_replication": ["none", "none", "none", "full", "full", "none"],
            "level_writes": ["1", "1", "1", "1", "1", "10"],
            "x": [300.0, 400.0, 350.0, 240.0, 280.0, 600.0],
        }
    )


def test_ideal_grows_with_servers_and_ignores_replication() -> None:
    out = ideal_linear(points(), "x", "servers", ["level_writes"], {"level_replication": "none"})
    assert list(out["ideal"]) == pytest.approx([300, 500, 700, 300, 700, 600])
    assert list(out["efficiency"]) == pytest.approx([1.0, 0.8, 0.5, 0.8, 0.4, 1.0])


def test_group_without_a_base_row_has_no_ideal() -> None:
    p = points()
    p = p[~((p["level_writes"] == "10") & (p["level_replication"] == "none"))]
    p = pd.concat(
        [
            p,
            pd.DataFrame(
                [{"servers": 3, "level_replication": "full", "level_writes": "10", "x": 1.0}]
            ),
        ],
        ignore_index=True,
    )
    out = ideal_linear(p, "x", "servers", ["level_writes"], {"level_replication": "none"})
    assert math.isnan(out["ideal"].iloc[-1])


def test_missing_column_is_named() -> None:
    with pytest.raises(KeyError, match="servers"):
        ideal_linear(points().drop(columns="servers"), "x", "servers", [], {})
