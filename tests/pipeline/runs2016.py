"""Run directories of planned points written in the formats the tools write (run.json,
memaslap's text output, the middleware's statistics directory of the statistics contract),
with times that follow the point's configuration: design, servers, threads, replication, write
share and clients. The report's scripts run on them as on measured runs."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.parse.middleware import COLUMNS
from mwlab.catalogue import PlannedRun
from testbed.manifest import build_manifest
from testbed.point import Point

START_MS = 1_717_000_000_000
WINDOWS = 6
OUTSIDE_US = 1500.0  # clients and network, per request


@dataclass(frozen=True)
class Shape:
    """What one run's middleware does per second, from the point's configuration."""

    design: str
    servers: int
    threads: int
    replication: int
    write_share: float
    clients: int

    @property
    def server_get_us(self) -> float:
        return 380.0 + 10.0 * self.servers

    @property
    def server_set_us(self) -> float:
        # A SET waits for the slowest of its R replicas.
        return self.server_get_us + 120.0 * (self.replication - 1)

    def queue_us(self, kind: str) -> float:
        if self.design == "2016":
            # The write thread gets busier with writes and replicas; read pools with clients.
            return (
                20.0 + 300.0 * self.write_share * self.replication
                if kind == "set"
                else 30.0 + 4000.0 / (self.servers * self.threads) * self.clients / 100
            )
        return 50.0 + 3000.0 / self.threads * self.clients / 100

    def response_us(self, kind: str) -> float:
        server = self.server_set_us if kind == "set" else self.server_get_us
        return 20.0 + self.queue_us(kind) + server + 35.0

    @property
    def throughput(self) -> float:
        mean = (1 - self.write_share) * self.response_us("get") + self.write_share * (
            self.response_us("set")
        )
        return self.clients / ((mean + OUTSIDE_US) / 1e6)


def shape_of(point: Point) -> Shape:
    sets, gets = point.workload.sets, point.workload.gets
    return Shape(
        design=point.middleware.design,
        servers=point.servers,
        threads=point.middleware.workers,
        replication=point.middleware.replication or point.servers,
        write_share=sets / (sets + gets),
        clients=point.clients_total,
    )


def _csv(path: Path, rows: list[list[Any]]) -> None:
    lines = [",".join(COLUMNS[path.name])]
    lines += [",".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")


def write_stats(d: Path, s: Shape, seed: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    windows, queue, servers, workers, hist, pools, parts = [], [], [], [], [], [], []
    if s.design == "2016":
        layout = [(kind, i) for i in range(s.servers) for kind in ("read", "write")]
    else:
        layout = [("shared", -1)]
    for w in range(WINDOWS):
        start, end = START_MS + 1000 * w, START_MS + 1000 * (w + 1)
        wobble = 1 + 0.01 * ((seed + w) % 3 - 1)
        x = s.throughput * wobble
        counts = {"get": round(x * (1 - s.write_share)), "set": round(x * s.write_share)}
        for kind, n in counts.items():
            if n == 0:
                continue
            q, srv, r = (
                s.queue_us(kind),
                (s.server_set_us if kind == "set" else s.server_get_us),
                0.0,
            )
            r = s.response_us(kind)
            windows.append([w, start, end, kind, 1, n, float(n), 20.0, 30.0, q, q * q, 35.0,
                            50.0, srv, srv * 10, r, r * r, round(r * 0.9), round(r * 1.6),
                            round(r * 3), n if kind == "get" else 0, n if kind == "get" else 0,
                            0, 0])  # fmt: skip
            for bucket, share in ((0.6, 0.3), (0.9, 0.4), (1.3, 0.2), (2.5, 0.1)):
                hist.append([w, kind, 1, int(r * bucket // 100 * 100), max(1, round(n * share))])
        busy_total = queued_total = 0.0
        thread_no = 0
        for pool, server in layout:
            share = 1 / s.servers if server >= 0 else 1.0
            kinds = {"read": ["get"], "write": ["set"], "shared": ["get", "set"]}[pool]
            n = sum(round(counts[k] * share) for k in kinds)
            threads = 1 if pool == "write" else s.threads
            hold = (
                120.0 * s.replication  # the write thread's own work per SET
                if pool == "write"
                else 35.0 + s.server_get_us
            )
            busy = min(threads * 0.999, n * hold / 1e6)
            queued = n * sum(s.queue_us(k) for k in kinds) / len(kinds) / 1e6
            busy_total += busy
            queued_total += queued
            in_flight = busy if pool != "write" else 2.5 * busy
            pools.append([w, start, end, pool, server, threads, n, n, queued, 3, busy,
                          busy / threads, in_flight, threads])  # fmt: skip
            for _ in range(threads):
                workers.append([w, thread_no, n // threads, busy / threads])
                thread_no += 1
            for k in kinds:
                m = round(counts[k] * share)
                if m == 0:
                    continue
                q, r = s.queue_us(k), s.response_us(k)
                srv = s.server_set_us if k == "set" else s.server_get_us
                parts.append([w, start, end, pool, server, k, 1, m, m, q, q * q, round(q * 0.5),
                              round(q * 2.2), round(q * 6), srv, srv * 10, round(srv * 0.95),
                              round(srv * 1.4), round(srv * 2.5), r, r * r, round(r * 0.9),
                              round(r * 1.6), round(r * 3), 0])  # fmt: skip
        for i in range(s.servers):
            n = round(counts["get"] / s.servers) + round(counts["set"] * s.replication / s.servers)
            servers.append([w, f"127.0.0.1:{21000 + i}", n, n, 0])
        total = counts["get"] + counts["set"]
        queue.append([w, start, end, total, float(total), queued_total, 9, busy_total])
    for name, rows in (
        ("windows.csv", windows),
        ("queue.csv", queue),
        ("servers.csv", servers),
        ("workers.csv", workers),
        ("histogram.csv", hist),
        ("pools.csv", pools),
        ("pool_requests.csv", parts),
    ):
        _csv(d / name, rows)
    first = 0
    info = []
    for pool, server in layout:
        threads = 1 if pool == "write" else s.threads
        info.append({"pool": pool, "server": server, "threads": threads, "first_worker": first,
                     "address": None if server < 0 else f"127.0.0.1:{21000 + server}"})  # fmt: skip
        first += threads
    if s.design == "2016":
        threads = {"net": 1, "read": s.servers * s.threads, "write": s.servers}
        per_server: dict[str, int] | None = {"read": s.threads, "write": 1}
    else:
        threads, per_server = {"net": 1, "shared": s.threads}, None
    summary = {
        "clean_shutdown": True,
        "config": {"design": s.design, "workers": s.threads},
        "design": s.design,
        "threads": threads,
        "threads_per_server": per_server,
        "pools": info,
    }
    (d / "summary.json").write_text(json.dumps(summary))


def memaslap_text(s: Shape, share: float) -> str:
    """memaslap's output for one client instance carrying `share` of the requests."""
    blocks = []
    totals = {"Get": 0, "Set": 0}
    for w in range(WINDOWS):
        x = s.throughput * share
        n = {"Get": round(x * (1 - s.write_share)), "Set": round(x * s.write_share)}
        blocks.append("\x1b[1;1H\x1b[2J")
        for kind in ("Get", "Set", "Total"):
            ops = n["Get"] + n["Set"] if kind == "Total" else n[kind]
            if kind != "Total":
                totals[kind] += ops
            us = OUTSIDE_US + (s.response_us("set") if kind == "Set" else s.response_us("get"))
            row = (
                f"{ops:<12} {ops:<12} 1.0        0          8        9000       "
                f"{us:<10.0f} {us / 2:<10.2f} {us * 0.8:.2f}"
            )
            blocks += [
                f"{kind} Statistics",
                "Type     Time(s)  Ops          TPS(ops/s)   Net(M/s)   Get_miss   Min(us)  "
                "Max(us)    Avg(us)    Std_dev    Geo_dist  ",
                f"Period   1        {row}",
                f"Global   {w + 1:<8} {row}",
                "",
            ]
    for kind, events in (("Get", totals["Get"]), ("Set", totals["Set"])):
        blocks += [
            f"{kind} Statistics ({events} events)",
            "   Min:         8",
            "   Max:      9000",
            "   Avg:      2000",
            "   Geo:    1800.00",
            "   Std:     900.00",
            "   Log2 Dist:",
            f"       8:        0        0        0 {events}",
            "",
        ]
    total = totals["Get"] + totals["Set"]
    tps = round(total / WINDOWS)
    blocks.append(f"Run time: {WINDOWS}.0s Ops: {total} TPS: {tps} Net_rate: 1.0M/s")
    return "\n".join(blocks) + "\n"


def write_run(results: Path, planned: PlannedRun) -> Path:
    """runs/<family>/<point>/rep<N>/ of one planned run, status ok."""
    point = Point.model_validate(planned.spec)
    s = shape_of(point)
    run = results / "runs" / planned.path
    seed = planned.repetition + sum(map(ord, planned.point))
    for m in range(point.middlewares):
        write_stats(run / "middlewares" / f"middleware{m + 1}" / "stats", s, seed)
    sources = point.client_machines * point.instances_per_client
    for c in range(point.client_machines):
        for i in range(point.instances_per_client):
            d = run / "clients" / f"client{c + 1}.{i}"
            d.mkdir(parents=True)
            (d / "memaslap.txt").write_text(memaslap_text(s, 1 / sources))
    manifest = build_manifest(
        point=point.model_dump(mode="json"),
        error=None,
        started_at=f"2026-01-01T00:{seed % 60:02d}:00.000+00:00",
        finished_at="2026-01-01T01:00:00.000+00:00",
        duration_s=float(WINDOWS),
        host_kind="local",
        driver="memaslap",
        clients_total=point.clients_total,
    )
    (run / "run.json").write_text(json.dumps(manifest))
    return run


def mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)
