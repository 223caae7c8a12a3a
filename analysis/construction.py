"""Which verdicts follow from how the scale model is built: rules applied to every
finding from its own points, so that no verdict is labelled by hand.

A verdict is *by construction* when the quantity it judges is set by the scale model rather
than measured against it:

- **link cap**: the finding judges a throughput, and a link binds at one of the levels it
  compares (at the highest load of that level's points): the link's cap is the study's
  measured bandwidth times s, so it sets that level. A response time or a share under a
  link that binds at every level alike is the system's: how it spreads its requests over
  the links decides it;
- **delay-bound pool**: the finding judges a throughput, and at one of the levels it compares
  the middleware's threads bind, each holding a request over the round trip of a delay
  derived from the study's number (`POOL_DELAYS`): the threads over that hold time (Little's
  law) set that level, as a link's cap would;
- **fitted**: at every level it compares the points are where the calibration fitted a speed
  factor (a calibration target's configuration, the level's best point at the target's own
  load, and the fitted role's CPU budget binding there: a factor sets only what its budget
  bounds), or where a delay was derived from the study's number (machines.yaml `derived_at`),
  and the finding judges a level's throughput
  there, or its mean response time while the fitted role's CPU budget binds: the fit put the
  study's throughput there, and in a closed loop Little's law sets from it the time a request
  spends in the system (R = N/X). A fit pins one level: how the throughput changes between
  the loads of that configuration, or at which load it peaks (`SHAPE_FACTORS`, `max_level`),
  is the system's, and so is the share of its time a request spends in one part;
- **derived delay**: the finding judges a share of a request's time, or a change of a time,
  and at every level most of the time it judges is the round trip of a delay derived from
  the study's number (`DELAY_PART`): the derived delay, not the system, sets that part, and a
  constant of its size dilutes the change;

The sites are computed from the calibration's record (its targets' points) and the plan's
point specifications (`fitted_sites`), not listed per finding.

Apart from these, `assumed_role` says when a finding is *not testable here*: a role of the
system at its points runs at an assumed speed (machines.yaml `unfitted`), which no study
number fixes, and its budget would bind there at the slowest factor it could plausibly have
(that of a fitted role of the same machine type), so the model does not hold that role's
share of the result. So is a paired change that leaves the database's busy sessions as
they were (`sessions_fixed`): the one fitted role sees the same load at both levels, and the
change lies wholly in the roles outside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.bottleneck import SATURATED
from analysis.report import factor_words as fw

# The keys of a point that set its load, not its configuration: a site holds every client
# count of its configuration.
LOAD_KEYS = frozenset({"virtual_clients"})

LINK_CAP = "link cap"
DELAY_POOL = "delay-bound pool"
FITTED = "fitted"


# The measures whose estimate is a throughput (or a change or ratio of throughputs): only
# those are set where a fit put the study's throughput.
THROUGHPUT_MEASURES = frozenset(
    {"max_throughput", "study_ratio", "link_ratio", "gain_per_doubling", "factorial_top",
     "max_level"}
)  # fmt: skip
# The measures whose estimate is a time that a fitted throughput sets (R = N/X in the
# closed loop): a share of it is how the system spends that time, and the system's.
TIME_MEASURES = frozenset({"response"})
# A measure along these factors compares loads of one configuration: a fit pins one of
# them, not the curve between them.
SHAPE_FACTORS = frozenset({"level_clients", "level_virtual_clients"})
# The measures that take a maximum over a selection's loads: its value lies where the
# throughput peaks, so what shapes the curve over the loads shapes it too (`max_level` judges
# where the peak lies, and is a shape at any selection).
MAXIMA = frozenset({"max_throughput", "study_ratio"})
DERIVED_DELAY = "derived delay"
# The share of a judged part above which a derived delay's round trip sets it.
DELAY_PART = 0.5


def judges_throughput(measure: Mapping[str, Any]) -> bool:
    """Whether the quantity a measure judges is a throughput: a throughput measure, a paired
    change of the throughput (its default metric), or a model's error in throughput."""
    kind = measure.get("kind")
    if kind in THROUGHPUT_MEASURES or kind == "mva2018":
        return True
    if kind == "paired":
        return measure.get("metric", "throughput_ops") == "throughput_ops"
    return kind == "model_error" and measure.get("what") == "throughput"


@dataclass(frozen=True)
class Site:
    """Where the scale model was fitted to a study number: the points of one configuration."""

    name: str  # the calibration target, or the delay's pair
    what: str  # how the report names the fitted parameter
    study: str
    points: frozenset[tuple[str, str]]  # (family, point), every load of the configuration
    role: str = ""  # the role whose speed factor was fitted there; "" for a delay
    # The points at the fitted load itself (None: every load, as for a derived delay, whose
    # round trip is the same at every load).
    fitted_points: frozenset[tuple[str, str]] | None = None


@dataclass(frozen=True)
class Decision:
    # LINK_CAP, DELAY_POOL, FITTED, DERIVED_DELAY (by construction) or ASSUMED_SPEED (not
    # testable here); "" when the verdict is evidence.
    rule: str
    reason: str
    short: str = ""  # the reason in a few words, for a table row

    @property
    def applies(self) -> bool:
        return bool(self.rule)


NOT_BY_CONSTRUCTION = Decision("", "", "")


def _same(want: Any, have: Any) -> bool:
    # Specifications spell some values as numbers and others as strings (design: 2016).
    return str(want) == str(have)


def matches(want: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    """Whether a point specification holds every field of `want` (nested), the load aside."""
    for key, value in want.items():
        if key in LOAD_KEYS:
            continue
        if isinstance(value, Mapping):
            inner = spec.get(key)
            if not isinstance(inner, Mapping) or not matches(value, inner):
                return False
        elif key not in spec or not _same(value, spec[key]):
            return False
    return True


def fitted_sites(
    targets: Sequence[Mapping[str, Any]],
    delay_sites: Mapping[str, Mapping[str, Mapping[str, Any]]],
    specs: Mapping[str, Mapping[str, Mapping[str, Any]]],
) -> list[Site]:
    """The sites of the calibration's targets (calibration.json `targets`: name, role, study,
    point) and of the derived delays (study -> pair -> point), among the planned points
    (`specs`: family -> point -> its specification)."""

    def where(point: Mapping[str, Any], load: bool = False) -> frozenset[tuple[str, str]]:
        return frozenset(
            (family, name)
            for family, points in specs.items()
            for name, spec in points.items()
            if matches(point, spec)
            and (not load or all(_same(point[k], spec.get(k)) for k in LOAD_KEYS if k in point))
        )

    sites = [
        Site(
            str(t["name"]),
            f"the {t['role']}'s speed factor (to {fw.words(str(t['name']), fw.TARGET_WORDS)})",
            str(t["study"]),
            where(t["point"]),
            str(t["role"]),
            where(t["point"], load=True),
        )
        for t in targets
    ]
    sites += [
        Site(pair, f"the {pair.replace('_', '-')} delay of {study}", str(study), where(point))
        for study, pairs in delay_sites.items()
        for pair, point in pairs.items()
    ]
    return [s for s in sites if s.points]


def _order(value: object) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def select(points: pd.DataFrame, where: Mapping[str, object] | None) -> pd.DataFrame:
    """The rows of a points table that hold the wanted levels (a list: any of them); a column
    the table lacks selects nothing."""
    for column, value in (where or {}).items():
        if column not in points.columns:
            return points.iloc[0:0]
        wanted = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        points = points[points[column].astype(str).isin(wanted)]
    return points


def _level(points: pd.DataFrame, factor: str, level: object) -> str:
    values = sorted(points[factor].dropna().astype(str).unique(), key=_order)
    if not values:
        return str(level)
    return {"min": values[0], "max": values[-1]}.get(str(level), str(level))


def selections(
    measure: Mapping[str, Any], points: Mapping[str, pd.DataFrame]
) -> list[tuple[str, dict[str, object]]]:
    """The (family, levels) of each level a finding's measure compares: its two sides, the two
    levels of its factor, every level of a per-doubling gain, or its one selection."""
    low, high = measure.get("low"), measure.get("high")
    if isinstance(low, Mapping) and isinstance(high, Mapping):
        return [(str(s["family"]), dict(s.get("where") or {})) for s in (low, high)]
    family = str(measure.get("family", ""))
    where = dict(measure.get("where") or {})
    factor = measure.get("factor")
    table = points.get(family)
    if factor is None or table is None or factor not in table.columns:
        return [(family, where)]
    chosen = select(table, where)
    if measure.get("kind") == "gain_per_doubling":
        levels = sorted(chosen[factor].dropna().astype(str).unique(), key=_order)
    else:
        levels = [
            _level(chosen, factor, measure.get(k, d)) for k, d in (("low", "min"), ("high", "max"))
        ]
    return [(family, {**where, factor: level}) for level in levels]


def _compared_points(
    measure: Mapping[str, Any], points: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """The client rows of every point the measure's levels compare."""
    parts = []
    for family, where in selections(measure, points):
        table = points.get(family)
        if table is None:
            return pd.DataFrame()
        rows = select(table, where)
        if "side" in rows.columns:
            rows = rows[(rows["side"] == "client") & (rows["type"] == "all")]
        parts.append(rows)
    return pd.concat(parts) if parts else pd.DataFrame()


def best_point(rows: pd.DataFrame) -> str | None:
    """The point of highest client throughput among a level's rows: the one a level that
    takes its best load stands for."""
    if "side" in rows.columns:
        rows = rows[(rows["side"] == "client") & (rows["type"] == "all")]
    column = next(
        (c for c in ("throughput_study_mean", "throughput_ops_mean") if c in rows.columns), None
    )
    if rows.empty or column is None or rows[column].isna().all():
        return None
    return str(rows.loc[rows[column].idxmax(), "point"])


# How far a level's best point may lie above its value at the fitted load and the fit still
# pin the level: the report's one tolerance for a value. Within it the best point lies on the
# fitted plateau, and the level stands at the fitted value whichever load it is read at.
PLATEAU = 0.10


def _throughput(rows: pd.DataFrame) -> pd.Series:
    """Client throughput per point of a level's rows."""
    if "side" in rows.columns:
        rows = rows[(rows["side"] == "client") & (rows["type"] == "all")]
    column = next(
        (c for c in ("throughput_study_mean", "throughput_ops_mean") if c in rows.columns), None
    )
    if column is None:
        return pd.Series(dtype=float)
    return rows.set_index(rows["point"].astype(str))[column].dropna()


def _pinned(family: str, rows: pd.DataFrame, fitted: frozenset | set | None) -> bool:
    """Whether a fit pins a level: its best point is at the fitted load, or lies within
    PLATEAU of the level's value there."""
    if fitted is None:
        return True
    best = best_point(rows)
    if (family, str(best)) in fitted:
        return True
    x = _throughput(rows)
    at_fit = [x[p] for p in x.index if (family, p) in fitted]
    return bool(at_fit) and best in x.index and x[best] <= (1 + PLATEAU) * max(at_fit)


def judged_point(family: str, rows: pd.DataFrame, sites: Iterable[Site]) -> str | None:
    """The point a level that takes its best load is judged at: its best point, or, where a
    fit pins the level on its plateau (`_pinned`) without being at the best point, the fitted
    point: the level's value is the fit's there, and so is what bounds it."""
    best = best_point(rows)
    x = _throughput(rows)
    for site in sites:
        if site.fitted_points is None or (family, str(best)) in site.fitted_points:
            continue
        at_fit = [p for p in x.index if (family, p) in site.fitted_points]
        if at_fit and _pinned(family, rows, site.fitted_points):
            return max(at_fit, key=lambda p: x[p])
    return best


def _binds(site: Site, bottleneck: str | None) -> bool:
    """Whether a site's fit can set a level bound by `bottleneck` (None: not known): a speed
    factor sets only a level its role's CPU budget binds; a derived delay any level."""
    return not site.role or bottleneck is None or bottleneck == f"{site.role} CPU"


def _covering(
    measure: Mapping[str, Any],
    points: Mapping[str, pd.DataFrame],
    sites: Sequence[Site],
    level_bottlenecks: Sequence[str] = (),
) -> list[Site] | None:
    """The site that holds every point of each level the measure compares, with the level
    pinned by the fit (`_pinned`: its best point at the fitted load, or on the fitted
    plateau) and, for a speed factor, bound by its role's CPU budget there (`_binds`), or
    None where a level lies outside every site."""
    covering: list[Site] = []
    chosen = selections(measure, points)
    known = len(level_bottlenecks) == len(chosen)
    for i, (family, where) in enumerate(chosen):
        table = points.get(family)
        if table is None:
            return None
        rows = select(table, where)
        names = {(family, str(p)) for p in rows["point"].unique()}
        site = next(
            (
                s
                for s in sites
                if names
                and names <= s.points
                and _pinned(family, rows, s.fitted_points)
                and _binds(s, level_bottlenecks[i] if known else None)
            ),
            None,
        )
        if site is None:
            return None
        covering.append(site)
    return covering


def _fitted(
    measure: Mapping[str, Any],
    points: Mapping[str, pd.DataFrame],
    sites: Iterable[Site],
    bottleneck: str,
    level_bottlenecks: Sequence[str] = (),
) -> Decision:
    sites = list(sites)
    if measure.get("kind") == "max_level" or measure.get("factor") in SHAPE_FACTORS:
        return NOT_BY_CONSTRUCTION
    if judges_throughput(measure):
        covering = _covering(measure, points, sites, level_bottlenecks)
        if covering is None:
            return NOT_BY_CONSTRUCTION
        whats = "; ".join(dict.fromkeys(s.what for s in covering))
        return Decision(
            FITTED,
            "every level it compares was measured where the scale model was fitted to the"
            f" study's number ({whats}), so the fit set its throughput",
            f"fitted there ({whats})",
        )
    if measure.get("kind") not in TIME_MEASURES or not bottleneck.endswith(" CPU"):
        return NOT_BY_CONSTRUCTION
    # A time is set where the role whose speed was fitted there binds: its throughput is the
    # fit's, and the closed loop's R = N/X follows from it.
    role = bottleneck.removesuffix(" CPU")
    covering = _covering(measure, points, [s for s in sites if s.role == role])
    if covering is None:
        return NOT_BY_CONSTRUCTION
    whats = "; ".join(dict.fromkeys(s.what for s in covering))
    return Decision(
        FITTED,
        "every level it compares was measured where the scale model was fitted to the"
        f" study's number ({whats}) and the {role}'s CPU budget binds there: the fit set the"
        " throughput, and with it, by Little's law in the closed loop, the time a request"
        " spends in the system, of which the judged time is part",
        f"fitted there, the {role}'s budget binding ({whats})",
    )


# The thread pool a bottleneck names -> the delay pair its threads hold a request over.
POOL_DELAYS = {"middleware threads": "middleware_server"}


def _derived(study: str, pair: str, sites: Iterable[Site]) -> Site | None:
    """The site of a delay of `study` derived from a study number, if any."""
    return next((s for s in sites if not s.role and s.study == study and s.name == pair), None)


def _against_the_cap(
    levels: Sequence[str],
    interval: tuple[float, float] | None,
    capped: Callable[[str], bool] = lambda b: b.endswith(" link"),
) -> bool:
    """Whether a change between two levels runs against what a cap at one of them could make:
    a rise where only the high level is capped, a fall where only the low one is."""
    if interval is None or len(levels) != 2 or any(math.isnan(x) for x in interval):
        return False
    low, high = (capped(b) for b in levels)
    return (high and not low and interval[0] > 0) or (low and not high and interval[1] < 0)


def _pool_capped(levels: Sequence[str], interval: tuple[float, float] | None) -> bool:
    """Whether a pool bound over a delay caps the change (as a link's cap would)."""
    return not _against_the_cap(levels, interval, lambda b: b in POOL_DELAYS)


def claim_against(
    finding: Mapping[str, Any],
    levels: Sequence[str],
    capped: Callable[[str], bool],
    contradicted: bool,
) -> bool:
    """Whether the finding predicts a change against what a cap at one level could make (a
    cap only lowers the level it binds) and its interval does not contradict it."""
    if contradicted or len(levels) != 2:
        return False
    rule = finding.get("rule") or {}
    direction = str(rule.get("direction", ""))
    predicts_rise = direction in ("increase", "above")
    predicts_fall = direction in ("decrease", "below")
    low, high = (capped(b) for b in levels)
    # A capped low level makes a change look larger, a capped high one smaller.
    return (low and not high and predicts_fall) or (high and not low and predicts_rise)


def decide(
    finding: Mapping[str, Any],
    bottleneck: str,
    points: Mapping[str, pd.DataFrame],
    sites: Iterable[Site],
    level_bottlenecks: Sequence[str] = (),
    interval: tuple[float, float] | None = None,
    contradicted: bool = False,
) -> Decision:
    """Whether a finding's verdict is by construction, by the first rule that applies (link
    cap, delay-bound pool, fitted), from the bottleneck at its points, the
    bottleneck at each level it compares (`level_bottlenecks`; without them, the points' one)
    and the fitted sites.

    A cap can only lower the level it binds: where it binds the high level alone and the
    change's `interval` lies wholly above zero (or the low level alone and wholly below), the
    change is the system's, and neither the link-cap nor the pool rule applies. Neither
    applies either where the finding predicts a change against what the cap could make (a
    fall where only the low level is capped, a rise where only the high one is) and the
    interval does not contradict it (`claim_against`): the cap cannot have made such a verdict."""
    measure = finding["measure"]
    sites = list(sites)
    levels = list(level_bottlenecks or [bottleneck])
    where = "at its points"
    if level_bottlenecks:
        where = "at a level it compares"

    def bound(names: Sequence[str]) -> str:
        if not level_bottlenecks:
            return where
        return "at every level it compares" if len(names) == len(levels) else where

    def is_link(b: str) -> bool:
        return b.endswith(" link")

    capped = (
        judges_throughput(measure)
        and not _against_the_cap(level_bottlenecks, interval)
        and not claim_against(finding, level_bottlenecks, is_link, contradicted)
    )
    links = [b for b in levels if b.endswith(" link")]
    if links and capped:
        link = links[0]
        return Decision(
            LINK_CAP,
            f"it judges a throughput, the {link} binds {bound(links)}, and the link's cap is"
            " the study's bandwidth times s, so the cap, not the system, sets the result there",
            f"the {link}'s cap binds",
        )
    pools = [b for b in levels if b in POOL_DELAYS]
    delay = _derived(str(finding.get("study_of")), POOL_DELAYS[pools[0]], sites) if pools else None
    pooled = (
        judges_throughput(measure)
        and _pool_capped(level_bottlenecks, interval)
        and not claim_against(finding, level_bottlenecks, lambda b: b in POOL_DELAYS, contradicted)
    )
    if delay is not None and pooled:
        return Decision(
            DELAY_POOL,
            f"it judges a throughput, the {pools[0]} bind {bound(pools)}, and each holds a"
            f" request over the round trip of {delay.what}, derived from the study's number:"
            " the threads over that hold time (Little's law), not the system's speed, set the"
            " result there",
            f"the {pools[0]} bind over {delay.what}",
        )
    fitted = _fitted(measure, points, sites, bottleneck, level_bottlenecks)
    if fitted.applies:
        return fitted
    return NOT_BY_CONSTRUCTION


def delay_set(part_share: float | None, what: str) -> Decision:
    """Whether the time a finding judges is mostly a derived delay's round trip at every
    level (`part_share`: that round trip over the judged part's median, or over the largest
    level's mean of a change; `what`: the delay in words), which then sets it: a share of
    it, or a change of it, which a constant of that size dilutes."""
    if part_share is None or not part_share > DELAY_PART:
        return NOT_BY_CONSTRUCTION
    return Decision(
        DERIVED_DELAY,
        f"{100 * part_share:.0f} % or more of the time it judges is the round trip of {what},"
        " derived from the study's number: the delay, not the system, sets most of it",
        f"{100 * part_share:.0f} % of the time is the derived delay",
    )


def _roles_at(points: pd.DataFrame) -> set[str]:
    """The roles of the system that serve requests at the compared points."""
    roles = set()
    for role, column in (("middleware", "middlewares"), ("server", "servers")):
        if column in points.columns and (points[column].astype(float) > 0).any():
            roles.add(role)
    return roles


ASSUMED_SPEED = "assumed speed"


@dataclass(frozen=True)
class AssumedRole:
    """A role whose speed factor no study number fits (machines.yaml `unfitted`): why, the
    factor it runs at, and the slowest factor it could plausibly have (the factor fitted to
    a role of the same machine type in its study, else the search's lower bound)."""

    why: str
    speed: float
    slowest: float


def assumed_roles(
    unfitted: Mapping[str, Mapping[str, str]],
    speeds: Mapping[str, Mapping[str, float | None]],
    types: Mapping[str, Mapping[str, str]],
    lower: float,
) -> dict[str, dict[str, AssumedRole]]:
    """The assumed roles per study (`unfitted`: study -> role -> why), from the speed factors
    the calibration gave each role (`speeds`: study -> role -> factor) and the machine type of
    each role (`types`: study -> role -> type name)."""
    out: dict[str, dict[str, AssumedRole]] = {}
    for study, roles in unfitted.items():
        for role, why in roles.items():
            kin = [
                float(f)
                for other, f in speeds.get(study, {}).items()
                if other not in roles
                and f is not None
                and types.get(study, {}).get(other) == types.get(study, {}).get(role)
            ]
            speed = speeds.get(study, {}).get(role)
            out.setdefault(study, {})[role] = AssumedRole(
                why, float(speed) if speed is not None else math.nan, min(kin, default=lower)
            )
    return out


def _could_bind(compared: pd.DataFrame, role: str, assumed: AssumedRole) -> bool:
    """Whether the role's budget would bind at the compared points were its factor the
    slowest plausible one: its measured share of the budget, times its factor over the
    slowest. Without a measured share, it could."""
    column = f"cpu_util_{role}_mean"
    if column not in compared.columns or compared[column].isna().all():
        return True
    if not (assumed.speed > 0 and assumed.slowest > 0):
        return True
    used = float(compared[column].max()) * assumed.speed / assumed.slowest
    return used >= SATURATED


def assumed_role(
    finding: Mapping[str, Any],
    points: Mapping[str, pd.DataFrame],
    assumed: Mapping[str, Mapping[str, AssumedRole]],
) -> Decision:
    """Whether the finding is not testable here: a role that serves requests at the points
    it compares runs at an assumed speed (`assumed`: study -> role), and its budget would
    bind there at the slowest factor it could plausibly have, so the model does not hold
    that role's share of the result. A role that stays far from binding at any plausible
    factor leaves the result as measured, except in a paired change that leaves the
    database's busy sessions as they were: the database then sees the same load at both
    levels, and the change is the assumed roles' alone."""
    study = str(finding.get("study_of"))
    roles = assumed.get(study, {})
    if not roles:
        return NOT_BY_CONSTRUCTION
    compared = _compared_points(finding["measure"], points)
    serving = sorted(_roles_at(compared) & set(roles))
    if serving and sessions_fixed(finding["measure"], points):
        # The fitted database sees the same load at both levels: whatever differs between
        # them lies outside it, in roles no study number fixes, budget or not.
        role = serving[0]
        return Decision(
            ASSUMED_SPEED,
            "the database's busy sessions are the same at both levels it compares, so it sees"
            " the same load and the change can only come from the parts outside it; of those,"
            f" the {study} {role}'s speed is assumed, not fitted ({roles[role].why}), and the"
            " clients run under no budget, so the model does not hold what decides the change",
            "the change lies outside the database, in parts of assumed speed",
        )
    for role in serving:
        if not _could_bind(compared, role, roles[role]):
            continue
        return Decision(
            ASSUMED_SPEED,
            f"the {study} {role} serves at its points and its speed is assumed, not fitted"
            f" ({roles[role].why}), and its budget could bind there at a plausible factor, so"
            f" the model does not hold the {role}'s share of the result",
            f"the {role}'s speed is assumed, not fitted",
        )
    return NOT_BY_CONSTRUCTION


SEED_CONFIGURATION = "seed configuration"


def unmeasured_configuration(
    finding: Mapping[str, Any], points: Mapping[str, pd.DataFrame]
) -> Decision:
    """Whether the finding is not testable here because the seed made its claim at a
    configuration none of its compared points comes near (`seed_at`: a list of {column,
    value, words}, the seed's own configuration): a setting of ours more than PLATEAU away
    from the seed's at every compared point judges another system than the claim's."""
    wanted = finding.get("seed_at") or []
    if not wanted:
        return NOT_BY_CONSTRUCTION
    compared = _compared_points(finding["measure"], points)
    if compared.empty:
        return NOT_BY_CONSTRUCTION
    apart = []
    for w in wanted:
        column, value = str(w["column"]), float(w["value"])
        if column not in compared.columns:
            continue
        ours = sorted({float(v) for v in compared[column].dropna()})
        if ours and all(abs(v / value - 1) > PLATEAU for v in ours):
            shown = ", ".join(f"{v:g}" for v in ours)
            apart.append((f"{value:g} {w['words']}", f"{shown} {w['words']}"))
    if not apart:
        return NOT_BY_CONSTRUCTION
    seed = " and ".join(a for a, _ in apart)
    here = " and ".join(b for _, b in apart)
    return Decision(
        SEED_CONFIGURATION,
        f"the seed made the claim at {seed}, which no point measured comes within"
        f" {100 * PLATEAU:.0f} % of (ours: {here}), so our points judge another configuration"
        " than the claim's",
        "measured at another configuration than the seed's",
    )


ASSUMED_COMMIT = "assumed commit delay"


def _wal_share(
    measure: Mapping[str, Any],
    points: Mapping[str, pd.DataFrame],
    counters: Mapping[str, pd.DataFrame],
) -> float | None:
    """The share of the database's sampled session time spent waiting on the WAL (flushing
    commits) over the runs of every point the measure compares; None without samples."""
    waited = sampled = 0.0
    for family, where in selections(measure, points):
        table, c = points.get(family), counters.get(family)
        if table is None or c is None or "wait_wal" not in c.columns:
            continue
        chosen = set(select(table, where)["point"].astype(str))
        rows = c[c["point"].astype(str).isin(chosen)]
        waited += float(rows["wait_wal"].sum())
        sampled += float(rows["wait_samples"].sum())
    return waited / sampled if sampled > 0 else None


def _sessions(rows: pd.DataFrame) -> pd.Series:
    """The database sessions a point keeps busy: its clients, or, behind middlewares, at most
    their workers (each holds one connection; clients beyond them wait before a worker)."""
    clients = rows["clients_total"].astype(int)
    if "middlewares" not in rows.columns or "queue.workers" not in rows.columns:
        return clients
    workers = rows["middlewares"].astype(int) * rows["queue.workers"].astype(int)
    return clients.where(workers <= 0, clients.clip(upper=workers))


def sessions_fixed(measure: Mapping[str, Any], points: Mapping[str, pd.DataFrame]) -> bool:
    """Whether the load a paired change compares leaves the database's sessions as they were:
    at every pairing of the factor's two levels (its other levels the same) the busy sessions
    are equal. The database then sees the same load at both, and no commit delay can shape
    the change between them."""
    chosen = selections(measure, points)
    factor = measure.get("factor")
    if measure.get("kind") != "paired" or factor is None or len(chosen) != 2:
        return False
    table = points.get(chosen[0][0])
    if table is None or "clients_total" not in table.columns:
        return False
    sides = []
    for family, where in chosen:
        rows = select(points[family], where)
        if "side" in rows.columns:
            rows = rows[(rows["side"] == "client") & (rows["type"] == "all")]
        # Paired on every other level; with none, every point of a level pairs with the other's.
        others = [c for c in rows.columns if c.startswith("level_") and c != factor]
        keyed = rows.assign(_sessions=_sessions(rows), _pair=0)
        keyed = keyed.drop_duplicates([*others, "_pair", "_sessions"])
        sides.append(keyed.set_index([*others, "_pair"])["_sessions"])
    low, high = sides
    paired = low.index.intersection(high.index)
    return bool(len(paired)) and bool((low[paired] == high[paired]).all())


def _over_loads(measure: Mapping[str, Any], points: Mapping[str, pd.DataFrame]) -> bool:
    """Whether a selection the measure takes a maximum over holds more than one load."""
    for family, where in selections(measure, points):
        table = points.get(family)
        if table is None:
            continue
        rows = select(table, where)
        for column in ("clients_total", "level_clients"):
            if column in rows.columns and rows[column].nunique() > 1:
                return True
    return False


def assumed_commit(
    finding: Mapping[str, Any],
    points: Mapping[str, pd.DataFrame],
    counters: Mapping[str, pd.DataFrame],
    assumed: Mapping[str, str],
) -> Decision:
    """Whether the finding is not testable here because an assumed commit delay shapes it:
    its study's disk write time is assumed (`assumed`: study -> its source), the finding
    judges a throughput over loads or sessions (how it changes with a factor, where it
    peaks, or a maximum over the loads, whose value lies where the curve peaks: the shape a
    fit at one load does not pin), what it compares changes the database's busy sessions
    (not `sessions_fixed`), and at its points the sessions waited on the WAL most of their
    time (`_wal_share` above DELAY_PART), so that delay, not the system, shapes it."""
    study = str(finding.get("study_of"))
    measure = finding["measure"]
    kind = measure.get("kind")
    shape = (
        kind == "max_level"
        or (kind in MAXIMA and _over_loads(measure, points))
        or (kind == "paired" and measure.get("factor") is not None)
    )
    if study not in assumed or not shape:
        return NOT_BY_CONSTRUCTION
    share = _wal_share(measure, points, counters)
    if share is None or not share > DELAY_PART or sessions_fixed(measure, points):
        return NOT_BY_CONSTRUCTION
    return Decision(
        ASSUMED_COMMIT,
        f"at its points the database's sessions waited on the WAL {100 * share:.0f} % of"
        " their sampled time, and each commit's disk write lasts a delay that no study number"
        " gives (assumed), so how the throughput changes with the load, and where it peaks,"
        " rests on that assumption",
        f"WAL waits {100 * share:.0f} % of the time, under an assumed commit delay",
    )
