"""Network counters of emulated hosts: parsing, and a real overflowing link cap."""

from __future__ import annotations

import pytest

from testbed import netcounters
from testbed.point import Point
from testbed.run import RunOptions, run_point

from .conftest import no_leftovers

# /proc/net/snmp and /proc/net/netstat excerpts (Linux 6.x) and `tc -s qdisc show` output.
SAMPLE = """\
Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 22187
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn InSegs OutSegs RetransSegs InErrs
Tcp: 1 200 120000 -1 20211 21904 57 0
Udp: InDatagrams NoPorts
Udp: 5 0
TcpExt: SyncookiesSent TCPTimeouts TCPSpuriousRTOs TCPLossProbes TCPAbortOnTimeout
TcpExt: 0 9 4 14 1
IpExt: InNoRoutes InTruncatedPkts
IpExt: 0 0
qdisc tbf 8001: dev mwn0 root refcnt 2 rate 10Mbit burst 16Kb lat 50ms
 Sent 9120 bytes 120 pkt (dropped 33, overlimits 71 requeues 0)
 backlog 0b 0p requeues 0
qdisc noqueue 0: dev lo root refcnt 2
 Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)
"""


def test_the_counters_are_read_from_snmp_netstat_and_tc():
    assert netcounters.parse(SAMPLE) == {
        "retrans_segs": 57,
        "rto_timeouts": 9,
        "spurious_rtos": 4,
        "loss_probes": 14,
        "aborts_on_timeout": 1,
        "qdisc_drops": 33,
    }


def test_the_section_is_the_increase_per_host_role_and_in_all():
    zero = dict.fromkeys(netcounters.COUNTERS, 0)
    before = {"server1": zero, "client1": zero}
    after = {
        "server1": {**zero, "qdisc_drops": 5, "retrans_segs": 4},
        "client1": {**zero, "retrans_segs": 1},
    }
    s = netcounters.section(before, after, {"server1": "server", "client1": "client"})
    assert s is not None
    assert s["hosts"]["server1"]["qdisc_drops"] == 5
    assert s["roles"]["client"]["retrans_segs"] == 1
    assert s["total"]["retrans_segs"] == 5
    assert netcounters.section(None, after, {}) is None


@pytest.mark.netns
@pytest.mark.timeout(300)
def test_an_overflowing_link_cap_shows_as_drops_and_retransmissions(
    tmp_path, base_port, netns_prefix, loadgen_jar
):
    # 64 connections read 4 KB values through a 1 Mbit/s server link whose token bucket holds
    # 50 ms (about 6 KB): the packets in flight cannot all wait, so some are dropped, and
    # TCP resends (testbed/netcounters.py says which side counts what).
    point = Point.model_validate(
        {
            "name": "net",
            "hosts": "emulated",
            "servers": 1,
            "client_machines": 1,
            "threads": 2,
            "virtual_clients": 32,
            "driver": "builtin",
            "workload": {"ratio": "0:1", "data_size": 4096, "key_maximum": 200},
            "caps_mbit": {"server": 1},
            "duration_s": 4,
        }
    )
    opts = RunOptions(
        out=tmp_path / "run",
        base_port=base_port,
        progress=False,
        netns_prefix=netns_prefix,
        linkcap_cache=tmp_path / "linkcap.json",
    )
    manifest = run_point(point, opts)
    no_leftovers(netns_prefix)
    assert manifest["status"] == "ok", manifest["error"]
    net = manifest["network"]
    assert set(net["hosts"]) == {"server1", "client1"}
    assert net["roles"]["server"]["qdisc_drops"] > 0, net
    assert net["total"]["retrans_segs"] > 0, net
    assert net["total"]["retrans_segs"] == sum(h["retrans_segs"] for h in net["hosts"].values())
