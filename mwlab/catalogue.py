"""The experiment catalogue: families of runs, expanded into experiment points for a profile."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from common import scalemodel
from common.paths import CATALOGUE, WORKFLOWS
from testbed import cpuaccount, cpubudget, scaledpoint, series
from testbed.point import UNSCALED, Point, describe_error

CATALOGUE_SCHEMA = WORKFLOWS / "catalogue.schema.yaml"
PROFILE_SCHEMA = WORKFLOWS / "config.schema.yaml"


DESIGNS = ("2018", "2016")  # the middleware's designs; 2018 is its default


class CatalogueError(ValueError):
    """The catalogue or a profile is invalid; the message names the file and the problem."""


@dataclass(frozen=True)
class Factor:
    """One swept factor of a family: level names in catalogue order and what each one sets."""

    name: str
    levels: tuple[str, ...]
    overrides: dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Family:
    name: str
    study: int
    section: str
    title: str
    measured: tuple[str, ...]
    design: str
    split: str | None
    # "isolated" where the family's points cannot run in series; None: the profile's choice.
    protocol: str | None
    # True where a trend over the run is the family's result (a stability run): an unstable
    # run is not measured again for it.
    trend_is_result: bool
    factors: tuple[Factor, ...]
    fixed: dict[str, Any]
    repetitions: int
    duration_s: float
    warmup_s: float
    cooldown_s: float


@dataclass(frozen=True)
class PlannedRun:
    """One repetition of one experiment point."""

    family: str
    point: str
    repetition: int
    levels: dict[str, str]
    spec: dict[str, Any] = field(repr=False)
    # Emulated points under the scale model: the study whose machines they emulate. Their CPU
    # budgets come from the profile's calibration when they run (common.scalemodel).
    scale_model: dict[str, Any] | None = field(default=None, repr=False)
    # The series (one run of a topology, testbed/series.py) that measures this point, as a
    # path below `series/`; None: the point runs on its own.
    series: str | None = None

    @property
    def path(self) -> str:
        """Directory of the run below the profile's `runs/` folder."""
        return f"{self.family}/{self.point}/rep{self.repetition}"


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except OSError as err:
        raise CatalogueError(f"{path}: cannot read: {err}") from err
    except yaml.YAMLError as err:
        raise CatalogueError(f"{path}: not valid YAML: {err}") from err


def _validate(document: Any, schema_path: Path, source: Path | str) -> None:
    schema = _read_yaml(schema_path)
    try:
        jsonschema.validate(document, schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise CatalogueError(f"{source}: at {where}: {err.message}") from err


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Deep merge: nested mappings merge, everything else is replaced."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _set_path(path: str, value: Any) -> dict[str, Any]:
    head, *rest = path.split(".")
    return {head: _set_path(".".join(rest), value) if rest else value}


def _level_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _factor(name: str, raw: dict[str, Any], source: str) -> Factor:
    path = raw.get("path")
    levels = raw["levels"]
    overrides: dict[str, dict[str, Any]] = {}
    if isinstance(levels, list):
        if path is None:
            raise CatalogueError(f"{source}: factor {name}: a list of levels needs a path")
        for value in levels:
            overrides[_level_name(value)] = _set_path(path, value)
    else:
        for level, value in levels.items():
            if isinstance(value, dict):
                if path is not None:
                    raise CatalogueError(
                        f"{source}: factor {name}: level {level} sets fields, so drop the path"
                    )
                overrides[str(level)] = value
            elif path is None:
                raise CatalogueError(f"{source}: factor {name}: level {level} needs a path")
            else:
                overrides[str(level)] = _set_path(path, value)
    if len(overrides) != len(levels):
        raise CatalogueError(f"{source}: factor {name}: level names are not unique")
    return Factor(name, tuple(overrides), overrides)


def load_catalogue(path: Path = CATALOGUE) -> dict[str, Family]:
    """Reads and validates the catalogue."""
    document = _read_yaml(path)
    _validate(document, CATALOGUE_SCHEMA, path)
    defaults = document["defaults"]
    families: dict[str, Family] = {}
    for name, raw in document["families"].items():
        source = f"{path}: family {name}"
        factors = tuple(_factor(f, spec, source) for f, spec in raw["factors"].items())
        split = raw.get("split")
        if split is not None and split not in raw["factors"]:
            raise CatalogueError(f"{source}: split factor {split} is not a factor")
        if raw.get("design") == "factorial" and any(
            len(f.levels) != 2 for f in factors if f.name != split
        ):
            raise CatalogueError(f"{source}: a factorial design needs two levels per factor")
        families[name] = Family(
            name=name,
            study=raw["study"],
            section=raw["section"],
            title=raw["title"],
            measured=tuple(raw["measured"]),
            design=raw.get("design", "sweep"),
            split=split,
            protocol=raw.get("protocol"),
            trend_is_result=raw.get("trend") == "result",
            factors=factors,
            fixed=merge(defaults["fixed"], raw.get("fixed", {})),
            repetitions=defaults["repetitions"],
            duration_s=defaults["duration_s"],
            warmup_s=defaults["warmup_s"],
            cooldown_s=defaults["cooldown_s"],
        )
    return families


def load_profile(config: dict[str, Any], source: str = "profile") -> dict[str, Any]:
    """Validates a profile configuration (the Snakemake config) and returns it."""
    _validate(config, PROFILE_SCHEMA, source)
    return config


def _resolve_replication(spec: dict[str, Any], where: str) -> None:
    middleware = spec.get("middleware", {})
    replication = middleware.get("replication", "all")
    servers = int(spec["servers"])
    if replication == "all":
        resolved = None
    elif replication == "half":
        resolved = math.ceil(servers / 2)
    elif isinstance(replication, int) and 1 <= replication <= servers:
        resolved = replication
    else:
        raise CatalogueError(
            f"{where}: replication {replication!r} is not 1..{servers}, half or all"
        )
    middleware["replication"] = resolved
    spec["middleware"] = middleware


def _resolve_design(spec: dict[str, Any], where: str) -> None:
    """`middleware.design` as the middleware's flag value (YAML may read 2016 as a number);
    a point that does not set it runs the middleware's default."""
    middleware = spec.get("middleware", {})
    if "design" not in middleware:
        return
    design = middleware["design"]
    if isinstance(design, bool) or str(design) not in DESIGNS:
        raise CatalogueError(f"{where}: design {design!r} is not one of {', '.join(DESIGNS)}")
    middleware["design"] = str(design)


def design_of(spec: dict[str, Any]) -> str:
    """The design a planned point runs."""
    return str(spec.get("middleware", {}).get("design", DESIGNS[0]))


def family_settings(family: Family, profile: dict[str, Any]) -> dict[str, Any]:
    """Run protocol of a family under a profile: repetitions, run length, trimmed edges."""
    run = profile.get("run", {})
    own = profile.get("families", {}).get(family.name, {})
    return {
        "repetitions": own.get("repetitions", run.get("repetitions", family.repetitions)),
        "duration_s": own.get("duration_s", run.get("duration_s", family.duration_s)),
        # Write-heavy points (CPU-bound on the scale model, so noisier) may run longer.
        "write_duration_s": own.get("write_duration_s", run.get("write_duration_s")),
        "warmup_s": own.get("warmup_s", run.get("warmup_s", family.warmup_s)),
        "cooldown_s": own.get("cooldown_s", run.get("cooldown_s", family.cooldown_s)),
        # `series`: the points of one topology share one run of it; `isolated`: one run each.
        "protocol": _protocol(family, own.get("protocol"), run.get("protocol", "isolated")),
    }


def _protocol(family: Family, own: str | None, general: str) -> str:
    """The protocol the profile asks of the family (its own entry, else the profile's), unless
    the catalogue has the family run isolated: then a profile's general choice gives way, and
    a profile that asks the family itself for a series is refused."""
    if family.protocol is None:
        return own or general
    if own is not None and own != family.protocol:
        raise CatalogueError(
            f"family {family.name} runs {family.protocol} (workflows/catalogue.yaml): its points"
            f" cannot run {own}"
        )
    return family.protocol


def enabled(family: Family, profile: dict[str, Any]) -> bool:
    """On unless the profile turns the family off or plans only other studies."""
    studies = profile.get("studies")
    if studies is not None and str(family.study) not in {str(s) for s in studies}:
        return False
    return bool(profile.get("families", {}).get(family.name, {}).get("enabled", True))


def pinned_inventory(profile: dict[str, Any], study: int | str) -> str:
    """The inventory a study's ssh runs use: its machines' as `mwlab preflight` checked them,
    with their host keys pinned (workflows/rules/preflight.smk writes it)."""
    return f"{profile['results']}/hosts/{study}/inventory.yaml"


def selected_levels(family: Family, profile: dict[str, Any]) -> list[tuple[str, ...]]:
    """Level names per factor that the profile runs, in catalogue order."""
    chosen = profile.get("families", {}).get(family.name, {}).get("levels", {})
    out: list[tuple[str, ...]] = []
    for factor in family.factors:
        if factor.name not in chosen:
            out.append(factor.levels)
            continue
        wanted = [_level_name(v) for v in chosen[factor.name]]
        unknown = [w for w in wanted if w not in factor.levels]
        if unknown:
            raise CatalogueError(
                f"profile {profile.get('profile')}: family {family.name}, factor {factor.name}:"
                f" unknown levels {unknown}; the catalogue has {list(factor.levels)}"
            )
        out.append(tuple(level for level in factor.levels if level in wanted))
    for name in chosen:
        if name not in {f.name for f in family.factors}:
            raise CatalogueError(
                f"profile {profile.get('profile')}: family {family.name} has no factor {name}"
            )
    return out


def scale_settings(family: Family | None, profile: dict[str, Any]) -> dict[str, Any]:
    """The scale model of a family under a profile: factor s and whether the model applies."""
    base = {"factor": UNSCALED, "model": False, **profile.get("scale", {})}
    if family is None:
        return base
    own_study = base.get("studies", {}).get(str(family.study))
    if own_study is not None:
        base["factor"] = own_study
    return {**base, **profile.get("families", {}).get(family.name, {}).get("scale", {})}


def hosts_of(family: Family, profile: dict[str, Any]) -> str:
    return str(profile.get("families", {}).get(family.name, {}).get("hosts", profile["hosts"]))


def _apply_scale(
    spec: dict[str, Any], study: int | str, hosts: str, scale: dict[str, Any], where: str
) -> dict[str, Any] | None:
    """Sets `scale` (and on emulated hosts under the model, caps and delays) on a point; the
    study's machines when the model applies, else None. A point whose budgets could not fit
    this machine fails the plan."""
    multiple = spec.pop("scale_multiple", 1)
    if isinstance(multiple, bool) or not isinstance(multiple, int | float) or multiple <= 0:
        raise CatalogueError(f"{where}: scale_multiple must be a positive number, got {multiple!r}")
    factor = float(scale["factor"]) * multiple
    spec["scale"] = factor
    if not scale["model"]:
        if factor != 1:
            raise CatalogueError(
                f"{where}: scale factor {factor:g} without the scale model; only emulated hosts"
                " under the model (profile `scale: {model: true}`) run time-dilated"
            )
        return None
    if hosts != "emulated":
        raise CatalogueError(
            f"{where}: the scale model needs emulated hosts, not {hosts}; local hosts and real"
            " machines run at scale 1 without it"
        )
    try:
        spec.update(scaledpoint.plan_fields(_machines(), study, factor, spec, where))
    except scalemodel.ScaleModelError as err:
        raise CatalogueError(str(err)) from err
    # The middleware's own timeouts run on the testbed's clock: dilated like every time.
    middleware = spec.setdefault("middleware", {})
    middleware.setdefault("server_timeout_ms", scalemodel.server_timeout_ms(factor))
    if spec.get("system") == "simplemq":
        # This machine's disk is not dilated: PostgreSQL waits out the rest of the study's.
        delay = scalemodel.commit_delay_ms(_machines(), study, factor)
        if delay is not None:
            spec.setdefault("queue", {}).setdefault("commit_delay_ms", delay)
    return {"study": str(study)}


def _machines() -> scalemodel.Machines:
    try:
        return scalemodel.load_machines()
    except scalemodel.ScaleModelError as err:
        raise CatalogueError(str(err)) from err


def check_point(spec: dict[str, Any], where: str, cores: float) -> Point:
    """What a run checks before it starts, done when the plan is made: the point is a valid
    `testbed.point.Point` and its CPU budgets fit this machine of `cores` cores; the point as
    validated. Whether its load generator is installed is left to the run."""
    try:
        point = Point.model_validate(spec)
    except ValueError as err:
        raise CatalogueError(f"{where}: invalid point: {describe_error(err)}") from err
    unfit = cpubudget.check_fits(point, cores)
    if unfit is not None:
        raise CatalogueError(f"{where}: {unfit}")
    return point


def with_workers(spec: dict[str, Any], point: Point) -> dict[str, Any]:
    """`spec` with the worker count its middlewares run (the point model's one default,
    testbed.point.DEFAULT_WORKERS, where the catalogue states none), so that the plan, its
    tables and the launched command line carry one number (SimpleMQ's, testbed.point's
    DEFAULT_MQ_WORKERS, in `queue`). Points without a middleware stay as they are."""
    if point.middlewares == 0:
        return spec
    if point.queue is not None:
        return merge(spec, {"queue": {"workers": point.queue.workers}})
    return merge(spec, {"middleware": {"workers": point.middleware.workers}})


def point_name(levels: dict[str, str]) -> str:
    return ",".join(f"{factor}={level}" for factor, level in levels.items())


def expand(
    families: dict[str, Family], profile: dict[str, Any], cores: float | None = None
) -> list[PlannedRun]:
    """Every run of every enabled family under the profile, each point checked as its run
    would check it (`check_point`) on a machine of `cores` cores (default: this one)."""
    cores = float(cpuaccount.cores()) if cores is None else cores
    runs: list[PlannedRun] = []
    for family in families.values():
        if not enabled(family, profile):
            continue
        settings = family_settings(family, profile)
        profile_fixed = profile.get("families", {}).get(family.name, {}).get("fixed", {})
        for combination in itertools.product(*selected_levels(family, profile)):
            levels = {f.name: level for f, level in zip(family.factors, combination, strict=True)}
            spec = family.fixed
            for factor, level in zip(family.factors, combination, strict=True):
                spec = merge(spec, factor.overrides[level])
            spec = merge(spec, profile_fixed)
            name = point_name(levels)
            where = f"profile {profile.get('profile')}: family {family.name}, point {name}"
            _resolve_replication(spec, f"family {family.name}, point {name}")
            _resolve_design(spec, f"family {family.name}, point {name}")
            spec["hosts"] = hosts_of(family, profile)
            model = _apply_scale(
                spec, family.study, spec["hosts"], scale_settings(family, profile), where
            )
            if spec["hosts"] == "ssh":
                if str(family.study) not in profile.get("inventories", {}):
                    raise CatalogueError(
                        f"{where}: the {family.study} study runs on ssh machines but the"
                        f" profile names no inventory for it (inventories:"
                        f' {{"{family.study}": FILE}}, or studies: to plan other studies)'
                    )
                spec["inventory"] = pinned_inventory(profile, family.study)
            spec["duration_s"] = settings["duration_s"]
            if settings["write_duration_s"] and _writes(spec):
                spec["duration_s"] = settings["write_duration_s"]
            spec["warmup_s"] = settings["warmup_s"]
            spec["cooldown_s"] = settings["cooldown_s"]
            point = check_point({**spec, "name": f"{family.name}/{name}/rep1"}, where, cores)
            spec = with_workers(spec, point)
            for rep in range(1, settings["repetitions"] + 1):
                runs.append(
                    PlannedRun(
                        family=family.name,
                        point=name,
                        repetition=rep,
                        levels=levels,
                        spec={**spec, "name": f"{family.name}/{name}/rep{rep}", "repetition": rep},
                        scale_model=model,
                    )
                )
        if settings["protocol"] == "series":
            runs = [r for r in runs if r.family != family.name] + in_series(
                [r for r in runs if r.family == family.name]
            )
    return runs


def _writes(spec: dict[str, Any]) -> bool:
    """A write-heavy point: at least as many SETs as GETs."""
    sets, gets = (int(x) for x in str(spec.get("workload", {}).get("ratio", "0:1")).split(":"))
    return sets > 0 and sets >= gets


def in_series(runs: list[PlannedRun]) -> list[PlannedRun]:
    """Groups one family's runs into series: per repetition, the points that share a
    topology. A series is named by the levels its points have in common."""
    groups: dict[tuple[int, str], list[PlannedRun]] = {}
    for r in runs:
        try:
            topology = series.topology_of(Point.model_validate(r.spec))
        except ValueError as e:
            raise CatalogueError(f"{r.path}: invalid point: {describe_error(e)}") from e
        key = (r.repetition, json.dumps(topology, sort_keys=True))
        groups.setdefault(key, []).append(r)
    out: list[PlannedRun] = []
    names: set[tuple[int, str]] = set()
    for (rep, _), members in groups.items():
        common = [
            f"{k}={v}"
            for k, v in members[0].levels.items()
            if all(m.levels.get(k) == v for m in members)
        ]
        name = ",".join(common) or "all"
        if (rep, name) in names:
            name = f"{name},{len(names) + 1}"
        names.add((rep, name))
        key = f"{members[0].family}/{name}/rep{rep}"
        out.extend(dataclasses.replace(m, series=key) for m in members)
    return out


CALIBRATION = "calibration"  # the family name of the calibration runs


def measured_again_when_unstable(family: str, families: dict[str, Family]) -> bool:
    """Whether a run of `family` that fails the stability check is measured again (up to the
    profile's `run.reruns`): not a calibration run, nor one of a family whose trend is its
    result (`trend: result`); those are measured again only on a disturbed machine."""
    return family != CALIBRATION and not families[family].trend_is_result


def calibration_needed(runs: list[PlannedRun]) -> bool:
    return any(run.scale_model is not None for run in runs)


def calibration_settings(profile: dict[str, Any]) -> dict[str, Any]:
    """Scale factor, hosts, run protocol and speed levels of the profile's calibration."""
    own = profile.get("calibration", {})
    run = profile.get("run", {})
    return {
        "factor": float(own.get("factor", scale_settings(None, profile)["factor"])),
        # A study's own factor for its targets (default: the profile's per-study factors).
        "studies": {
            str(k): float(v)
            for k, v in own.get("studies", scale_settings(None, profile).get("studies", {})).items()
        },
        "hosts": own.get("hosts", "emulated"),
        "repetitions": int(own.get("repetitions", run.get("repetitions", 1))),
        "duration_s": float(own.get("duration_s", run.get("duration_s", 5))),
        "warmup_s": float(own.get("warmup_s", run.get("warmup_s", 0))),
        "cooldown_s": float(own.get("cooldown_s", run.get("cooldown_s", 0))),
        # A profile's own levels replace every target's (smoke: one level, to be quick).
        "speeds": [float(x) for x in own["speeds"]] if "speeds" in own else None,
    }


def calibration_plan(
    profile: dict[str, Any], catalogue: Path = CATALOGUE, cores: float | None = None
) -> list[PlannedRun]:
    """The calibration runs of a profile: each target's point with its role at each speed
    level and the other roles at the upper speed bound, fully budgeted (and checked as in
    `expand`)."""
    cores = float(cpuaccount.cores()) if cores is None else cores
    machines = _machines()
    settings = calibration_settings(profile)
    defaults = _read_yaml(catalogue)["defaults"]["fixed"]
    runs: list[PlannedRun] = []
    for target in machines.targets.values():
        speeds = settings["speeds"] or target.speeds or machines.calibration_speeds
        for speed in speeds:
            if not machines.speed_lower <= speed <= machines.speed_upper:
                raise CatalogueError(
                    f"profile {profile.get('profile')}: calibration speed {speed:g} is outside"
                    f" [{machines.speed_lower:g}, {machines.speed_upper:g}]"
                )
            levels = {"target": target.name, "speed": _level_name(speed)}
            name = point_name(levels)
            where = f"profile {profile.get('profile')}: calibration point {name}"
            spec = merge(defaults, target.point)
            _resolve_replication(spec, where)
            spec["hosts"] = settings["hosts"]
            factor = settings["studies"].get(str(target.study), settings["factor"])
            _apply_scale(
                spec, target.study, spec["hosts"], {"factor": factor, "model": True}, where
            )
            factors: dict[str, float | None] = dict.fromkeys(scalemodel.ROLES, machines.speed_upper)
            factors["client"] = scalemodel.client_speed(machines, factors)  # type: ignore[arg-type]
            factors[target.role] = speed
            for key in ("duration_s", "warmup_s", "cooldown_s"):
                spec[key] = settings[key]
            for rep in range(1, settings["repetitions"] + 1):
                full = {**spec, "name": f"{CALIBRATION}/{name}/rep{rep}", "repetition": rep}
                try:
                    full = scaledpoint.with_budgets(full, machines, target.study, factors)
                except scalemodel.ScaleModelError as err:
                    raise CatalogueError(f"{where}: {err}") from err
                full = with_workers(full, check_point(full, where, cores))
                runs.append(PlannedRun(CALIBRATION, name, rep, levels, full))
    return runs
