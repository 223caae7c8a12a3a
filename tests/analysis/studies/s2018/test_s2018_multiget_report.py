"""The multi-GET section (analysis.studies.s2018.multiget_report) on the small multiget family
of conftest.py (measured at s = 0.5), beside the study's values."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis import linkload
from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2018 import multiget as mg
from analysis.studies.s2018 import multiget_report as mr

Family = dict[str, pd.DataFrame]


def tbf_args(rate_mbit: float, scale: float) -> list[str]:
    """The emulation's tbf arguments: a queue of 50 ms of the study's time."""
    return ["tbf", "rate", f"{rate_mbit}mbit", "latency", f"{50 / scale:g}ms"]


def macros(numbers: list[str]) -> dict[str, str]:
    """Macro name -> value."""
    out = {}
    for line in "".join(numbers).splitlines():
        name, value = line.removeprefix("\\newcommand{\\").split("}{", 1)
        out[name] = value.removesuffix("}")
    return out


@pytest.fixture
def section(multiget_family: Family, reference2018: dict, tmp_path: Path) -> mr.Multiget:
    f = multiget_family
    figures = mr.Figures(*(str(tmp_path / f"{n}.pdf") for n in mr.Figures._fields))
    return mr.report(
        f["points"], f["histograms"], f["windows"], f["manifests"], f["runs"],
        reference2018["multiget"], figures, tbf_args, lambda scale: 400.0,
    )  # fmt: skip


def test_split_macros_at_the_largest_size() -> None:
    split = pd.DataFrame(
        {"sharding": ["sharded", "sharded"], "size": [1, 6], "server_us_mean": [800.0, 4800.0],
         "server_us_mean_share": [0.8, 0.9], "queue_us_mean_share": [0.02, 0.01]}
    )  # fmt: skip
    m = macros(mr.split_macros(split, [1, 6]))
    assert m["MgetServerShareMin"] == "80.0\\,\\%" and m["MgetQueueShareMax"] == "2.0\\,\\%"
    assert m["MgetShardedLargestServerMs"] == "4.80"
    assert m["MgetLargestSize"] == "6"
    # As the study reads it: the servers take most of the time, the queue next to none.
    assert m["MgetSplitCase"] == "holds" and m["MgetSplitLeastSharding"] == fg.MISSING
    # Where the servers do not take most of it, the text names the point.
    low = macros(mr.split_macros(split.assign(server_us_mean_share=[0.8, 0.3]), [1, 6]))
    assert low["MgetSplitCase"] == "fails"
    assert (low["MgetSplitLeastSharding"], low["MgetSplitLeastSize"]) == ("sharded", "6")
    assert list(macros(mr.split_macros(split.iloc[0:0], [1]))) == [
        "MgetSplitCase",
        "MgetSplitLeastSharding",
        "MgetSplitLeastSize",
        "MgetLargestSize",
    ]
    assert macros(mr.split_macros(split.iloc[0:0], [1]))["MgetSplitCase"] == "none"


def test_verdict_items_one_per_split_of_sizes() -> None:
    verdicts = [
        mg.Verdict("mean", "the mean response time", (3, 6), (), (1,)),
        mg.Verdict("p50", "the median", (3, 6), (), (1,)),
        mg.Verdict("p99", "the 99th percentile", (3,), (6,), (1,)),
        mg.Verdict("keys_per_s", "the keys per second", (1, 3, 6), (), ()),
    ]
    assert mr.verdict_items(verdicts) == (
        "\\MgetVerdict{first}{many}{mixed}{the mean response time and the median}{3 and 6}{}{1} "
        "\\MgetVerdict{next}{one}{mixed}{the 99th percentile}{3}{6}{1} "
        "\\MgetVerdict{next}{one}{improves}{the keys per second}{1, 3 and 6}{}{}"
    )


def test_link_macros_from_the_emulations_queue_and_rto(multiget_family: Family) -> None:
    raw = multiget_family["points"]
    m = macros(mr.link_macros(raw, tbf_args, lambda scale: None))
    assert m["MgetTbfLatencyMs"] == "100"  # 50 ms of the study's time at s = 0.5
    assert m["MgetTbfValues"] == fg.num(mg.queue_values(5.0, 100.0, 4096))
    # Without a dilated RTO on the routes the kernel's 200 ms applies.
    assert m["MgetRtoMs"] == "200" and m["MgetRtoStudyMs"] == "100.0"
    assert m["MgetScale"] == "0.50"
    assert m["MgetReadBalance"] == "as the one with the fewest outstanding requests"
    sharded_six = raw[(raw["point"] == "sharded-6") & (raw["side"] == "client")]
    sets, gets, keys = linkload.point_rates(sharded_six)
    util = linkload.utilisation(sharded_six.iloc[0].to_dict(), sets, gets, keys)["server"]
    assert m["MgetServerLinkMax"] == fg.pct(util, 0)


def test_keys_table_in_the_study_time_beside_the_study(
    multiget_family: Family, reference2018: dict
) -> None:
    raw = multiget_family["points"]
    pts = in_study_time(raw)
    agg = pd.DataFrame(
        {"side": ["client"], "sharding": ["sharded"], "size": [6], "p50_mean": [500.0],
         "p90_mean": [1000.0], "p99_mean": [2000.0]}
    )  # fmt: skip
    tex, numbers = mr.keys_table(pts, raw, agg, [1, 6], reference2018["multiget"])
    # R 6 ms * 0.5; 100 requests/s / 0.5 of 6 keys each; raw 600; the study's 8634 keys/s.
    assert "sharded & 6 & 3.00 & 0.50 & 1.00 & 2.00 & 1{,}200 & 600 & 8{,}634 \\\\" in tex
    assert "non-sharded & 1 & 0.60 & -- & -- & -- & 200 & 100 & 2{,}868 \\\\" in tex
    assert macros(numbers)["MgetNonShardedSixMs"] == "3.60"


def test_report_macros_and_table(section: mr.Multiget, tmp_path: Path) -> None:
    assert all((tmp_path / f"{n}.pdf").stat().st_size > 0 for n in mr.Figures._fields)
    m = macros([section.numbers])
    assert m["MgetSizes"] == "1, 6" and m["MgetHistSize"] == "6"
    # Client tails at six keys: p99 / p50 = 2 / 0.5 ms sharded, 4 / 0.5 non-sharded.
    assert m["MgetShardedTailRatio"] == "4.0" and m["MgetNonShardedTailRatio"] == "8.0"
    assert m["MgetShardedHistMedianMs"] == "0.50"
    assert m["MgetNonShardedHistNinetyNinthMs"] == "4.00"
    # The text prints the table's percentiles of the same configuration, not other ones.
    for sharding, word in (("sharded", "Sharded"), ("non-sharded", "NonSharded")):
        (row,) = [r for r in section.table.splitlines() if r.startswith(f"{sharding} & 6 &")]
        cells = [c.strip() for c in row.rstrip("\\ ").split("&")]
        assert (cells[3], cells[5]) == (m[f"Mget{word}HistMedianMs"],
                                        m[f"Mget{word}HistNinetyNinthMs"])  # fmt: skip
    # Six keys: sharded 3.0 ms, non-sharded 3.6 ms; the study saw non-sharded 1 ms lower.
    assert m["MgetGapSixMs"] == "-0.60" and m["MgetStudyGapSixMs"] == "1"
    assert m["MgetRtoMs"] == "400" and m["MgetRtoStudyMs"] == "200.0"
    # The manifests' retransmission timeouts at six keys, per 1000 client requests.
    assert m["MgetShardedRtoPerThousand"] == "2.0" and m["MgetNonShardedRtoPerThousand"] == "0.5"
    assert m["MgetShardedDropsPerThousand"] == "4.0"
    # Fewer than the 10 requests per 1000 beyond the 99th percentile.
    assert m["MgetRtoCase"] == "few"
    assert m["MgetTailPerThousand"] == "10"
    # p99 / p50 is 4 sharded and 8 non-sharded: the non-sharded tail is the longer.
    assert m["MgetTailCase"] == "nonsharded"
    assert m["MgetHistOverflowMax"] == "0.0\\,\\%"
    assert "sharded & 6 & 3.00 & " in section.table
    names = list(m)
    assert names[0] == "MgetSplitCase" and names[-2:] == ["MgetStudySource", "MgetSizes"]


def test_the_tails_in_the_text_are_the_tables_of_the_same_point(
    multiget_family: Family, reference2018: dict, tmp_path: Path
) -> None:
    # A second repetition of sharded-6 whose requests all took 3 ms: the runs' mean 99th
    # percentile (3.5 ms, 1.75 in the study's time at s = 0.5) differs from the pooled
    # histogram's (4 ms).
    f = dict(multiget_family)
    hist = f["histograms"]
    extra = hist[hist["run"] == "run-sharded-6"].assign(run="run-sharded-6-b")
    extra = extra[extra["side"] == "middleware"]
    client = pd.DataFrame([{"run": "run-sharded-6-b", "point": "sharded-6", "type": "multiget",
                            "side": "client", "window": -1, "bucket_us": 3000.0,
                            "count": 100}])  # fmt: skip
    f["histograms"] = pd.concat([hist, extra, client], ignore_index=True)
    f["windows"] = pd.concat(
        [
            f["windows"],
            pd.DataFrame([{"run": "run-sharded-6-b", "side": "middleware", "window": 0}]),
        ]
    )
    figures = mr.Figures(*(str(tmp_path / f"{n}.pdf") for n in mr.Figures._fields))
    section = mr.report(
        f["points"], f["histograms"], f["windows"], f["manifests"], f["runs"],
        reference2018["multiget"], figures, tbf_args, lambda scale: 400.0,
    )  # fmt: skip
    m = macros([section.numbers])
    (row,) = [r for r in section.table.splitlines() if r.startswith("sharded & 6 &")]
    cells = [c.strip() for c in row.rstrip("\\ ").split("&")]
    assert cells[5] == m["MgetShardedHistNinetyNinthMs"] == "1.75"
    assert cells[3] == m["MgetShardedHistMedianMs"]
