"""Link load of a point: the bytes each role's host sends per second, from the measured request
rates and the memcached text protocol's message sizes, against the host's egress cap.

As in the study's Table 1 (seed 004) the sizes are payload only: TCP/IP headers are left out,
so a utilisation near 1 already means a saturated link.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

ROLES = ("server", "middleware", "client")
# memtier's keys ("memtier-1234") when the workload does not fix a key size.
DEFAULT_KEY_BYTES = 12
# "set <key> 0 <exptime> <bytes>\r\n" + data + "\r\n" without key and data (a six-digit
# expiry and a four-digit byte count, as in the study's workload).
_SET_OVERHEAD = 23
# "VALUE <key> <flags> <bytes>\r\n" + data + "\r\n" without key and data.
_VALUE_OVERHEAD = 17
_END = len("END\r\n")
_STORED = len("STORED\r\n")


@dataclass(frozen=True)
class Sizes:
    """Message sizes in bytes for one workload."""

    key: int
    data: int

    def set_request(self) -> int:
        return self.key + self.data + _SET_OVERHEAD

    def get_request(self, keys: int) -> int:
        return len("get\r\n") + keys * (self.key + 1)

    def get_reply(self, keys: int) -> int:
        return keys * (self.key + self.data + _VALUE_OVERHEAD) + _END

    @staticmethod
    def set_reply() -> int:
        return _STORED


def _number(value: object, default: float) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return default if math.isnan(x) else x


@dataclass(frozen=True)
class Topology:
    servers: int
    middlewares: int
    client_machines: int
    replicas: int
    sharded: bool


def topology(point: Mapping[str, object]) -> Topology:
    """Counts of hosts per role and the number of replicas a SET goes to."""
    servers = int(_number(point.get("servers"), 1))
    replicas = int(_number(point.get("middleware.replication"), servers))
    return Topology(
        servers=servers,
        middlewares=int(_number(point.get("middlewares"), 0)),
        client_machines=max(int(_number(point.get("client_machines"), 1)), 1),
        replicas=min(max(replicas, 1), servers),
        sharded=bool(point.get("middleware.sharded")),
    )


def egress_mbit(
    point: Mapping[str, object], sets_per_s: float, gets_per_s: float, keys_per_get: float
) -> dict[str, float]:
    """Mbit/s sent by one host of each role (the busiest hosts share the load evenly)."""
    if min(sets_per_s, gets_per_s, keys_per_get) < 0:
        raise ValueError("request rates and keys per GET must not be negative")
    t = topology(point)
    sizes = Sizes(
        key=int(_number(point.get("workload.key_size"), DEFAULT_KEY_BYTES)),
        data=int(_number(point.get("workload.data_size"), 4096)),
    )
    k = max(keys_per_get, 1.0)
    # A sharded multi-GET reaches up to every server, each answering its part with one END.
    parts = min(t.servers, k) if t.sharded and t.middlewares else 1.0
    server_bytes = (
        sets_per_s * t.replicas * sizes.set_reply()
        + gets_per_s * (k * (sizes.key + sizes.data + _VALUE_OVERHEAD) + parts * _END)
    ) / t.servers
    client_bytes = (
        sets_per_s * sizes.set_request() + gets_per_s * sizes.get_request(int(k))
    ) / t.client_machines
    out = {"server": server_bytes * 8 / 1e6, "client": client_bytes * 8 / 1e6}
    if t.middlewares:
        to_servers = sets_per_s * t.replicas * sizes.set_request() + gets_per_s * (
            len("get\r\n") * parts + k * (sizes.key + 1)
        )
        to_clients = sets_per_s * sizes.set_reply() + gets_per_s * sizes.get_reply(int(k))
        out["middleware"] = (to_servers + to_clients) / t.middlewares * 8 / 1e6
    return out


def utilisation(
    point: Mapping[str, object], sets_per_s: float, gets_per_s: float, keys_per_get: float
) -> dict[str, float]:
    """Egress of one host per role as a fraction of its cap (`caps_mbit.<role>`); roles the
    point does not have, or without a cap, are left out."""
    out = {}
    for role, mbit in egress_mbit(point, sets_per_s, gets_per_s, keys_per_get).items():
        cap = _number(point.get(f"caps_mbit.{role}"), math.nan)
        if cap > 0:
            out[role] = mbit / cap
    return out


def point_rates(client_rows: pd.DataFrame) -> tuple[float, float, float]:
    """SETs/s, GETs/s (single and multi) and mean keys per GET of one point, from its
    client-side rows of every request type."""
    by_type = client_rows.set_index("type")
    sets = float(by_type["throughput_ops_mean"].get("set", 0.0) or 0.0)
    gets = keys = 0.0
    for kind in ("get", "multiget"):
        if kind in by_type.index:
            row = by_type.loc[kind]
            x = float(row["throughput_ops_mean"] or 0.0)
            gets += x
            keys += x * max(float(row.get("keys", 1) or 1), 1.0)
    return sets, gets, (keys / gets if gets > 0 else 1.0)
