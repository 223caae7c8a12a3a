"""TCP loss counters of emulated hosts: what the links' token buckets dropped and what TCP did
about it, per network namespace.

A run samples them at its measurement's marks (with the CPU counters) and records the
difference in run.json's `network`. They show whether a run's slow requests waited for a
retransmission timeout: under the scale model the hosts' routes stretch the kernel's minimum
RTO (200 ms) to 200 / s ms (testbed.emulation.rto_min_ms), so a timeout costs the study's time
what it cost on the study's machines; before, it cost only 200 ms x s.

A link cap's token bucket sits on the sending host's own interface, so what it drops never
left that host: TCP sends a dropped data segment again from its zero-window probe timer (after
the RTO, then every 500 ms while the queue stays full), without counting a retransmission or
a timeout (measured: a server whose cap dropped 872 packets retransmitted none). After 15
such failed attempts in a row (tcp_retries2) TCP aborts the connection with ETIMEDOUT. A
dropped pure ACK is not sent again, and its peer may time out and resend what had
arrived (a spurious timeout, which the peer counts).

Counters (Linux `/proc/net/snmp`, `/proc/net/netstat`, `tc -s qdisc`):
- `retrans_segs`: segments retransmitted (Tcp RetransSegs);
- `rto_timeouts`: retransmission timer expirations (TcpExt TCPTimeouts), the stalls;
- `spurious_rtos`: timeouts found afterwards to have been needless (TcpExt TCPSpuriousRTOs);
- `loss_probes`: tail loss probes sent (TcpExt TCPLossProbes), the cheap recoveries;
- `aborts_on_timeout`: connections TCP gave up on (TcpExt TCPAbortOnTimeout);
- `qdisc_drops`: packets the host's egress qdiscs dropped (the link cap's token bucket).
"""

from __future__ import annotations

import itertools
import re
import subprocess
from collections.abc import Iterable, Mapping

FIELDS = {
    ("Tcp", "RetransSegs"): "retrans_segs",
    ("TcpExt", "TCPTimeouts"): "rto_timeouts",
    ("TcpExt", "TCPSpuriousRTOs"): "spurious_rtos",
    ("TcpExt", "TCPLossProbes"): "loss_probes",
    ("TcpExt", "TCPAbortOnTimeout"): "aborts_on_timeout",
}
COUNTERS = (*FIELDS.values(), "qdisc_drops")
_DROPPED = re.compile(r"\(dropped (\d+),")
_COMMAND = "cat /proc/net/snmp /proc/net/netstat; tc -s qdisc show"


class CountersError(Exception):
    """The counters of a namespace could not be read."""


def parse(text: str) -> dict[str, int]:
    """The counters in the output of `_COMMAND`: snmp-style header and value line pairs
    (`Tcp: RetransSegs ...` then `Tcp: 12 ...`), then tc's qdisc statistics."""
    out = dict.fromkeys(COUNTERS, 0)
    lines = text.splitlines()
    for head, values in itertools.pairwise(lines):
        if ":" not in head or ":" not in values:
            continue
        group, names = head.split(":", 1)
        group2, numbers = values.split(":", 1)
        if group != group2 or not names.split() or names.split()[0].lstrip("-").isdigit():
            continue
        for name, value in zip(names.split(), numbers.split(), strict=False):
            key = FIELDS.get((group, name))
            if key is not None:
                out[key] = int(value)
    out["qdisc_drops"] = sum(int(m) for m in _DROPPED.findall(text))
    return out


def sample(namespaces: Mapping[str, str], timeout_s: float = 20.0) -> dict[str, dict[str, int]]:
    """Counters per host, read in each host's namespace (`namespaces`: host -> netns), all
    namespaces at once."""
    procs = {
        host: subprocess.Popen(
            ["ip", "netns", "exec", ns, "sh", "-c", _COMMAND],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for host, ns in namespaces.items()
    }
    out: dict[str, dict[str, int]] = {}
    problems = []
    for host, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            problems.append(f"{host}: no answer in {timeout_s:g} s")
            continue
        if proc.returncode != 0:
            problems.append(f"{host}: {stderr.strip() or f'exit {proc.returncode}'}")
            continue
        out[host] = parse(stdout)
    if problems:
        raise CountersError("; ".join(problems))
    return out


def section(
    before: Mapping[str, Mapping[str, int]] | None,
    after: Mapping[str, Mapping[str, int]] | None,
    roles: Mapping[str, str],
) -> dict[str, object] | None:
    """run.json's `network`: per host the counters' increase between two samples, and their
    sums per role and in all; None without both samples."""
    if not before or not after:
        return None
    hosts = {
        h: {k: after[h][k] - before[h][k] for k in COUNTERS} for h in sorted(after) if h in before
    }
    by_role: dict[str, dict[str, int]] = {}
    for h, counts in hosts.items():
        role = by_role.setdefault(roles.get(h, "other"), dict.fromkeys(COUNTERS, 0))
        for k, v in counts.items():
            role[k] += v
    return {"hosts": hosts, "roles": by_role, "total": _sum(hosts.values())}


def _sum(rows: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total = dict.fromkeys(COUNTERS, 0)
    for row in rows:
        for k in COUNTERS:
            total[k] += row[k]
    return total
