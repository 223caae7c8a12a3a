"""Clients nobody here wrote, talking to real memcached servers through the middleware."""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import pytest
from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheClientError

# Socket timeouts are hang guards only: a loaded machine may be slow, never wrong.
TIMEOUT_S = 60


def direct(port: int) -> Client:
    return Client(("127.0.0.1", port), connect_timeout=TIMEOUT_S, timeout=TIMEOUT_S)


def totals(deployment) -> dict[str, dict[str, int]]:
    """The middleware's statistics after a clean SIGTERM, checked against its windows."""
    assert deployment.terminate() == 0
    summary = json.loads((deployment.stats_dir / "summary.json").read_text())
    assert summary["clean_shutdown"] is True
    with (deployment.stats_dir / "windows.csv").open() as f:
        rows = list(csv.DictReader(f))
    for kind, total in summary["totals"].items():
        assert sum(int(r["count"]) for r in rows if r["type"] == kind) == total["count"], kind
    return summary["totals"]


def batch_sizes(deployment) -> dict[int, int]:
    """Worker turns by the number of requests taken in the turn, after `totals`, as the
    middleware counts them (design 2018; design 2016 counts none). Its reported `max_batch`
    is the one the deployment asked for."""
    summary = json.loads((deployment.stats_dir / "summary.json").read_text())
    assert summary["config"]["max_batch"] == (deployment.max_batch or 1), summary["config"]
    turns = {int(size): n for size, n in summary["batch_sizes"].items()}
    if summary["design"] == "2018":
        # Every request a worker served was taken in one of the counted turns.
        served = sum(t["count"] for t in summary["totals"].values())
        assert sum(size * n for size, n in turns.items()) == served, (turns, served)
    else:
        assert turns == {}, turns
    return turns


@pytest.mark.timeout(120)
def test_pymemcache_set_get_and_get_many(deployment) -> None:
    c = direct(deployment.port)
    assert c.set("alpha", b"1", noreply=False) is True
    c.set("beta", b"\x00\r\n\xff binary", noreply=True)  # pymemcache's default style
    assert c.set_many({f"k{i}": str(i).encode() for i in range(20)}, noreply=False) == []
    assert c.get("alpha") == b"1"
    assert c.get("beta") == b"\x00\r\n\xff binary"
    assert c.get("absent") is None
    keys = ["k3", "absent", "k1", "alpha", "k19"]
    assert c.get_many(keys) == {"k3": b"3", "k1": b"1", "alpha": b"1", "k19": b"19"}
    # Replication 2: both servers hold every value.
    for port in deployment.servers:
        assert direct(port).get("beta") == b"\x00\r\n\xff binary"
    # The middleware counted what this client sent: 22 SETs, 3 GETs, one 5-key GET.
    seen = totals(deployment)
    assert seen["set"]["count"] == 22
    assert seen["get"]["count"] == 3
    assert (seen["multiget"]["count"], seen["multiget"]["keys_requested"]) == (1, 5)
    assert seen["multiget"]["values_returned"] == 4


@pytest.mark.timeout(120)
def test_pymemcache_sees_memcached_errors_and_keeps_the_connection(
    deployment,
) -> None:
    c = direct(deployment.port)
    with pytest.raises(MemcacheClientError, match="value too large"):
        c.set("huge", b"x" * (1024 * 1024 + 1), noreply=False)
    assert c.set("after", b"ok", noreply=False) is True
    assert c.get("after") == b"ok"
    assert c.get("huge") is None


@pytest.mark.timeout(120)
def test_memccp_and_memccat_round_trip_files(deployment, tmp_path: Path) -> None:
    files = []
    for i in range(3):
        files.append(tmp_path / f"payload{i}.bin")
        files[-1].write_bytes(bytes(range(256)) * (40 + i))
    servers = f"--servers={deployment.address}"
    subprocess.run(["memccp", servers, *map(str, files)], check=True, timeout=TIMEOUT_S)
    out = subprocess.run(
        ["memccat", servers, *(f.name for f in files)],
        check=True,
        capture_output=True,
        timeout=TIMEOUT_S,
    ).stdout
    # memccat ends each value with a newline.
    assert out == b"".join(f.read_bytes() + b"\n" for f in files)
    # One SET per file copied, one GET per file read, each value found.
    seen = totals(deployment)
    assert seen["set"]["count"] == len(files)
    assert seen["get"]["count"] == len(files)
    assert seen["get"]["values_returned"] == len(files)


CONNECTIONS = 8
# A fixed number of operations, not a run time: the counts then do not depend on the
# machine's speed (memcaslap's default mix is 90 % gets).
OPERATIONS = 20_000


def memcaslap(deployment, *extra: str) -> dict[str, int]:
    cmd = [
        "memcaslap",
        "-s",
        deployment.address,
        "-x",
        str(OPERATIONS),
        "-T",
        "1",
        "-c",
        str(CONNECTIONS),
    ]
    cmd += ["--verify=1.0", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    counters = dict(re.findall(r"^(\w+): (\d+)$", out, re.M))
    assert "verify_failed" in counters, out
    return {k: int(v) for k, v in counters.items()}


def in_flight(client: int, middleware: int, most: int) -> None:
    """memcaslap counts a request when it sends it; the middleware when it has answered.
    They differ by what was in flight when memcaslap stopped: at most `most`."""
    assert 0 <= client - middleware <= most, (client, middleware)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("deployment", ["2018", "2016"], indirect=True)
def test_memcaslap_verifies_every_value(deployment) -> None:
    single = memcaslap(deployment)
    assert single["cmd_get"] >= OPERATIONS // 2
    assert single["verify_failed"] == 0
    assert single["verify_misses"] == 0
    multi = memcaslap(deployment, "--division=4")  # sharded 4-key gets
    assert multi["cmd_get"] >= OPERATIONS // 2
    assert multi["verify_failed"] == 0

    # The middleware's statistics agree with what memcaslap did (it counts keys, not
    # requests, for multi-gets), and SIGTERM ends cleanly.
    seen = totals(deployment)
    in_flight(single["cmd_set"] + multi["cmd_set"], seen["set"]["count"], 2 * CONNECTIONS)
    in_flight(single["cmd_get"], seen["get"]["count"], CONNECTIONS)
    in_flight(multi["cmd_get"], seen["multiget"]["keys_requested"], 4 * CONNECTIONS)
    # Gets of up to 4 keys (memcaslap sends what is left of a division when it runs out).
    multigets, keys = seen["multiget"]["count"], seen["multiget"]["keys_requested"]
    assert keys / 4 <= multigets < keys / 2, (multigets, keys)
    assert seen["get"]["values_returned"] == seen["get"]["count"]
    assert seen["multiget"]["values_returned"] == seen["multiget"]["keys_requested"]
    # Batching workers took several requests in one turn: eight connections outrun four
    # workers often enough in 40,000 requests. Without it, every turn is one request.
    turns = batch_sizes(deployment)
    if deployment.max_batch is None:
        assert set(turns) <= {1}, turns
    else:
        assert max(turns) > 1, turns
        assert max(turns) <= deployment.max_batch, turns
