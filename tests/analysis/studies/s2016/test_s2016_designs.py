"""Both middleware designs on the 2016 grid: figure, table, threads and numbers."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.studies.s2016 import designs


def raw_points() -> pd.DataFrame:
    rows = []
    for design, x, r in (("2016", 500.0, 4000.0), ("2018", 1000.0, 2000.0)):
        rows.append(
            {
                "point": f"d{design}",
                "side": "client",
                "type": "all",
                "servers": 3,
                "level_design": design,
                "level_replication": "none",
                "level_writes": "10",
                "middleware.workers": 16,
                "scale": 0.5,
                "throughput_ops_mean": x,
                "response_us_mean_mean": r,
            }
        )
    return pd.DataFrame(rows)


def pool_table() -> pd.DataFrame:
    rows = []
    busy_by_design = {"2016": (("read", 0.8), ("write", 0.3)), "2018": (("shared", 0.6),)}
    for design, pools in busy_by_design.items():
        for pool, busy in pools:
            rows.append(
                {
                    "run": f"d/d{design}/rep1",
                    "point": f"d{design}",
                    "repetition": 1,
                    "window": 1,
                    "start_ms": 0,
                    "end_ms": 1000,
                    "pool": pool,
                    "server": 0,
                    "threads": 4,
                    "busy_threads_mean": 4 * busy,
                    "queue_length_mean": 0.0,
                    "in_flight_mean": 0.0,
                    "completed": 1,
                }
            )
    return pd.DataFrame(rows)


RUNS = pd.DataFrame(
    {
        "run": ["d/d2016/rep1", "d/d2018/rep1"],
        "point": ["d2016", "d2018"],
        "status": "ok",
        "stable": True,
    }
)
MIDDLEWARES = pd.DataFrame(
    {
        "run": ["d/d2016/rep1", "d/d2018/rep1", "d/x/rep1"],
        "design": ["2016", "2018", "2016"],
        "threads_read": [48, 0, 1],
        "threads_write": [3, 0, 1],
    }
)


def test_the_table_sets_both_designs_side_by_side(saved: dict) -> None:
    table, numbers = designs.report(raw_points(), RUNS, pool_table(), MIDDLEWARES, "d.pdf")
    # Study time (s = 0.5): throughput twice, times half the raw ones.
    assert (
        r"3 & none & 10 & 1{,}000 & 2{,}000 & 50\,\% & 2.00 & 1.00 & read 0 & 80\,\% & 80\,\%"
        r" & 30\,\% & 60\,\% \\"
    ) in table
    assert numbers["SixteenDesignsConfigs"] == "1"
    assert numbers["SixteenDesignsWorkers"] == "16"
    assert (numbers["SixteenDesignsReadThreads"], numbers["SixteenDesignsWriteThreads"]) == (
        "48",
        "3",
    )
    # One configuration on both designs: the 2016 design reaches 50 % of the 2018 design's
    # throughput; its busiest pool is read pool 0, 80 % busy, and the shared pool 60 %.
    assert (numbers["SixteenDesignsCase"], numbers["SixteenDesignsBoth"]) == ("compared", "1")
    assert (numbers["SixteenDesignsRatioMean"], numbers["SixteenDesignsFaster"]) == (
        r"50\,\%",
        "0",
    )
    assert numbers["SixteenDesignsSixteenCase"] == "read"
    assert (numbers["SixteenDesignsSixteenTop"], numbers["SixteenDesignsSixteenTopBusy"]) == (
        "the read pool of the first server",
        r"80\,\%",
    )
    assert designs.pool_words("write 2") == "the write thread of the third server"
    assert numbers["SixteenDesignsSixteenTopConfig"] == r"\SixteenConfig{3}{none}{10}"
    assert numbers["SixteenDesignsSaturatedCase"] == "none"
    assert numbers["SixteenDesignsEighteenCase"] == "unsaturated"
    assert numbers["SixteenDesignsEighteenMean"] == r"60\,\%"


def grid(ratios: list[float], busiest: list[str | None], busy: list[float]) -> pd.DataFrame:
    """Configurations on both designs: the throughput ratio, the 2016 design's busiest pool
    and its busy fraction, which the 2018 design's shared pool shares."""
    return pd.DataFrame(
        [
            {"servers": 3 + 2 * i, "level_replication": "none" if i % 2 else "full",
             "level_writes": "10", "ratio": r, "busiest_2016": b,
             "busiest_fraction_2016": f, "busy_shared_2018": f}
            for i, (r, b, f) in enumerate(zip(ratios, busiest, busy, strict=True))
        ]
    )  # fmt: skip


def test_where_each_designs_bottleneck_sits() -> None:
    n = designs.comparison_numbers(grid([0.5, 1.6, 0.7], ["write 0", "read 1", "read 0"],
                                        [0.95, 0.5, 0.91]))  # fmt: skip
    assert (n["SixteenDesignsBoth"], n["SixteenDesignsFaster"]) == ("3", "1")
    assert (n["SixteenDesignsRatioLow"], n["SixteenDesignsRatioHigh"]) == (r"50\,\%", r"160\,\%")
    # A write thread is the busiest pool in 1 of 3 configurations and a read pool in 2.
    assert n["SixteenDesignsSixteenCase"] == "mixed"
    assert (n["SixteenDesignsSixteenWrites"], n["SixteenDesignsSixteenReads"]) == ("1", "2")
    assert n["SixteenDesignsSixteenTopConfig"] == r"\SixteenConfig{3}{full}{10}"
    # Saturated in two configurations: a write thread in one, a read pool in the other.
    assert (n["SixteenDesignsSaturatedCase"], n["SixteenDesignsSaturatedConfigs"]) == ("both", "2")
    assert (n["SixteenDesignsEighteenCase"], n["SixteenDesignsEighteenSaturated"]) == (
        "saturated",
        "2",
    )
    writes = designs.comparison_numbers(grid([0.5], ["write 2"], [0.95]))
    assert (writes["SixteenDesignsSixteenCase"], writes["SixteenDesignsSaturatedCase"]) == (
        "write",
        "write",
    )


def test_without_a_configuration_on_both_designs_nothing_is_compared() -> None:
    n = designs.comparison_numbers(grid([float("nan")], ["read 0"], [0.5]))
    assert n["SixteenDesignsCase"] == "uncompared"
    unmeasured = designs.comparison_numbers(grid([0.9], [None], [float("nan")]))
    assert unmeasured["SixteenDesignsSixteenCase"] == "unmeasured"
    assert unmeasured["SixteenDesignsEighteenCase"] == "unmeasured"


def test_threads_come_from_each_designs_first_ok_run() -> None:
    threads = designs.design_threads(MIDDLEWARES, {"d/x/rep1", "d/d2018/rep1"})
    assert threads.loc["2016", "threads_read"] == 1
    both = designs.design_threads(MIDDLEWARES, set(MIDDLEWARES["run"]))
    assert both["threads_read"].to_dict() == {"2016": 48, "2018": 0}


def test_the_figure_has_a_bar_per_design_and_configuration(saved: dict) -> None:
    cmp = designs.comparison(raw_points(), pool_table(), set(RUNS["run"]))
    designs.figure(cmp, "d.pdf")
    throughput, response = saved["d.pdf"].axes
    heights = [[b.get_height() for b in c] for c in throughput.containers]
    assert heights == [[500.0], [1000.0]]  # 2016, then 2018
    assert [t.get_text() for t in throughput.get_legend().get_texts()] == list(
        designs.LABEL.values()
    )
    assert response.containers[0][0].get_height() == pytest.approx(4.0)  # ms
