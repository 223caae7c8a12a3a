"""How a verdict fares under the other calibration sessions: a sensitivity analysis of the
speed factors, not an interval.

The scale model's speed factors were fitted in one session (the kept one); later sessions
fitted the same targets again (calibration.json `refits`). The difference between sessions is
systematic, not a repetition's noise, so it is not added to a verdict's interval. Instead each
other session gives two scenarios, each a factor per (study, role) on every level that role's
CPU budget bounds:

- **its factors**: the kept fit's throughput at that session's factor over the kept one,
  (a + b f_other) / (a + b f_kept) (`session_ratios`' `operating`): had the runs used the
  factor that session fitted;
- **its machine**: 1 / the measured ratio of the two sessions at one budget (`measured`): had
  the runs met that session's machine under the kept factor.

A level bound by a link, a delay or an unfitted role takes the factor 1. A change between
levels bound by the same role cancels it; one between levels bound apart moves by the ratio of
their factors. A throughput scales by the factor, a time in a CPU-bound level by its inverse
(R = N / X in the closed loop), where it is net of the emulated delays (a fixed delay moves
with no factor): a change of a time is moved only where the delay it holds is known
(`FixedTime`, a derived delay's round trip), and then only its rest. The verdict is decided
again in every scenario, on the moved estimate and interval; it stands where every scenario
gives it, and is inconclusive otherwise: which session's calibration is right then decides it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis import calibration, construction
from analysis.verdicts import Evidence

# Measures whose estimate is one value of ours (a level's throughput against the study's).
ABSOLUTE_MEASURES = frozenset({"study_ratio", "link_ratio"})


@dataclass(frozen=True)
class Scenario:
    """One way the calibration could have come out: a factor per (study, role) on every
    throughput that role's CPU budget bounds."""

    name: str  # e.g. "session 2's factors"
    factors: Mapping[tuple[str, str], float]

    def factor(self, study: str, bottleneck: str) -> float:
        """The factor on a level of `study` bound by `bottleneck` (1 unless a fitted role's
        CPU budget binds it)."""
        if not bottleneck.endswith(" CPU"):
            return 1.0
        return float(self.factors.get((study, bottleneck.removesuffix(" CPU")), 1.0))


@dataclass(frozen=True)
class FixedTime:
    """A paired change of a time that holds a known delay: the low level's mean and the
    delay's part of every level (ms), which no speed factor moves."""

    low_ms: float
    fixed_ms: float

    def moved(self, change: float, f_low: float, f_high: float) -> float:
        """The change with each level's part beyond the delay divided by its factor."""
        high_ms = (1 + change) * self.low_ms
        low = self.fixed_ms + (self.low_ms - self.fixed_ms) / f_low
        high = self.fixed_ms + (high_ms - self.fixed_ms) / f_high
        return high / low - 1


def scenarios(record: Mapping[str, Any]) -> list[Scenario]:
    """Two scenarios per other session of the calibration (its factors, its machine). The
    n-th refit of each target belongs to the n-th other session, in which order `mwlab
    dataset merge` appends them."""
    refits = list(record.get("refits") or [])
    ratios = calibration.session_ratios(record) if refits else []
    seen: dict[str, int] = {}
    sessions: dict[int, dict[str, dict[tuple[str, str], float]]] = {}
    for refit, ratio in zip(refits, ratios, strict=True):
        n = seen.get(str(refit["name"]), 0)
        seen[str(refit["name"])] = n + 1
        both = sessions.setdefault(n, {"factors": {}, "machine": {}})
        for study in refit.get("studies") or []:
            key = (str(study), str(refit["role"]))
            both["factors"][key] = float(ratio["operating"])  # type: ignore[arg-type]
            if ratio["measured"]:
                both["machine"][key] = 1.0 / float(ratio["measured"])
    out = []
    for n, both in sorted(sessions.items()):
        label = f"session {n + 2}"  # the kept session is the first
        out.append(Scenario(f"{label}'s factors", both["factors"]))
        if both["machine"]:
            out.append(Scenario(f"{label}'s machine", both["machine"]))
    return out


def _compared(measure: Mapping[str, Any], levels: Sequence[str]) -> Sequence[str]:
    """The levels a per-doubling gain compares (three of them), else all."""
    if measure.get("kind") != "gain_per_doubling" or len(levels) < 3:
        return levels
    return levels[:3] if measure.get("pair") == "first" else levels[-3:]


def moved(
    e: Evidence,
    unit: str,
    measure: Mapping[str, Any],
    study: str,
    bottleneck: str,
    levels: Sequence[str],
    scenario: Scenario,
    fixed_time: FixedTime | None = None,
) -> Evidence | None:
    """The evidence as it would read under `scenario`, or None where the measure is not one
    a speed factor moves in a way this module can say (a time whose delays are not known, a
    factorial's effects, a model's error, a share of a request's time)."""
    f = [scenario.factor(study, b) for b in _compared(measure, levels)]
    throughput = construction.judges_throughput(measure)
    transform: Callable[[float], float]
    if not throughput:
        # A time holds emulated delays, which no speed factor moves, beside its CPU-bound
        # part: it moves only where the delay is known, and then only the rest of it.
        if fixed_time is None or unit != "change" or len(f) != 2:
            return None
        transform = lambda x: fixed_time.moved(x, f[0], f[1])  # noqa: E731
    elif unit == "change" and len(f) == 2:
        s = f[1] / f[0]
        transform = lambda x: (1 + x) * s - 1  # noqa: E731
    elif unit == "log" and len(f) == 3 and measure.get("kind") == "gain_per_doubling":
        shift = math.log(f[2]) - 2 * math.log(f[1]) + math.log(f[0])
        transform = lambda x: x + shift  # noqa: E731
    elif measure.get("kind") in ABSOLUTE_MEASURES:
        s = scenario.factor(study, bottleneck)
        transform = lambda x: x * s  # noqa: E731
    else:
        return None
    return dataclasses.replace(
        e,
        estimate=transform(e.estimate),
        low=transform(e.low),
        high=transform(e.high),
        test=e.test,
    )


@dataclass(frozen=True)
class Sensitivity:
    """A verdict under every scenario: `verdicts` in the scenarios' order (None where the
    scenario does not move the measure), and whether they all agree with the kept one."""

    kept: str
    verdicts: tuple[tuple[str, str | None], ...]

    @property
    def moved(self) -> list[tuple[str, str]]:
        return [(n, v) for n, v in self.verdicts if v is not None]

    @property
    def stands(self) -> bool:
        return all(v == self.kept for _, v in self.moved)

    def deciding(self) -> str:
        """The scenarios whose verdict differs from the kept one, by name."""
        return " and ".join(n for n, v in self.moved if v != self.kept)

    def text(self) -> str:
        """In words, for the report's row: the verdicts that differ from the kept one."""
        if not self.moved:
            return ""
        differ = [f"{v} under {n}" for n, v in self.moved if v != self.kept]
        if not differ:
            return f"the same under the other sessions' {len(self.moved)} calibrations"
        return "; ".join(differ)


def judge(
    e: Evidence,
    unit: str,
    measure: Mapping[str, Any],
    study: str,
    bottleneck: str,
    levels: Sequence[str],
    kept: str,
    scenario_list: Sequence[Scenario],
    decide: Callable[[Evidence], str],
    fixed_time: FixedTime | None = None,
) -> Sensitivity:
    """The verdict (`decide`: evidence to verdict) under each scenario, beside the kept one."""
    out = []
    for s in scenario_list:
        m = moved(e, unit, measure, study, bottleneck, levels, s, fixed_time)
        same = (
            m is not None
            and math.isclose(m.estimate, e.estimate)
            and (math.isclose(m.low, e.low) and math.isclose(m.high, e.high))
        )
        out.append((s.name, None if m is None or same else decide(m)))
    return Sensitivity(kept, tuple(out))
