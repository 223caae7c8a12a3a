"""Where a measurement records the environment it ran in, relative to its results folder or
dataset: the tools' versions (`mwlab tools --json`) and the machine."""

from __future__ import annotations

TOOLS_RECORD = "environment/tools.json"
HOST_RECORD = "environment/host.json"
