"""A run as a sequence of stages, each a unit with its setup and its teardown.

`base` holds the `Stage` protocol and `Stages`, the driver that sets them up in order and
tears them down in reverse; the other modules hold one concern each: the hosts (`layout`),
the links (`links`), the CPU budgets (`budgets`), the machine's speed (`speed`), the
services (`services`; SimpleMQ's in `simplemq`) and the collection of every process' output
(`collect`). `testbed.run.Runner` is the context every stage works on.
"""

from testbed.stages.base import RunError, Stage, Stages
from testbed.stages.budgets import BudgetStage
from testbed.stages.collect import CollectStage
from testbed.stages.layout import Layout, LayoutStage
from testbed.stages.links import LinkCapStage, LinkDelayStage
from testbed.stages.services import (
    ClientStage,
    MiddlewareStage,
    PopulateStage,
    ServerStage,
    StopStage,
)
from testbed.stages.speed import SpeedProbeStage

__all__ = [
    "BudgetStage",
    "ClientStage",
    "CollectStage",
    "Layout",
    "LayoutStage",
    "LinkCapStage",
    "LinkDelayStage",
    "MiddlewareStage",
    "PopulateStage",
    "RunError",
    "ServerStage",
    "SpeedProbeStage",
    "Stage",
    "Stages",
    "StopStage",
]
