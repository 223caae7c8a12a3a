"""The write-ratio family on hand-made points: throughput changes against the base case
beside the original's Table 4, scaling against the ideal, and the trends per type."""

from __future__ import annotations

import pandas as pd

from analysis.studies.s2016 import writes

# Raw client throughput of all requests per (replication, % writes), at S = 3 and s = 0.5.
ALL = {("none", "1"): 1000.0, ("none", "10"): 900.0, ("full", "1"): 800.0, ("full", "10"): 600.0}


def raw_points() -> pd.DataFrame:
    rows = []
    for (r, w), x in ALL.items():
        common = {
            "point": f"s3-{r}-{w}",
            "servers": 3,
            "level_replication": r,
            "level_writes": w,
            "clients_total": 261,
            "middleware.workers": 24,
            "scale": 0.5,
        }
        share = float(w) / 100
        for kind, value in (("all", x), ("set", x * share), ("get", x * (1 - share))):
            rows.append(
                {
                    **common,
                    "side": "client",
                    "type": kind,
                    "throughput_ops_mean": value,
                    "throughput_ops_ci_low": value,
                    "throughput_ops_ci_high": value,
                }
            )
    return pd.DataFrame(rows)


def client_all() -> pd.DataFrame:
    p = raw_points()
    return p[p["type"] == "all"]


def test_changes_against_the_same_configuration_and_the_base(ref: dict) -> None:
    client, lowest = writes.changes(client_all(), ref["writes_change_percent"])
    assert lowest == "1"
    got = client.set_index(["level_replication", "level_writes"])
    assert got.loc[("full", "10"), "same"] == -25.0  # against full replication at 1 %
    assert got.loc[("full", "10"), "global"] == -40.0  # against S = 3, none, 1 %
    assert got.loc[("none", "1"), ["same", "global"]].tolist() == [0.0, 0.0]


def test_the_change_table_keeps_the_originals_rows(ref: dict) -> None:
    block = ref["writes_change_percent"]
    client, _ = writes.changes(client_all(), block)
    lines = writes.change_table(client, block).splitlines()
    assert r"3 & none & 0.0 & 0.0 & 0.0 & -- & -- & -6.4 & -10.0 & -10.0 & -10.9 \\" in lines
    # A configuration only the original ran: its values beside our dashes.
    assert r"5 & full & -- & -- & -10.3 & -- & -- & -20.7 & -- & -- & -23.3 \\" in lines
    body = [ln for ln in lines if ln[:1].isdigit()]
    assert [ln[:9] for ln in body[:3]] == ["3 & none ", "3 & full ", "5 & none "]


def test_the_change_furthest_from_zero(ref: dict) -> None:
    client, lowest = writes.changes(client_all(), ref["writes_change_percent"])
    assert writes.worst_numbers(client, lowest) == {
        "SixteenWritesWorstCase": "changed",
        "SixteenWritesWorstChange": "-25.0",
        "SixteenWritesWorstServers": "3",
        "SixteenWritesWorstReplication": "full",
        "SixteenWritesWorstWrites": "10",
    }
    one = client[client["level_writes"] == "1"]
    assert writes.worst_numbers(one, "1")["SixteenWritesWorstCase"] == "untested"


SCALED = pd.DataFrame(
    [
        ("set", 3, "none", 100.0),
        ("set", 6, "none", 150.0),
        ("set", 6, "full", 100.0),
        ("get", 3, "none", 1000.0),
        ("get", 6, "none", 1700.0),
    ],
    columns=["type", "servers", "level_replication", "throughput_ops_mean"],
).assign(level_writes="1")


def test_scalability_against_the_ideal_linear_in_servers(ref: dict) -> None:
    text, scaled = writes.scalability_table(SCALED)
    # Ideal at S = 6: twice the S = 3 throughput without replication.
    assert r"6 & none & 1 & 150 & 200 & 75\,\% & 1{,}700 & 2{,}000 & 85\,\% \\" in text
    assert r"6 & full & 1 & 100 & 200 & 50\,\% & -- & -- & -- \\" in text
    n = writes.scalability_numbers(scaled, ref["scalability"])
    assert n["SixteenOrigScalingSection"] == "§2.3"
    # At S = 6 (ideal: 6/3 times the throughput at S = 3 without replication), 80 % of the
    # ideal without replication and 50 % with full replication.
    assert (n["SixteenScalingCase"], n["SixteenScalingAboveCase"]) == ("several", "within")
    assert (n["SixteenScalingServersLow"], n["SixteenScalingServersHigh"]) == ("3", "6")
    assert n["SixteenScalingItems"] == (
        r"\SixteenScalingItem{80\,\%}{none} and \SixteenScalingItem{50\,\%}{full}"
    )
    empty_text, empty = writes.scalability_table(SCALED.iloc[0:0])
    assert "no data" in empty_text and empty.empty
    nothing = writes.scalability_numbers(empty, ref["scalability"])
    assert (nothing["SixteenScalingCase"], nothing["SixteenScalingItems"]) == ("empty", "")


def test_a_share_above_the_ideal_is_explained(ref: dict) -> None:
    above = SCALED.copy()
    above.loc[above["level_replication"] == "full", "throughput_ops_mean"] = 400.0
    _, scaled = writes.scalability_table(above)
    n = writes.scalability_numbers(scaled, ref["scalability"])
    assert n["SixteenScalingAboveCase"] == "above"
    assert n["SixteenScalingItems"].endswith(r"\SixteenScalingItem{200\,\%}{full}")


def test_a_single_server_count_tests_only_replications_cost(ref: dict) -> None:
    _, scaled = writes.scalability_table(SCALED[SCALED["servers"] == 3])
    n = writes.scalability_numbers(scaled, ref["scalability"])
    assert (n["SixteenScalingCase"], n["SixteenScalingServersLow"]) == ("single", "3")
    assert n["SixteenScalingItems"] == r"\SixteenScalingItem{100\,\%}{none}"


def test_sets_rise_and_gets_fall_with_the_share_of_writes() -> None:
    p = raw_points()
    n = writes.type_numbers(p[p["type"] != "all"])
    # From 1 % to 10 % writes, set throughput rises in 2 of 2 configurations of S and R and
    # get throughput falls in 2 of 2.
    assert n == {
        "SixteenWritesTypeCase": "tested",
        "SixteenWritesTypeLow": "1",
        "SixteenWritesTypeHigh": "10",
        "SixteenWritesSetRises": "2",
        "SixteenWritesSetConfigs": "2",
        "SixteenWritesGetFalls": "2",
        "SixteenWritesGetConfigs": "2",
    }
    single = writes.type_numbers(p[(p["type"] != "all") & (p["level_writes"] == "1")])
    assert single["SixteenWritesTypeCase"] == "untested"


def requests_and_runs(p: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One timed set of 100 µs per point, in an ok run."""
    requests = pd.DataFrame(
        [
            {
                "run": f"w/{pt}/rep1",
                "point": pt,
                "repetition": 1,
                "pool": "write",
                "type": "set",
                "count": 2,
                **{
                    f"{m}_us_{q}": 100.0
                    for m in ("queue", "server", "response")
                    for q in ("mean", "p50", "p90", "p99")
                },
                "queue_us_var": 0.0,
                "server_us_var": 0.0,
                "response_us_var": 0.0,
            }
            for pt in p["point"].unique()
        ]
    )
    # Per run the clients' counts: 1 % writes counted no set (memaslap's burst fell outside
    # the measured windows), 10 % writes counted its share.
    runs = pd.DataFrame(
        [
            {
                "run": f"w/{pt}/rep1",
                "point": pt,
                "status": "ok",
                "stable": True,
                "side": "client",
                "type": kind,
                "count": count,
                "workload.ratio": "1:99" if pt.endswith("-1") else "1:9",
            }
            for pt in p["point"].unique()
            for kind, count in (("set", 0 if pt.endswith("-1") else 100), ("get", 900))
        ]
    )
    return requests, runs


def test_queue_times_per_type_beside_the_originals_tables(ref: dict) -> None:
    p = raw_points()
    requests, runs = requests_and_runs(p)
    times = writes.times_tables(p, runs, requests, ref)
    assert "time in the queue, no replication (orig.: Table 5)" in times["set"]
    assert "time in the queue, full replication (orig.: Table 6)" in times["set"]
    # Ours at S = 3 (1 and 10 %), the original's at 1, 5 and 10 %.
    assert r"3 & 0.100 & 0.100 & 0.020 & 0.018 & 0.100 & 0.100 & 0.018 \\" in times["set"]
    assert "orig." not in times["get"]


def test_the_report_numbers(ref: dict, saved: dict) -> None:
    p = raw_points()
    requests, runs = requests_and_runs(p)
    tables = {"points": p, "runs": runs, "pool_requests": requests}
    report = writes.report(tables, ref, "writes.pdf")
    n = report.numbers
    assert list(n)[:2] == ["SixteenOrigWritesServers", "SixteenOrigWritesWrites"]
    assert (n["SixteenWritesLevels"], n["SixteenWritesBase"], n["SixteenWritesPoints"]) == (
        "1, 10",
        "1",
        "4",
    )
    assert (n["SixteenWritesWorstReplication"], n["SixteenWritesWorstWrites"]) == ("full", "10")
    assert n["SixteenOrigWritesTable"] == "Table 4"
    # The lowest share of writes, as the clients counted it: both 1 % runs saw no set.
    assert (n["SixteenWritesMixPlanned"], n["SixteenWritesMixRuns"]) == ("1", "2")
    assert (n["SixteenWritesMixNoSet"], n["SixteenWritesMixShare"]) == ("2", "0.00\\,\\%")
    assert "3 & none & 0.0" in report.tex["table"] and "3 & full & 1" in report.tex["scalability"]
    # The sets' 100 µs in the study's time (s = 0.5).
    assert r"3 & 0.050 & 0.050 & 0.020" in report.tex["times_set"]
    assert [ax.get_title() for ax in saved["writes.pdf"].axes] == ["all requests", "sets", "gets"]
