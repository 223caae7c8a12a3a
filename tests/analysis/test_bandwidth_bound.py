"""Bandwidth bounds of multi-gets and replicated writes: bytes per link counted by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import validate
from analysis.models import linkbounds

ROOT = Path(__file__).resolve().parents[2]
# The multi-GET family of every committed reference dataset: real measurements in CI.
MULTIGET = sorted((ROOT / "data").glob("*/*/data/multiget"))

# 12-byte keys, 4096-byte values, counted character by character:
#   "VALUE kkkkkkkkkkkk 0 4096\r\n" = 27, + 4096 + "\r\n" = 4125 per value
#   "set kkkkkkkkkkkk 0 0 4096\r\n" = 27, + 4096 + "\r\n" = 4125
#   "get kkkkkkkkkkkk\r\n" = 18, "END\r\n" = 5, "STORED\r\n" = 8, "get\r\n" = 5
VALUE, SET, GET, END, STORED = 4125, 4125, 18, 5, 8


def test_sizes_of_a_multiget_split_over_three_servers() -> None:
    sizes = validate.message_sizes(4096, 12, multiget=6, parts=3)
    assert sizes["set_request"] == SET and sizes["set_reply"] == STORED
    assert sizes["get_request"] == GET and sizes["get_reply"] == VALUE + END
    # The client's request and reply: one get line of 6 keys, 6 values and one END.
    assert sizes["multiget_request"] == 5 + 6 * 13 == 83
    assert sizes["multiget_reply"] == 6 * VALUE + END == 24_755
    # Towards the servers: three get lines of two keys each, three replies with an END each.
    assert sizes["multiget_server_request"] == 3 * (5 + 2 * 13) == 93
    assert sizes["multiget_server_reply"] == 3 * (2 * VALUE + END) == 24_765
    whole = validate.message_sizes(4096, 12, multiget=6)
    assert whole["multiget_server_request"] == whole["multiget_request"] == 83
    assert whole["multiget_server_reply"] == whole["multiget_reply"] == 24_755


def test_sizes_reject_more_parts_than_keys() -> None:
    with pytest.raises(ValueError, match="parts"):
        validate.message_sizes(4096, 12, multiget=2, parts=3)


def test_set_share_counts_a_multiget_as_one_operation() -> None:
    # --ratio=1:6 --multi-key-get=6: one SET and one multi-get of six keys per cycle.
    assert validate.set_share("1:6", 6) == pytest.approx(0.5)
    assert validate.set_share("1:9", 9) == pytest.approx(0.5)
    # Seven keys in multi-gets of up to three: three multi-gets (3, 3 and 1 keys).
    assert validate.set_share("1:7", 3) == pytest.approx(0.25)
    assert validate.set_share("1:9", 0) == pytest.approx(0.1)
    assert validate.set_share("0:1") == 0.0
    with pytest.raises(ValueError, match="S:G"):
        validate.set_share("half")
    with pytest.raises(ValueError, match="at least one"):
        validate.set_share("0:0")


def test_bound_of_a_sharded_multiget_mix_per_link() -> None:
    # 3 clients, 2 middlewares, 3 servers; one SET (to all 3 servers) per multi-get of 6
    # keys sharded into 3 parts.
    sizes = validate.message_sizes(4096, 12, multiget=6, parts=3)
    caps = {"client": 10.0, "middleware": 40.0, "server": 5.0}
    bound = validate.bandwidth_bound(
        caps, {"client": 3, "middleware": 2, "server": 3}, sizes, 0.5, replication=3, servers=3
    )
    # Per operation, half a SET and half a multi-get leave each role:
    client = 0.5 * SET + 0.5 * 83
    middleware = 0.5 * STORED + 0.5 * 24_755 + 0.5 * 3 * SET + 0.5 * 93
    server = 0.5 * 3 * STORED + 0.5 * 24_765
    assert (client, middleware, server) == (2104.0, 18_615.5, 12_394.5)
    assert bound.per_role["client"] == pytest.approx(3 * 10e6 / 8 / client)
    assert bound.per_role["middleware"] == pytest.approx(2 * 40e6 / 8 / middleware)
    assert bound.per_role["server"] == pytest.approx(3 * 5e6 / 8 / server)
    assert bound.binding == "server"
    assert bound.bound == pytest.approx(151.2768, rel=1e-6)


def test_bound_without_middleware_reads_whole_replies() -> None:
    sizes = validate.message_sizes(4096, 12, multiget=3, parts=3)
    bound = validate.bandwidth_bound(
        {"client": 10.0, "server": 5.0}, {"client": 1, "server": 3}, sizes, 0.0,
        servers=3, via_middleware=False,
    )  # fmt: skip
    # The client asks one server for the three keys: one reply, one END.
    assert bound.per_role["server"] == pytest.approx(3 * 5e6 / 8 / (3 * VALUE + END))


def test_validation_bound_of_a_multiget_run() -> None:
    row = pd.Series(
        {
            "link_client_mbit": 10.0, "link_middleware_mbit": 40.0, "link_server_mbit": 5.0,
            "workload.key_size": 12, "workload.multiget": 6, "workload.data_size": 4096,
            "workload.ratio": "1:6", "middleware.replication": None,
            "middleware.sharded": True, "servers": 3, "middlewares": 2, "client_machines": 3,
        }
    )  # fmt: skip
    assert validate.run_bound(row) == pytest.approx(151.2768, rel=1e-6)
    whole = validate.run_bound(
        pd.concat([row.drop("middleware.sharded"), pd.Series({"middleware.sharded": False})])
    )
    # Non-sharded: one part, so fewer END lines from the servers and a higher bound.
    assert whole == pytest.approx(3 * 5e6 / 8 / (0.5 * 3 * STORED + 0.5 * 24_755))


def test_the_reference_data_hold_a_multiget_family() -> None:
    assert MULTIGET, "no committed dataset under data/ holds the multiget family"


@pytest.mark.parametrize("family", MULTIGET, ids=lambda p: "/".join(p.parts[-4:-2]))
def test_no_multiget_run_exceeds_its_bandwidth_bound(family: Path) -> None:
    runs = pd.read_parquet(family / "runs.parquet")
    manifests = pd.read_parquet(family / "manifests.parquet")
    windows = pd.read_parquet(family / "windows.parquet")
    table = validate.check_runs(runs, manifests, "multiget", windows)
    shares = table["bound_fraction"].dropna()
    assert len(shares) and shares.max() <= 1.0, table.loc[shares.idxmax(), "run"]


def test_a_capped_host_bounds_by_its_cap_not_by_iperf3() -> None:
    # The token bucket lets the cap through (headers included); iperf3's one stream reached
    # less, and a run's many connections can pass that: the bound is the cap's.
    row = pd.Series(
        {
            "host_kind": "emulated", "caps_mbit.server": 5.05, "caps_mbit.client": 10.05,
            "link_server_mbit": 4.84, "link_client_mbit": 9.61,
            "workload.key_size": None, "workload.multiget": 0, "workload.data_size": 4096,
            "workload.ratio": "0:1", "middleware.replication": None, "servers": 1,
            "middlewares": 0, "client_machines": 3,
        }
    )  # fmt: skip
    reply = 12 + 4096 + 17 + 5  # a VALUE line, the data and END for a 12-byte key
    assert linkbounds.bound_capacity_mbit(row, "server") == 5.05
    assert validate.run_bound(row) == pytest.approx(5.05e6 / 8 / reply)
    bound = validate.run_bandwidth_bound(row)
    assert bound is not None and bound.binding == "server"
    # Remote hosts have no cap the testbed enforces: what iperf3 measured bounds them.
    remote = row.copy()
    remote["host_kind"] = "remote"
    assert validate.run_bound(remote) == pytest.approx(4.84e6 / 8 / reply)
    # Local processes: neither a cap nor a measurement, no bound.
    local = row.drop(["link_server_mbit", "link_client_mbit"])
    local["host_kind"] = "local"
    assert np.isnan(validate.run_bound(local))
