"""One experiment point: the testbed's input, validated."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

_RATIO = re.compile(r"^\d+:\d+$")

# The one default worker count of the project: a point, the plan (which writes it into every
# point with a middleware) and every script that starts a middleware take it from here, and
# they always pass it as the middleware's --workers. The middleware keeps a default of its
# own for standalone use; tests/test_workers.py checks that it is this number.
DEFAULT_WORKERS = 8
# The scale factor s of a point without the scale model, which runs in the study's own time.
# The plan sets every point's s (mwlab.catalogue): this one where the profile sets none.
UNSCALED = 1.0


class Workload(BaseModel):
    """What the clients send (memtier's vocabulary)."""

    model_config = ConfigDict(extra="forbid")

    ratio: str = "0:1"
    multiget: int = Field(0, ge=0)
    data_size: int = Field(4096, ge=1)
    key_maximum: int = Field(10000, ge=1)
    key_size: int | None = Field(None, ge=1, le=250)
    key_pattern: str = "R:R"
    populate: bool = True

    @field_validator("ratio")
    @classmethod
    def _ratio(cls, v: str) -> str:
        if not _RATIO.match(v) or v == "0:0":
            raise ValueError(f"ratio must be 'S:G' (set:get) with S+G > 0, got {v!r}")
        return v

    @field_validator("key_pattern")
    @classmethod
    def _pattern(cls, v: str) -> str:
        if not re.match(r"^[RSG]:[RSG]$", v):
            raise ValueError(f"key_pattern must be X:Y with X, Y in R, S, G; got {v!r}")
        return v

    @property
    def sets(self) -> int:
        return int(self.ratio.split(":")[0])

    @property
    def gets(self) -> int:
        return int(self.ratio.split(":")[1])


class MiddlewareSettings(BaseModel):
    """Configuration of every middleware of the point."""

    model_config = ConfigDict(extra="forbid")

    # 2018: one shared queue served by `workers` threads. 2016: per memcached server a read
    # queue served by `workers` threads and a write queue served by one write thread.
    design: Literal["2018", "2016"] = "2018"
    workers: int = Field(DEFAULT_WORKERS, ge=1)
    sharded: bool = False
    replication: int | None = Field(None, ge=1)
    read_balance: Literal["round-robin", "least-outstanding"] = "round-robin"
    window_ms: int = Field(1000, ge=1)
    # How long a server has to answer before the middleware fails the request; None: the
    # middleware's own default.
    server_timeout_ms: int | None = Field(None, ge=1)
    # Design 2018: a worker takes up to this many requests that are already queued and
    # pipelines them to the servers (--max-batch); 1 is the study's one request per turn.
    max_batch: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _batch_design(self) -> MiddlewareSettings:
        if self.max_batch > 1 and self.design != "2018":
            raise ValueError("middleware.max_batch > 1 needs middleware.design 2018")
        return self

    @field_validator("design", mode="before")
    @classmethod
    def _design(cls, v: Any) -> Any:
        # YAML reads `design: 2016` as a number.
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("replication", mode="before")
    @classmethod
    def _all(cls, v: Any) -> Any:
        return None if v == "all" else v


class Caps(BaseModel):
    """Egress caps of emulated hosts per role, Mbit/s."""

    model_config = ConfigDict(extra="forbid")

    server: float = Field(100, gt=0)
    client: float = Field(200, gt=0)
    middleware: float = Field(800, gt=0)


class Budgets(BaseModel):
    """CPU budget of each emulated host per role, in cores of this machine; None: unbudgeted."""

    model_config = ConfigDict(extra="forbid")

    server: float | None = Field(None, gt=0)
    client: float | None = Field(None, gt=0)
    middleware: float | None = Field(None, gt=0)


class Delays(BaseModel):
    """One-way delay added to every packet between two roles of emulated hosts, ms."""

    model_config = ConfigDict(extra="forbid")

    client_middleware: float = Field(0.0, ge=0)
    middleware_server: float = Field(0.0, ge=0)
    client_server: float = Field(0.0, ge=0)


class Point(BaseModel):
    """One experiment point (topology, workload, middleware configuration, length)."""

    model_config = ConfigDict(extra="forbid")

    name: str = "point"
    hosts: Literal["local", "emulated", "ssh"] = "local"
    inventory: Path | None = None
    servers: int = Field(1, ge=1)
    middlewares: int = Field(0, ge=0)
    client_machines: int = Field(1, ge=1)
    instances_per_client: int = Field(1, ge=1)
    threads: int = Field(1, ge=1)
    virtual_clients: int = Field(1, ge=1)
    driver: Literal["auto", "memtier", "builtin", "memaslap"] = "auto"
    # The built-in generator's window length (--window-ms) for its per-window series; memtier
    # and memaslap report per second whatever this says.
    client_window_ms: int = Field(1000, ge=50, le=60000)
    workload: Workload = Field(default_factory=Workload)
    middleware: MiddlewareSettings = Field(default_factory=MiddlewareSettings)
    duration_s: float = Field(5.0, gt=0)
    repetition: int = Field(1, ge=1)
    caps_mbit: Caps = Field(default_factory=Caps)
    # Scale model (emulated hosts): budgets, caps and delays are derived from the study's
    # machines and `scale`; the testbed applies budgets and delays and records `scale`.
    scale: float = Field(UNSCALED, gt=0)
    budgets_cores: Budgets = Field(default_factory=Budgets)
    delays_ms: Delays = Field(default_factory=Delays)
    # Run protocol of the pipeline: the analysis trims these; the testbed only records them.
    warmup_s: float = Field(0.0, ge=0)
    cooldown_s: float = Field(0.0, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> Point:
        if self.hosts == "ssh" and self.inventory is None:
            raise ValueError("hosts: ssh needs an inventory file")
        r = self.middleware.replication
        if r is not None and r > self.servers:
            raise ValueError(f"middleware.replication {r} exceeds servers {self.servers}")
        return self

    @property
    def frontends(self) -> int:
        """How many processes clients talk to: the middlewares, else the servers."""
        return self.middlewares if self.middlewares > 0 else self.servers

    @property
    def clients_total(self) -> int:
        return (
            self.client_machines * self.instances_per_client * self.threads * self.virtual_clients
        )


def describe_error(e: ValueError) -> str:
    """Why a point is invalid, on one line: `field: problem; ...`."""
    if not isinstance(e, ValidationError):
        return str(e)
    problems = []
    for err in e.errors():
        where = ".".join(str(part) for part in err["loc"]) or "point"
        problems.append(f"{where}: {str(err['msg']).removeprefix('Value error, ')}")
    return "; ".join(problems)


def load_point(path: Path, overrides: dict[str, Any] | None = None) -> Point:
    """Reads a YAML or JSON point file and applies dotted-path overrides."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"cannot read point file {path}: {e}") from e
    if not isinstance(data, dict):
        raise ValueError(f"point file {path} must hold a mapping, not {type(data).__name__}")
    return Point.model_validate(apply_overrides(data, overrides or {}))


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Sets `a.b` style keys in a nested mapping (a copy)."""
    out: dict[str, Any] = yaml.safe_load(yaml.safe_dump(data))
    for dotted, value in overrides.items():
        node = out
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out
