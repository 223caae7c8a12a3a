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


def direct(port: int) -> Client:
    return Client(("127.0.0.1", port), connect_timeout=5, timeout=5)


@pytest.mark.timeout(60)
def test_pymemcache_set_get_and_get_many(deployment) -> None:
    c = Client(("127.0.0.1", deployment.port), connect_timeout=5, timeout=5)
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


@pytest.mark.timeout(60)
def test_pymemcache_sees_memcached_errors_and_keeps_the_connection(
    deployment,
) -> None:
    c = Client(("127.0.0.1", deployment.port), connect_timeout=5, timeout=5)
    with pytest.raises(MemcacheClientError, match="value too large"):
        c.set("huge", b"x" * (1024 * 1024 + 1), noreply=False)
    assert c.set("after", b"ok", noreply=False) is True
    assert c.get("after") == b"ok"
    assert c.get("huge") is None


@pytest.mark.timeout(60)
def test_memccp_and_memccat_round_trip_a_file(deployment, tmp_path: Path) -> None:
    data = tmp_path / "payload.bin"
    data.write_bytes(bytes(range(256)) * 40)
    servers = f"--servers={deployment.address}"
    subprocess.run(["memccp", servers, str(data)], check=True, timeout=30)
    out = subprocess.run(
        ["memccat", servers, "payload.bin"], check=True, capture_output=True, timeout=30
    ).stdout
    assert out == data.read_bytes() + b"\n"  # memccat ends each value with a newline


def memcaslap(deployment, *extra: str) -> dict[str, int]:
    cmd = ["memcaslap", "-s", deployment.address, "-t", "3s", "-T", "1", "-c", "8"]
    cmd += ["--verify=1.0", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=90).stdout
    counters = dict(re.findall(r"^(\w+): (\d+)$", out, re.M))
    assert "verify_failed" in counters, out
    return {k: int(v) for k, v in counters.items()}


@pytest.mark.timeout(120)
def test_memcaslap_verifies_every_value(deployment) -> None:
    single = memcaslap(deployment)
    assert single["cmd_get"] > 1000
    assert single["verify_failed"] == 0
    assert single["verify_misses"] == 0
    multi = memcaslap(deployment, "--division=4")  # sharded 4-key gets
    assert multi["cmd_get"] > 1000
    assert multi["verify_failed"] == 0

    # The statistics agree with what the clients did, and SIGTERM ends cleanly.
    assert deployment.terminate() == 0
    summary = json.loads((deployment.stats_dir / "summary.json").read_text())
    assert summary["clean_shutdown"] is True
    assert summary["totals"]["multiget"]["count"] > 0
    with (deployment.stats_dir / "windows.csv").open() as f:
        rows = list(csv.DictReader(f))
    counted = sum(int(r["count"]) for r in rows)
    assert counted == sum(t["count"] for t in summary["totals"].values())
    assert {r["type"] for r in rows} == {"set", "get", "multiget"}
