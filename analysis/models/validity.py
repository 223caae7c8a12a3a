"""When a queueing model is valid here, before it may judge a study.

A model may say something about a study's system only when (a) it predicts the lightest load
measured (the fewest clients), where queueing is least and its assumptions are nearest to
true, within `TOLERANCE`, and its prediction implies no utilisation above 1 of a demand it
does not model as a station (`predicted_utilisation`); (b) its inputs are in range: m counts
only the servers that serve the workload, a delay (an emulated link) is a delay centre and
not in a station's service time, and the utilisations the model requires below 1 are; (c)
its error is not the algebra of the recipe that fitted it: for an M/M/1 of a closed loop the
identity N(1−ρ)/ρ (`recipe`), for an M/M/m that barely queues minus the measured wait share
(`idle`). `judge` puts the checks together into one `Validity`, whose `to_dict()` the
models' JSON carries. A model that fails any check may not explain the design. A study's
claim about the model's own error is judged where the model only misses the lightest load
(`in_domain`: its miss is what the claim is about); one that fails (b) says nothing of the
study's system, and one that fails (c) restates its recipe (`restates_recipe`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

# A model that misses the lightest load by more than a quarter misses where it should be best
# (little queueing, its service times fitted there); larger errors than the repetitions'
# spread and the scale model's calibration (each well under 25 % here) are the model's own.
TOLERANCE = 0.25
# The M/M/1's error is taken as the recipe's identity when the measured-to-model ratio and
# N(1−ρ)/ρ agree to this share: the error then follows from N and ρ, not from the model.
RECIPE_TOLERANCE = 0.25
# A model waiting this share of its response time or less is taken as not queueing: its
# response time is then the hold time 1/μ to within that share.
IDLE_WAIT = 0.05
RECIPE_CHECKS = ("recipe_identity", "recipe_idle")


@dataclass(frozen=True)
class Check:
    """One condition of validity: its name, whether it holds, the value tested, the limit it
    is tested against (None where there is none) and one phrase for a reader."""

    name: str
    ok: bool
    value: float
    limit: float | None
    detail: str


@dataclass(frozen=True)
class Validity:
    valid: bool
    lightest_error: float  # relative error at the fewest clients measured, signed
    lightest_point: str
    checks: tuple[Check, ...]
    reason: str  # one sentence for a report reader when invalid, "" when valid
    restates_recipe: str = ""  # why the error is the recipe's algebra (c), "" when it is not
    # Every check but the lightest load's accuracy (a) holds: the model is applied within its
    # domain, and only misses. A claim about the model's own error may then be judged: the
    # miss is what it claims.
    in_domain: bool = True

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["checks"] = [asdict(c) for c in self.checks]
        d["lightest_error"] = _json_float(self.lightest_error)
        for c in d["checks"]:
            c["value"] = _json_float(c["value"])
        return d


def _json_float(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def relative_error(model: float, measured: float) -> float:
    return (model - measured) / measured if measured and math.isfinite(measured) else math.nan


def lightest(error: float, point: str, tolerance: float = TOLERANCE) -> Check:
    """(a): the relative error at the lightest load within `tolerance`."""
    ok = math.isfinite(error) and abs(error) <= tolerance
    what = "no error at the lightest load" if not math.isfinite(error) else f"{error:+.0%}"
    return Check(
        "lightest_load",
        ok,
        error,
        tolerance,
        f"error at the lightest load ({point}) {what}, tolerance ±{tolerance:.0%}",
    )


def servers(m: int, serving: int, what: str = "threads that serve the workload") -> Check:
    """(b): m, the servers of an M/M/m or a multi-server station, are those that serve."""
    return Check(
        "servers",
        m == serving,
        float(m),
        float(serving),
        f"m = {m}, {what}: {serving}",
    )


def delay_centre(in_service: bool, delay: float, station: str) -> Check:
    """(b): a delay of `delay` seconds (a link's round trip) is a delay centre; `in_service`
    says whether the model left it in `station`'s service time instead."""
    return Check(
        "delay_centre",
        not in_service or delay == 0,
        delay,
        None,
        f"round trip of {delay * 1e3:.3g} ms "
        + (f"inside the service time of {station}" if in_service else "a delay centre"),
    )


def utilisation(name: str, u: float, limit: float = 1.0) -> Check:
    """(b): a utilisation the model requires below `limit` (an open queue's ρ, a pool whose
    threads hold their parts)."""
    ok = math.isfinite(u) and u < limit
    return Check(f"utilisation_{name}", ok, u, limit, f"utilisation of {name} {u:.3g}")


def predicted_utilisation(name: str, u: float, limit: float = 1.0) -> Check:
    """(a), beside the lightest load: a utilisation the model's own prediction implies (a
    closed network's throughput times a demand it does not model as a station, such as a
    thread that holds its part while memcached answers), which a state the system can be in
    keeps below `limit`. An output, not an input: it says the model may not explain the
    design, and does not keep a claim about the model's error from being judged."""
    ok = math.isfinite(u) and u < limit
    return Check(f"predicted_{name}", ok, u, limit, f"predicted utilisation of {name} {u:.3g}")


def identity_ratio(clients: float, rho: float) -> float:
    """N(1−ρ)/ρ: what R_meas/R_model of an M/M/1 must be when R_meas = N/X (a closed loop
    without think time) and R_model = 1/(μ−X), ρ = X/μ, whatever the system does."""
    if not (clients > 0 and 0 < rho < 1):
        return math.nan
    return clients * (1 - rho) / rho


def identity_error(clients: float, rho: float) -> float:
    """The M/M/1's relative error that the identity alone gives: ρ/(N(1−ρ)) − 1."""
    r = identity_ratio(clients, rho)
    return 1 / r - 1 if math.isfinite(r) and r > 0 else math.nan


def recipe(model_error: float, clients: float, rho: float) -> Check:
    """(c): whether an M/M/1's error is the recipe identity (then the check fails: the row
    restates how λ and μ were taken, it does not test the model). The check's value is the
    identity's error, to be set beside the model's."""
    ident = identity_error(clients, rho)
    ok = True
    if math.isfinite(ident) and math.isfinite(model_error) and model_error > -1:
        ratio = 1 / (1 + model_error)  # R_meas / R_model
        ok = abs(ratio / identity_ratio(clients, rho) - 1) > RECIPE_TOLERANCE
    return Check(
        "recipe_identity",
        ok,
        ident,
        RECIPE_TOLERANCE,
        f"model error {model_error:+.1%}, identity N(1-rho)/rho gives {ident:+.1%}"
        + (" (the row restates the recipe)" if not ok else ""),
    )


def idle(wait: float, response: float, measured_wait_share: float) -> Check:
    """(c): whether an M/M/m whose 1/μ is the measured hold time queues at all. One that waits
    at most `IDLE_WAIT` of its response time predicts the hold time, so its error is about
    minus the measured wait share whatever the system does (the check then fails). The
    check's value is that share, to be set beside the model's error."""
    share = wait / response if response > 0 else math.nan
    ok = not (math.isfinite(share) and share <= IDLE_WAIT)
    return Check(
        "recipe_idle",
        ok,
        measured_wait_share,
        IDLE_WAIT,
        f"model wait {share:.1%} of its response, measured wait share {measured_wait_share:.1%}"
        + (" (the row restates the recipe)" if not ok else ""),
    )


def _phrase(c: Check) -> str:
    """What a failed check means, as a clause of the reason."""
    if c.name == "lightest_load":
        if not math.isfinite(c.value):
            return "it has no error at the lightest load measured"
        return f"it misses the lightest load measured by {c.value:+.0%} (tolerance ±{c.limit:.0%})"
    if c.name == "servers":
        return f"it has {c.value:.0f} servers where {c.limit:.0f} serve the workload"
    if c.name == "delay_centre":
        return "a network round trip sits in a station's service time"
    if c.name == "recipe_identity":
        return f"its error is its fitting recipe's algebra, ρ/(N(1−ρ)) − 1 = {c.value:+.1%}"
    if c.name == "recipe_idle":
        return (
            f"its error is its fitting recipe's algebra: it barely queues (at most"
            f" {c.limit:.0%} of its response time), so it predicts the measured hold time and"
            f" misses by about minus the measured wait share, {-c.value:+.1%}"
        )
    if c.name.startswith("predicted_"):
        name = c.name.removeprefix("predicted_").replace("_holding", "").replace("_", " ")
        return f"its prediction keeps the {name} busy {c.value:.2f} of the time, above 1"
    name = c.name.removeprefix("utilisation_").replace("_holding", "").replace("_", " ")
    return f"its {name} utilisation is {c.value:.2f}, not below 1"


def judge(
    model: str, lightest_error: float, lightest_point: str, checks: Sequence[Check] = ()
) -> Validity:
    """The validity of `model`: the lightest-load check (a) first, then `checks` (b, c)."""
    all_checks = (lightest(lightest_error, lightest_point), *checks)
    failed = [c for c in all_checks if not c.ok]

    def sentence(cs: Sequence[Check]) -> str:
        return f"The {model} is not valid here: " + "; ".join(map(_phrase, cs)) + "." if cs else ""

    return Validity(
        not failed,
        lightest_error,
        lightest_point,
        all_checks,
        sentence(failed),
        in_domain=all(c.name == "lightest_load" for c in failed),
        restates_recipe=next(
            (
                f"the {model}'s error {_phrase(c).removeprefix('its error ')}: the row restates"
                " how its rates were taken, it does not test the model"
                for c in failed
                if c.name in RECIPE_CHECKS
            ),
            "",
        ),
    )
