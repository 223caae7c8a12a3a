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
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
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
# SimpleMQ's one default worker count per middleware: a point, the soak and scripts take it
# from here (testbed.services.middleware re-exports it); SimpleMQ's own default for
# standalone use is the same number (tests/test_workers.py).
DEFAULT_MQ_WORKERS = 16
# Database connections the harness itself may hold at once (psql for the schema, snapshots,
# sampling): max_connections must leave them free beside the workers and direct clients.
HARNESS_CONNECTIONS = 4
# A SimpleMQ body starts with its tag `<sender>:<sequence>:`; a shorter body than the tag
# would be written longer than asked and counted as a mismatch by every client.
MIN_MESSAGE_BYTES = 32
# The middleware's longest body (its --max-body default).
MAX_MESSAGE_BYTES = 4096


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


# PostgreSQL's largest commit_delay (100,000 µs).
MAX_COMMIT_DELAY_MS = 100.0


class QueueSettings(BaseModel):
    """SimpleMQ (the 2015 study): its middlewares, database and clients."""

    model_config = ConfigDict(extra="forbid")

    # Per middleware; each worker holds one database connection.
    workers: int = Field(DEFAULT_MQ_WORKERS, ge=1)
    message_size: int = Field(200, ge=MIN_MESSAGE_BYTES, le=MAX_MESSAGE_BYTES)
    # skip_locked: DELETE of a row chosen FOR UPDATE SKIP LOCKED (PostgreSQL 9.5 on);
    # naive: the smallest matching id, all 2015's PostgreSQL allowed.
    pop: Literal["skip_locked", "naive"] = "skip_locked"
    # static: the seed's send, peek, pop in turn to the next client; shared_receiver: every
    # client sends to and pops as client 1, the load that contends for one (queue, receiver).
    mix: Literal["static", "shared_receiver"] = "static"
    # None: just what the workers (or direct clients) need, plus the harness's connections.
    max_connections: int | None = Field(None, ge=1)
    # Messages in the queue before the clients start (the seed's stability run: 5,000).
    preload: int = Field(0, ge=0)
    # What each commit waits before its WAL flush (PostgreSQL's commit_delay, its maximum
    # 100 ms), in this machine's time: the scale model's stand-in for the study database's
    # commit latency, which time dilation would otherwise shrink to this machine's fsync.
    # Commits that arrive meanwhile share the flush, as on a slow disk. 0: none added.
    commit_delay_ms: float = Field(0.0, ge=0, le=MAX_COMMIT_DELAY_MS)


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
    # The memcached load generator. `auto` is the name datasets measured before drivers were
    # named in the catalogue give it: it resolves to `builtin` on every machine, what they ran.
    driver: Literal["builtin", "memtier", "memaslap", "auto"] = "builtin"
    # The built-in generator's window length (--window-ms) for its per-window series; memtier
    # and memaslap report per second whatever this says.
    client_window_ms: int = Field(1000, ge=50, le=60000)
    workload: Workload = Field(default_factory=Workload)
    middleware: MiddlewareSettings = Field(default_factory=MiddlewareSettings)
    # What is measured: memcached behind the 2018/2016 middleware, or SimpleMQ over
    # PostgreSQL (the 2015 study; `queue` holds its settings, `servers` its one database).
    system: Literal["memcached", "simplemq"] = "memcached"
    queue: QueueSettings | None = None
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
        if self.system == "memcached":
            if self.queue is not None:
                raise ValueError("queue settings need system: simplemq")
            return self
        if self.queue is None:
            self.queue = QueueSettings()
        if self.servers != 1:
            raise ValueError(f"system simplemq runs one database server, not {self.servers}")
        if self.driver not in ("builtin", "auto"):
            raise ValueError(f"driver {self.driver} loads memcached; simplemq has its own clients")
        # Compared with the default, not asked whether it was set: a dumped point holds it.
        if self.middleware.workers != DEFAULT_WORKERS:
            raise ValueError(
                "middleware.workers counts the memcached middleware's workers; SimpleMQ's are"
                " queue.workers"
            )
        limit = self.queue.max_connections
        if limit is not None and self.db_connections + HARNESS_CONNECTIONS > limit:
            raise ValueError(
                f"queue.max_connections {limit} is too small: {self.db_connections_text} need"
                f" {self.db_connections}, and the harness {HARNESS_CONNECTIONS} more"
            )
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A memcached point dumps as it did before SimpleMQ existed (point.yaml, run.json).
        out: dict[str, Any] = handler(self)
        if self.system == "memcached":
            out.pop("system", None)
            out.pop("queue", None)
        return out

    @property
    def frontends(self) -> int:
        """How many processes clients talk to: the middlewares, else the servers."""
        return self.middlewares if self.middlewares > 0 else self.servers

    @property
    def db_connections(self) -> int:
        """SimpleMQ's persistent database connections: every middleware's workers, or one per
        client for the database baseline (no middleware)."""
        if self.queue is None:
            return 0
        if self.middlewares > 0:
            return self.middlewares * self.queue.workers
        return self.clients_total

    @property
    def db_connections_text(self) -> str:
        if self.middlewares > 0:
            return f"{self.middlewares} middlewares x {self.queue_settings.workers} workers"
        return f"{self.clients_total} direct clients"

    @property
    def db_max_connections(self) -> int:
        """The database's max_connections: the point's, else what it needs."""
        q = self.queue_settings
        return q.max_connections or self.db_connections + HARNESS_CONNECTIONS

    @property
    def queue_settings(self) -> QueueSettings:
        if self.queue is None:
            raise ValueError(f"point {self.name} is not a simplemq point")
        return self.queue

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
