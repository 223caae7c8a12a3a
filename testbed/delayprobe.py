"""Round-trip probes run inside an emulated host: `python -m testbed.delayprobe KIND ADDR ...`.

KIND `icmp`: echo requests over a raw socket (needs root; no ping binary needed). KIND
`memcached`: `version` requests over one TCP connection, one at a time. Prints one JSON line,
the round-trip times in microseconds, in the order taken.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time

_ICMP_ECHO, _ICMP_REPLY = 8, 0


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def icmp_rtts(address: str, samples: int, gap_s: float, timeout_s: float = 5.0) -> list[float]:
    ident = os.getpid() & 0xFFFF
    out: list[float] = []
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
        s.settimeout(timeout_s)
        for seq in range(samples):
            seq &= 0xFFFF
            body = b"mwlab-delay-probe".ljust(56, b".")
            head = struct.pack("!BBHHH", _ICMP_ECHO, 0, 0, ident, seq)
            packet = struct.pack("!BBHHH", _ICMP_ECHO, 0, _checksum(head + body), ident, seq)
            t0 = time.perf_counter_ns()
            s.sendto(packet + body, (address, 0))
            while True:
                data = s.recv(2048)
                ihl = (data[0] & 0x0F) * 4
                kind, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
                if kind == _ICMP_REPLY and rid == ident and rseq == seq:
                    break
            out.append((time.perf_counter_ns() - t0) / 1e3)
            time.sleep(gap_s)
    return out


def memcached_rtts(address: str, port: int, samples: int, gap_s: float) -> list[float]:
    out: list[float] = []
    with socket.create_connection((address, port), timeout=10.0) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(samples):
            t0 = time.perf_counter_ns()
            s.sendall(b"version\r\n")
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = s.recv(256)
                if not chunk:
                    raise ConnectionError("memcached closed the connection")
                reply += chunk
            out.append((time.perf_counter_ns() - t0) / 1e3)
            if not reply.startswith(b"VERSION"):
                raise ConnectionError(f"unexpected reply {reply!r}")
            time.sleep(gap_s)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[0] not in ("icmp", "memcached"):
        print(
            "usage: python -m testbed.delayprobe icmp ADDR SAMPLES GAP_S\n"
            "       python -m testbed.delayprobe memcached ADDR SAMPLES GAP_S PORT",
            file=sys.stderr,
        )
        return 2
    kind, address, samples, gap = argv[0], argv[1], int(argv[2]), float(argv[3])
    if kind == "icmp":
        rtts = icmp_rtts(address, samples, gap)
    else:
        rtts = memcached_rtts(address, int(argv[4]), samples, gap)
    print(json.dumps([round(r, 1) for r in rtts]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
