"""The middleware's key placement, written again in Python so a test can predict it.

The middleware (`HashRing.java`) gives each server `virtual_nodes` points on a ring of signed
64-bit values: the hash of `"host:port#v"`. A key's replica set is the first `replication`
distinct servers clockwise from the key's hash. The hash is FNV-1a 64 followed by murmur3's
64-bit finaliser. Java compares the points as signed longs, so this module does too.

Nothing here is imported from the middleware: the chaos soak uses it to know where a key must
be, and checks it against placement observed on real servers before it trusts it.
"""

from __future__ import annotations

import bisect

_MASK = (1 << 64) - 1


def _signed(h: int) -> int:
    return h - (1 << 64) if h >> 63 else h


def key_hash(data: bytes) -> int:
    """FNV-1a 64 with the murmur3 finaliser, as a signed 64-bit integer (Java's long)."""
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & _MASK
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK
    h ^= h >> 33
    return _signed(h)


class HashRing:
    """Replica sets of keys for servers named `host:port`, in the order given to the middleware."""

    def __init__(self, servers: list[str], replication: int, virtual_nodes: int = 160) -> None:
        if not servers:
            raise ValueError("no servers")
        if not 1 <= replication <= len(servers):
            raise ValueError(f"replication {replication} is not in 1..{len(servers)}")
        if virtual_nodes < 1:
            raise ValueError(f"virtual_nodes must be at least 1, not {virtual_nodes}")
        self.servers = list(servers)
        self.replication = replication
        # Stable sort by point, as Java's Arrays.sort on objects, so equal points keep their order.
        pairs = sorted(
            (
                (key_hash(f"{name}#{v}".encode()), s)
                for s, name in enumerate(servers)
                for v in range(virtual_nodes)
            ),
            key=lambda p: p[0],
        )
        self._points = [p for p, _ in pairs]
        owners = [s for _, s in pairs]
        n = len(owners)
        self._sets: list[tuple[int, ...]] = []
        for i in range(n):
            chosen: list[int] = []
            for j in range(n):
                s = owners[(i + j) % n]
                if s not in chosen:
                    chosen.append(s)
                    if len(chosen) == replication:
                        break
            self._sets.append(tuple(chosen))

    def replicas(self, key: bytes) -> tuple[int, ...]:
        """Server indices holding `key`, first replica first."""
        i = bisect.bisect_left(self._points, key_hash(key))
        return self._sets[0 if i == len(self._points) else i]
