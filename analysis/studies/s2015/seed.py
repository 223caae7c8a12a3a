"""The seed's design numbers the section states (reference2015.yaml): the payloads, the
stability run, the client-scaling and worker-scaling setups and the 2^4 design's levels, as
macros, so that the prose types none of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analysis.report.figures import num
from analysis.studies.s2015.common import name


def numbers(reference: Mapping[str, Any]) -> dict[str, str]:
    payload = reference["workloads"]["payload_chars"]
    stability = reference["stability"]
    factors = reference["factorial"]["factors"]
    out = {
        name("Seed", "Payload", "Small"): num(payload["small"]),
        name("Seed", "Payload", "Large"): num(payload["large"]),
        name("Seed", "Stability", "Clients"): num(stability["clients"]),
        name("Seed", "Stability", "Workers"): num(stability["workers_per_middleware"]),
        name("Seed", "Stability", "Middlewares"): num(stability["middlewares"]),
        name("Seed", "Stability", "Length"): num(stability["run_length_s"]),
        name("Seed", "Scale", "Workers", "Clients"): num(reference["scale_workers"]["clients"]),
        name("Seed", "Table", "Machines"): num(reference["throughput"]["client_machines"]),
        name("Seed", "Table", "Middlewares"): num(reference["throughput"]["middlewares"]),
    }
    for factor, (low, high) in factors.items():
        out[name("Seed", "Factor", factor, "Low")] = num(low)
        out[name("Seed", "Factor", factor, "High")] = num(high)
    return out
