"""How the machine's CPU speed through a run is judged (the probe: testbed.speedprobe; the
judgement: analysis.validate).

The speed is taken in bins of `BIN_S`, every CPU's probe pieces together, relative to the
window's median bin. Above a spread of `MAX_SPREAD` (p90 - p10 of the bins over the median)
the run is flagged `speed`: a host bound by its CPU budget can then move its throughput by as
much, beyond the 10 % half-width the stability check allows. Quiet runs of 2026-11-27 (10
clients straight to PostgreSQL, 60 s) spread 10-19 %."""

from __future__ import annotations

BIN_S = 2.0
MAX_SPREAD = 0.25
