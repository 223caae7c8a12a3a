"""The scale model: the study's machines as emulated hosts on this machine, time-dilated by s.

A study machine with v vCPUs and a link of L Mbit/s becomes a host with a CPU budget of
v * s * speed(role) cores of this machine and an egress cap of L * s Mbit/s; every one-way
delay d becomes d / s. Time runs 1/s slower, so a measured throughput X stands for X / s in
the study and a measured time T for T * s. The data (machine types, role types per study,
delays, speed bounds, calibration targets) live in workflows/machines.yaml.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from common.paths import MACHINES, REPO, WORKFLOWS

MACHINES_SCHEMA = WORKFLOWS / "machines.schema.yaml"
ROLES = ("server", "client", "middleware")
# The model holds only while the machine has idle CPU left: a CFS quota caps a host but
# reserves nothing. Idle below this share of the machine's capacity over the window is a
# saturated machine (testbed.cpuaccount marks such runs, the calibration refuses them).
SATURATED_IDLE = 0.05
PAIRS = ("client_middleware", "middleware_server", "client_server")


class ScaleModelError(ValueError):
    """The machines file is invalid, or a point does not fit this machine."""


@dataclass(frozen=True)
class MachineType:
    name: str
    vcpus: int
    link_mbit: float


@dataclass(frozen=True)
class Target:
    """A study number one role's speed factor is fitted to, and the point that measures it."""

    name: str
    role: str
    study: str
    value: float
    source: str
    side: str
    point: dict[str, Any]
    # Speed levels of this target's runs; empty: the calibration's common levels.
    speeds: tuple[float, ...] = ()
    # The studies whose hosts of this role take the fitted factor.
    studies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reference:
    name: str
    value: float
    source: str
    where: str
    # The calibration target whose fitted throughput sets this number (a mean response time
    # at the target's own point, N / X by Little's law): shown, but no check of the model.
    follows: str | None = None


@dataclass(frozen=True)
class Machines:
    types: dict[str, MachineType]
    studies: dict[str, dict[str, MachineType]]  # study -> role -> type
    # study -> pair -> one-way ms at s = 1 (a pair's delay, or its study's own where the
    # machines file gives one)
    delays_ms: dict[str, dict[str, float]]
    speed_lower: float
    speed_upper: float
    calibration_speeds: tuple[float, ...]
    targets: dict[str, Target]
    # A fitted role, "upper" (the upper speed bound) or "unbudgeted" (accounted, no quota).
    client_same_as: str
    client_why: str
    validation: dict[str, Reference]
    # study -> role -> "upper" or a fitted role: roles of a study that no study number
    # isolates, so no target fits them (their why in `unfitted_why`).
    unfitted: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    unfitted_why: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    # study -> one synchronous disk write of its database machine at s = 1, ms (the plan
    # dilates it for SimpleMQ's PostgreSQL: testbed.point.QueueSettings.commit_delay_ms).
    commit_ms: dict[str, float] = dataclasses.field(default_factory=dict)
    # study -> where that write time comes from (its `source`: "assumed: ..." when no study
    # number gives it).
    commit_source: dict[str, str] = dataclasses.field(default_factory=dict)
    # study -> pair -> the point a delay was derived from (`derived_at`): its study number
    # there fixes the delay, so that number is no check of the model.
    delay_sites: dict[str, dict[str, dict[str, Any]]] = dataclasses.field(default_factory=dict)

    def roles(self, study: str | int) -> dict[str, MachineType]:
        key = str(study)
        if key not in self.studies:
            raise ScaleModelError(f"no machines for study {key}; known: {sorted(self.studies)}")
        return self.studies[key]


def _read(path: Path) -> Any:
    """The YAML document of `path`, the caller's own copy."""
    return copy.deepcopy(_parsed(path))


def _parsed(path: Path) -> Any:
    """The YAML document of `path`, shared: not to be changed. A plan of many points reads
    the same files for every point, and parsing them was most of its time."""
    try:
        st = path.stat()
    except OSError as err:
        raise ScaleModelError(f"{path}: cannot read: {err}") from err
    return _parse(str(path.resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=16)
def _parse(path: str, mtime_ns: int, size: int) -> Any:
    """Parses a file once per version: its modification time and size are in the key, so an
    edited file is read again."""
    try:
        return yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ScaleModelError(f"{path}: cannot read: {err}") from err


def reference_value(file: str, keys: list[str | int], root: Path = REPO) -> float:
    """A number of workflows/reference*.yaml by its path of keys."""
    node: Any = _parsed(root / "workflows" / file)
    for key in keys:
        if not isinstance(node, dict):
            raise ScaleModelError(f"{file}: {'.'.join(map(str, keys))} is not a path")
        found = [k for k in node if str(k) == str(key)]
        if not found:
            raise ScaleModelError(f"{file}: no {'.'.join(map(str, keys))}")
        node = node[found[0]]
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise ScaleModelError(f"{file}: {'.'.join(map(str, keys))} is not a number")
    return float(node)


def load_machines(path: Path = MACHINES, root: Path = REPO) -> Machines:
    """Reads and checks workflows/machines.yaml."""
    doc = _read(path)
    try:
        jsonschema.validate(doc, _parsed(MACHINES_SCHEMA))
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ScaleModelError(f"{path}: at {where}: {err.message}") from err
    types = {
        name: MachineType(name, int(t["vcpus"]), float(t["link_mbit"]))
        for name, t in doc["machine_types"].items()
    }
    studies = _studies(path, doc["studies"], types)
    speed = doc["speed"]
    if not speed["lower"] < speed["upper"]:
        raise ScaleModelError(f"{path}: speed.lower must be below speed.upper")
    cal = doc["calibration"]
    targets = _targets(path, cal["targets"], studies.roles, root)
    _check_fitted_roles(path, targets, studies.unfitted)
    same_as = cal["client_rule"]["same_as"]
    roles = [t.role for t in targets.values()]
    if "client" in roles:
        raise ScaleModelError(f"{path}: the client role follows client_rule, it is not fitted")
    if same_as not in ("upper", "unbudgeted") and same_as not in roles:
        raise ScaleModelError(f"{path}: client_rule follows {same_as}, which no target fits")
    validation = _validation(path, doc["validation"], cal["targets"], root)
    delays, delay_sites = _delays(path, doc["delays_ms"], studies.roles)
    return Machines(
        types=types,
        studies=studies.roles,
        delays_ms=delays,
        speed_lower=float(speed["lower"]),
        speed_upper=float(speed["upper"]),
        calibration_speeds=tuple(float(x) for x in cal["speeds"]),
        targets=targets,
        client_same_as=same_as,
        client_why=cal["client_rule"]["why"],
        validation=validation,
        unfitted=studies.unfitted,
        unfitted_why=studies.unfitted_why,
        commit_ms=studies.commit_ms,
        commit_source=studies.commit_source,
        delay_sites=delay_sites,
    )


@dataclass(frozen=True)
class _Studies:
    """machines.yaml's `studies`: each study's machine per role, its roles at an assumed
    speed (what each follows, and why) and its database's commit delay (with its source)."""

    roles: dict[str, dict[str, MachineType]]
    unfitted: dict[str, dict[str, str]]
    unfitted_why: dict[str, dict[str, str]]
    commit_ms: dict[str, float]
    commit_source: dict[str, str]


def _studies(path: Path, raw: dict[str, Any], types: dict[str, MachineType]) -> _Studies:
    out = _Studies({}, {}, {}, {}, {})
    for study, spec in raw.items():
        unknown = sorted(set(spec["roles"].values()) - set(types))
        if unknown:
            raise ScaleModelError(f"{path}: study {study} names unknown machine types {unknown}")
        key = str(study)
        out.roles[key] = {role: types[t] for role, t in spec["roles"].items()}
        out.unfitted[key] = {r: u["same_as"] for r, u in spec.get("unfitted", {}).items()}
        out.unfitted_why[key] = {r: u["why"] for r, u in spec.get("unfitted", {}).items()}
        if "commit" in spec:
            out.commit_ms[key] = float(spec["commit"]["ms"])
            out.commit_source[key] = str(spec["commit"].get("source", ""))
    return out


def _reference(raw: dict[str, Any], root: Path) -> tuple[float, str]:
    """A study number named by file and path: its value, and where it is (`file:a.b`)."""
    where = f"{raw['file']}:{'.'.join(map(str, raw['path']))}"
    return reference_value(raw["file"], raw["path"], root), where


def _targets(
    path: Path, raw: dict[str, Any], studies: dict[str, dict[str, MachineType]], root: Path
) -> dict[str, Target]:
    """The calibration's targets, each serving its own study and known studies only."""
    targets: dict[str, Target] = {}
    for name, t in raw.items():
        target = Target(
            name,
            t["role"],
            str(t["study"]),
            _reference(t["reference"], root)[0],
            t["source"],
            t["side"],
            t["point"],
            tuple(float(x) for x in t.get("speeds", ())),
            tuple(str(s) for s in t.get("studies", studies)),
        )
        if target.study not in target.studies or not set(target.studies) <= set(studies):
            raise ScaleModelError(
                f"{path}: target {name} must serve its own study {target.study} and known"
                f" studies only, got {list(target.studies)}"
            )
        targets[name] = target
    return targets


def _check_fitted_roles(
    path: Path, targets: dict[str, Target], unfitted: dict[str, dict[str, str]]
) -> None:
    """Every fitted role of a study has exactly one target, an unfitted one none, and an
    unfitted role follows the upper bound or a role some target fits."""
    roles = [t.role for t in targets.values()]
    for study, assumed in unfitted.items():

        def serving(role: str, study: str = study) -> list[str]:
            return sorted(n for n, t in targets.items() if t.role == role and study in t.studies)

        for role, same_as in assumed.items():
            if serving(role):
                raise ScaleModelError(
                    f"{path}: the {role}s of study {study} are unfitted, yet targets"
                    f" {serving(role)} serve them"
                )
            if same_as != "upper" and same_as not in roles:
                raise ScaleModelError(
                    f"{path}: the {role}s of study {study} follow {same_as}, which no target fits"
                )
        for role in sorted(set(roles) - set(assumed)):
            if len(serving(role)) != 1:
                raise ScaleModelError(
                    f"{path}: the {role}s of study {study} need exactly one calibration target,"
                    f" got {serving(role) or 'none'}"
                )


def _validation(
    path: Path, raw: dict[str, Any], targets: dict[str, Any], root: Path
) -> dict[str, Reference]:
    """The study numbers left out of the calibration; none of them is also a target."""
    validation = {}
    for name, v in raw.items():
        value, where = _reference(v["reference"], root)
        follows = v.get("follows")
        if follows is not None and follows not in targets:
            raise ScaleModelError(
                f"{path}: validation number {name} follows {follows!r}, which is no calibration"
                f" target (targets: {', '.join(sorted(targets))})"
            )
        validation[name] = Reference(name, value, v["source"], where, follows)
    used = {_reference(t["reference"], root)[1] for t in targets.values()}
    both = sorted(r.where for r in validation.values() if r.where in used)
    if both:
        raise ScaleModelError(f"{path}: calibration targets also listed for validation: {both}")
    return validation


def _delays(
    path: Path, raw: dict[str, Any], studies: dict[str, dict[str, MachineType]]
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, dict[str, Any]]]]:
    """Each study's one-way delay per pair (a study's own, else the pair's), and where a
    delay derived from a study's number was derived (`derived_at`)."""
    delays: dict[str, dict[str, float]] = {}
    sites: dict[str, dict[str, dict[str, Any]]] = {}
    for pair in PAIRS:
        spec = raw[pair]
        unknown = sorted(set(map(str, spec.get("studies", {}))) - set(studies))
        if unknown:
            raise ScaleModelError(f"{path}: delays_ms.{pair} names unknown studies {unknown}")
        own = {str(k): v for k, v in spec.get("studies", {}).items()}
        for study in studies:
            delays.setdefault(study, {})[pair] = float(own.get(study, spec)["one_way_ms"])
            if "derived_at" in own.get(study, {}):
                sites.setdefault(study, {})[pair] = dict(own[study]["derived_at"])
    return delays, sites


def _check_scale(scale: float) -> None:
    if not (isinstance(scale, int | float) and math.isfinite(scale) and 0 < scale <= 1):
        raise ScaleModelError(f"scale factor must be in (0, 1], got {scale!r}")


def caps_mbit(machines: Machines, study: str | int, scale: float) -> dict[str, float]:
    """Egress cap per role: the study's link times s."""
    _check_scale(scale)
    return {role: round(t.link_mbit * scale, 4) for role, t in machines.roles(study).items()}


def delays_ms(machines: Machines, study: str | int, scale: float) -> dict[str, float]:
    """One-way delay per role pair of one study: the study's delay divided by s."""
    _check_scale(scale)
    machines.roles(study)  # a known study
    return {pair: round(d / scale, 4) for pair, d in machines.delays_ms[str(study)].items()}


def commit_delay_ms(machines: Machines, study: str | int, scale: float) -> float | None:
    """The commit delay that makes one synchronous disk write of the study's database last
    its dilated time: the study's write time divided by s (None: the study states none).
    This machine's own write (about 0.14 ms, pg_test_fsync) comes on top, small beside it."""
    _check_scale(scale)
    ms = machines.commit_ms.get(str(study))
    return None if ms is None else round(ms / scale, 3)


def client_speed(machines: Machines, fitted: dict[str, float]) -> float | None:
    """The client role's speed factor by its rule; None: clients run without a budget."""
    same_as = machines.client_same_as
    if same_as == "unbudgeted":
        return None
    return machines.speed_upper if same_as == "upper" else float(fitted[same_as])


def speed_factors(
    machines: Machines, fitted: dict[str, float]
) -> dict[str, dict[str, float | None]]:
    """Every study's three speed factors from the fitted ones, keyed by target name: a role
    takes the factor of the target that serves its study (the client follows its rule).

    One role may need a factor per study: the study's own software ran on the machine, and
    a speed factor carries how much CPU our implementation of that study's design needs
    beside it, not only the machine's speed."""
    missing = sorted(set(machines.targets) - set(fitted))
    if missing:
        raise ScaleModelError(f"no speed factor for targets {missing}")
    out: dict[str, dict[str, float | None]] = {}
    for study in machines.studies:
        factors: dict[str, float | None] = {}
        for name, target in machines.targets.items():
            if study in target.studies:
                f = float(fitted[name])
                if not (math.isfinite(f) and f > 0):
                    raise ScaleModelError(f"speed factor of {name} must be positive, got {f!r}")
                factors[target.role] = f
        for role, same_as in machines.unfitted.get(study, {}).items():
            factors[role] = machines.speed_upper if same_as == "upper" else factors[same_as]
        lacking = [r for r in ROLES if r != "client" and r not in factors]
        if lacking:
            raise ScaleModelError(f"no speed factor for the {lacking} of study {study}")
        factors["client"] = client_speed(machines, factors)  # type: ignore[arg-type]
        out[study] = {role: factors[role] for role in ROLES}
    return out


def budgets_cores(
    machines: Machines, study: str | int, scale: float, speed: dict[str, float | None]
) -> dict[str, float | None]:
    """CPU budget of one host per role: vCPUs times s times the role's speed factor (None
    for a role without a speed factor: unbudgeted)."""
    _check_scale(scale)
    out: dict[str, float | None] = {}
    for role, t in machines.roles(study).items():
        f = speed[role]
        out[role] = None if f is None else round(t.vcpus * scale * f, 4)
    return out


# The middleware's default --server-timeout-ms, a time of the study's machines.
SERVER_TIMEOUT_MS = 1000


def server_timeout_ms(scale: float) -> int:
    """The middleware's server timeout on a testbed at scale s: 1 s of the study's time
    lasts 1/s s here, so a reply that the study's middleware would have waited for is not
    failed by the dilated testbed's (at s = 0.05, 1 s would be 50 ms of the study's time)."""
    _check_scale(scale)
    return round(SERVER_TIMEOUT_MS / scale)


def throughput_study(throughput: float, scale: float) -> float:
    """A measured throughput in the study's time: divided by s."""
    _check_scale(scale)
    return throughput / scale


def time_study(duration: float, scale: float) -> float:
    """A measured time in the study's time: multiplied by s."""
    _check_scale(scale)
    return duration * scale


def read_speed_factors(path: Path, study: str | int) -> dict[str, float | None]:
    """The speed factor of every role of one study from a profile's calibration.json."""
    try:
        factors = json.loads(path.read_text())["speed_factors"][str(study)]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ScaleModelError(f"{path}: no speed factors for study {study}: {err}") from err
    if not isinstance(factors, dict) or sorted(factors) != sorted(ROLES):
        raise ScaleModelError(f"{path}: speed_factors.{study} must name {', '.join(ROLES)}")
    return {role: None if factors[role] is None else float(factors[role]) for role in ROLES}
