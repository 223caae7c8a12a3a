"""Three-valued verdicts: a claim is reproduced, contradicted or inconclusive, decided by the
confidence interval of the quantity it is about.

A claim says that a quantity lies beyond a threshold in a direction (an effect is an increase,
a model's error exceeds +10 %) or within a band around the study's value. The verdict is

- **reproduced** when the whole interval lies on the claim's side (or inside the band);
- **contradicted** when the whole interval lies on the other side (or outside the band);
- **inconclusive** when the interval holds the threshold (a band's edge). Then
  `repetitions_needed` gives how many repetitions per level a test at the report's level
  would need to decide, with power `POWER`, if the effect and the spread stayed as observed
  (statsmodels' t-test power: two samples for an effect between two levels, one sample for a
  paired effect or a value against a threshold), and never fewer than one more than the
  repetitions that left it undecided.

Intervals come from the repetitions (Student-t, Welch's for two levels) when every level has
at least two; with one repetition, from the runs' own batch means (Jain 1991 §25.5.2, as the
stability check computes them: `common.stability.batch_mean`), which capture the noise
within a run but not the run-to-run spread, and the test's description says so.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
from scipy import stats
from statsmodels.stats.power import TTestIndPower, TTestPower

from analysis.aggregate import CI_LEVEL
from common.stability import BatchMean

POWER = 0.8  # the usual target (Cohen 1988): four in five repetitions of the study decide
MAX_REPETITIONS = 1000  # beyond this the answer is "more than" it


class Verdict(str, Enum):
    """The interval rules give the first three; a finding whose quantity the scale model sets
    is `BY_CONSTRUCTION` (analysis.construction), and one judged by a model that fails its
    validity check here is `NOT_TESTABLE` (analysis.models.validity): both are counted apart
    from the evidence."""

    REPRODUCED = "reproduced"
    CONTRADICTED = "contradicted"
    INCONCLUSIVE = "inconclusive"
    BY_CONSTRUCTION = "by construction"
    NOT_TESTABLE = "not testable here"


class VerdictError(ValueError):
    """The observations cannot give an interval (no values at a level, or mismatched pairs)."""


@dataclass(frozen=True)
class Evidence:
    """An estimate with its `CI_LEVEL` interval and how it was obtained.

    `spread` is the standard deviation of one repetition in the estimate's units, which the
    power calculation needs; `design` is "two-sample" (an effect between two independent
    levels) or "one-sample" (paired differences, or one value against a threshold)."""

    estimate: float
    low: float
    high: float
    test: str
    repetitions: int  # per level
    spread: float
    design: str = "one-sample"
    # Observations per repetition: a paired design has one pair per level of the other
    # factors in every repetition, so a repetition adds that many pairs.
    per_repetition: int = 1

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    def scaled(self, factor: float) -> Evidence:
        """The same evidence for `factor * estimate` (factor > 0)."""
        if not factor > 0:
            raise VerdictError("evidence scales by a positive factor only")
        return dataclasses.replace(
            self,
            estimate=factor * self.estimate,
            low=factor * self.low,
            high=factor * self.high,
            spread=factor * self.spread,
        )


def _t(df: float, level: float = CI_LEVEL) -> float:
    return float(stats.t.ppf(0.5 + level / 2, df)) if df > 0 else math.nan


def _nan_evidence(estimate: float, test: str, n: int, design: str) -> Evidence:
    return Evidence(estimate, math.nan, math.nan, test, n, math.nan, design)


# --- estimates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """What is known of one level's mean: its value, standard error and degrees of freedom,
    from `repetitions` runs (Student-t) or, with one run, from its batch means."""

    mean: float
    std_error: float
    df: int
    repetitions: int
    # "repetitions"; for one run "batch means" or "order statistics"; "spread of its point's
    # N runs" where runs left out of the mean widen it (analysis.findings.level_sample).
    basis: str

    @classmethod
    def of_repetitions(cls, values: Sequence[float]) -> Sample:
        x = np.asarray(values, float)
        x = x[~np.isnan(x)]
        if len(x) == 0:
            raise VerdictError("no observations")
        se = float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) >= 2 else math.nan
        return cls(float(x.mean()), se, len(x) - 1, len(x), "repetitions")

    @classmethod
    def of_run(cls, b: BatchMean, mean: float | None = None) -> Sample:
        """One run's batch means; `mean` puts them in other units (the study's time): the
        standard error keeps its share of the mean."""
        m = b.mean if mean is None else mean
        se = b.std_error * (m / b.mean) if b.mean else math.nan
        return cls(m, abs(se), b.batches - 1, 1, "batch means")

    @property
    def spread(self) -> float:
        """The standard deviation of one repetition (with one run: of its mean)."""
        return self.std_error * math.sqrt(self.repetitions)

    @property
    def known(self) -> bool:
        return self.df >= 1 and not math.isnan(self.std_error)


def _describe(samples: Sequence[Sample], what: str) -> str:
    if all(s.basis == "repetitions" for s in samples):
        counts = " + ".join(str(s.repetitions) for s in samples)
        return f"{what}, {counts} repetitions"
    single = [s for s in samples if s.basis != "repetitions"]
    if all(s.basis == "batch means" for s in samples):
        batches = "/".join(str(s.df + 1) for s in single)
        return f"batch means of one run per level ({batches} batches)"
    if all(s.basis == "order statistics" for s in samples):
        return "order statistics of one run per level"
    # Otherwise each level says what its interval comes from.
    return f"{what}, " + " + ".join(_level_words(s) for s in samples)


def _level_words(s: Sample) -> str:
    if s.basis == "repetitions":
        return f"{s.repetitions} repetitions"
    if s.basis == "batch means":
        return f"one run ({s.df + 1} batch means)"
    runs = "one run" if s.repetitions == 1 else f"{s.repetitions} repetitions"
    return f"{runs} ({s.basis})"


def mean_evidence(sample: Sample, level: float = CI_LEVEL) -> Evidence:
    """A level's mean with its interval."""
    test = _describe([sample], "t")
    if not sample.known:
        return _nan_evidence(sample.mean, "one run, no interval", sample.repetitions, "one-sample")
    half = _t(sample.df, level) * sample.std_error
    return Evidence(
        sample.mean,
        sample.mean - half,
        sample.mean + half,
        test,
        sample.repetitions,
        sample.spread,
    )


def relative_change(low: Sample, high: Sample, level: float = CI_LEVEL) -> Evidence:
    """(high - low) / low with Welch's interval on the difference (Welch-Satterthwaite degrees
    of freedom), over the low level's mean (its own uncertainty is left out, as in a change
    read off a table)."""
    if low.mean == 0:
        raise VerdictError("the low level's mean is zero: no relative change")
    diff = high.mean - low.mean
    n = min(low.repetitions, high.repetitions)
    if not (low.known and high.known):
        return _nan_evidence(diff / low.mean, "one run per level, no interval", n, "two-sample")
    va, vb = low.std_error**2, high.std_error**2
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / low.df + vb**2 / high.df) if se > 0 else 1.0
    half = _t(df, level) * se
    pooled = math.sqrt((low.spread**2 + high.spread**2) / 2)
    return Evidence(
        diff / low.mean,
        (diff - half) / low.mean,
        (diff + half) / low.mean,
        _describe([low, high], "Welch t"),
        n,
        pooled / abs(low.mean),
        "two-sample",
    )


def paired_relative_change(
    low: Sequence[float], high: Sequence[float], level: float = CI_LEVEL, repetitions: int = 0
) -> Evidence:
    """The mean of the pairs' relative changes (high - low) / low, with a one-sample t
    interval (needs two pairs or more); `repetitions` of the design gave the pairs (0: one
    pair per repetition)."""
    a, b = np.asarray(low, float), np.asarray(high, float)
    if len(a) != len(b) or len(a) == 0:
        raise VerdictError("paired observations need equal, non-zero counts")
    if (a == 0).any():
        raise VerdictError("a pair's low value is zero: no relative change")
    out = mean_evidence(Sample.of_repetitions((b - a) / a), level)
    reps = repetitions or len(a)
    per = max(1, len(a) // reps)
    test = f"paired t over {len(a)} pairs" if len(a) >= 2 else "one pair, no interval"
    if repetitions:
        test += f" ({reps} repetition{'s' if reps > 1 else ''})"
    return Evidence(out.estimate, out.low, out.high, test, reps, out.spread, per_repetition=per)


def paired_excess_change(
    low: Sequence[float],
    high: Sequence[float],
    control_low: Sequence[float],
    control_high: Sequence[float],
    level: float = CI_LEVEL,
    repetitions: int = 0,
) -> Evidence:
    """The mean of the pairs' change beyond their control's, relative to the low value:
    ((high - low) - (control_high - control_low)) / low, a difference in differences, with a
    one-sample t interval (needs two pairs or more)."""
    a, b = np.asarray(low, float), np.asarray(high, float)
    c, d = np.asarray(control_low, float), np.asarray(control_high, float)
    if not len(a) == len(b) == len(c) == len(d) or len(a) == 0:
        raise VerdictError("paired observations and their controls need equal, non-zero counts")
    if (a == 0).any():
        raise VerdictError("a pair's low value is zero: no relative change")
    out = mean_evidence(Sample.of_repetitions(((b - a) - (d - c)) / a), level)
    reps = repetitions or len(a)
    test = (
        f"paired t over {len(a)} pairs, each less its control"
        if len(a) >= 2
        else ("one pair, no interval")
    )
    return Evidence(out.estimate, out.low, out.high, test, reps, out.spread,
                    per_repetition=max(1, len(a) // reps))  # fmt: skip


def ratio_to(value: Evidence, reference: float) -> Evidence:
    """`reference / value - 1`: a model's relative error when `value` is the measurement
    (the interval maps through the decreasing function; the model's value is exact)."""
    if value.estimate <= 0:
        raise VerdictError("a relative error needs a positive measurement")
    est = reference / value.estimate - 1
    if not value.has_interval or value.low <= 0:
        return _nan_evidence(est, value.test, value.repetitions, value.design)
    # The delta method's spread of reference / x at x: reference * sd / x^2.
    spread = reference * value.spread / value.estimate**2
    return Evidence(
        est,
        reference / value.high - 1,
        reference / value.low - 1,
        value.test,
        value.repetitions,
        spread,
        value.design,
    )


def dominance(
    larger: float,
    other: float,
    std_error: float,
    df: int,
    repetitions: int,
    level: float = CI_LEVEL,
) -> Evidence:
    """`larger - other` for two |effects| of a 2^k design, which share the standard error
    `std_error` (orthogonal contrasts, Jain 1991 §18.4): the interval is the difference's,
    t * sqrt(2) * s_q either side."""
    est = larger - other
    if not (std_error > 0) or df < 1:
        return _nan_evidence(est, "no error estimate for the effects", repetitions, "one-sample")
    se = math.sqrt(2) * std_error
    half = _t(df, level) * se
    return Evidence(
        est,
        est - half,
        est + half,
        f"t on the effects' difference, {df} d.f.",
        repetitions,
        se * math.sqrt(max(repetitions, 1)),
    )


def average(items: Sequence[Evidence]) -> Evidence:
    """The mean of independent estimates (such as one model's error at two setups): their
    half-widths and spreads add in quadrature, over their number."""
    if not items:
        raise VerdictError("nothing to average")
    if len(items) == 1:
        return items[0]
    n = len(items)
    est = float(np.mean([e.estimate for e in items]))
    reps = min(e.repetitions for e in items)
    test = f"{items[0].test}; mean of {n}"
    if not all(e.has_interval for e in items):
        return _nan_evidence(est, test, reps, items[0].design)
    half = math.sqrt(sum(((e.high - e.low) / 2) ** 2 for e in items)) / n
    spread = math.sqrt(sum(e.spread**2 for e in items)) / n
    return Evidence(est, est - half, est + half, test, reps, spread, items[0].design)


def log_contrast(
    samples: Sequence[Sample], weights: Sequence[float], level: float = CI_LEVEL
) -> Evidence:
    """sum(w * ln mean) over independent levels (e.g. ln X2/X1 - ln X4/X3), with the delta
    method's standard error (se / mean per level) and Welch-Satterthwaite degrees of
    freedom."""
    if len(samples) != len(weights) or not samples:
        raise VerdictError("one weight per sample")
    if any(s.mean <= 0 for s in samples):
        raise VerdictError("a log contrast needs positive means")
    est = float(sum(w * math.log(s.mean) for s, w in zip(samples, weights, strict=True)))
    reps = min(s.repetitions for s in samples)
    test = _describe(samples, "t on the log contrast")
    if not all(s.known for s in samples):
        return _nan_evidence(est, test, reps, "one-sample")
    parts = [(w * s.std_error / s.mean) ** 2 for s, w in zip(samples, weights, strict=True)]
    var = sum(parts)
    df = var**2 / sum(v**2 / s.df for v, s in zip(parts, samples, strict=True)) if var else 1.0
    half = _t(df, level) * math.sqrt(var)
    spread = math.sqrt(
        sum((w * s.spread / s.mean) ** 2 for s, w in zip(samples, weights, strict=True))
    )
    return Evidence(est, est - half, est + half, test, reps, spread)


# --- decisions ------------------------------------------------------------------------------


def beyond(evidence: Evidence, threshold: float, direction: int) -> Verdict:
    """Whether the estimate lies beyond `threshold` in `direction` (+1: above, -1: below)."""
    if direction not in (1, -1):
        raise VerdictError("direction is +1 (above) or -1 (below)")
    if not evidence.has_interval:
        return Verdict.INCONCLUSIVE
    lo, hi = (evidence.low, evidence.high) if direction == 1 else (-evidence.high, -evidence.low)
    t = threshold * direction
    if lo > t:
        return Verdict.REPRODUCED
    if hi < t:
        return Verdict.CONTRADICTED
    return Verdict.INCONCLUSIVE


def within(evidence: Evidence, centre: float, tolerance: float) -> Verdict:
    """Whether the estimate lies within `tolerance` of `centre`: reproduced when the interval
    lies inside the band, contradicted when it lies wholly outside it."""
    if tolerance < 0:
        raise VerdictError("a tolerance is >= 0")
    if not evidence.has_interval:
        return Verdict.INCONCLUSIVE
    lo, hi = centre - tolerance, centre + tolerance
    if evidence.low >= lo and evidence.high <= hi:
        return Verdict.REPRODUCED
    if evidence.high < lo or evidence.low > hi:
        return Verdict.CONTRADICTED
    return Verdict.INCONCLUSIVE


def margin(evidence: Evidence, threshold: float) -> float:
    """The distance between the estimate and the threshold a decision is taken at."""
    return abs(evidence.estimate - threshold)


def band_margin(evidence: Evidence, centre: float, tolerance: float) -> float:
    """The distance between the estimate and the nearer edge of the band."""
    return abs(tolerance - abs(evidence.estimate - centre))


def repetitions_needed(
    evidence: Evidence, distance: float, level: float = CI_LEVEL, power: float = POWER
) -> int | None:
    """Repetitions per level for a two-sided t-test at `level` to detect `distance` (the
    estimate's distance from the threshold) with `power`, at the observed spread (for a
    paired design: the pairs it needs, `per_repetition` to a repetition); None when
    it cannot be computed (no spread, or no distance: no number of repetitions decides a
    zero effect), `MAX_REPETITIONS + 1` when more than that would be needed.

    It is never fewer than one more than the evidence's `repetitions`: it is asked for a
    verdict those repetitions left undecided, and the power at the observed effect can
    reach `power` at or below them (a study at 80 % power still fails to decide one time
    in five, and the test's interval is Welch's, not the pooled one the power assumes)."""
    if not (evidence.spread > 0) or not (distance > 0) or math.isnan(distance):
        return None
    size = distance / evidence.spread
    alpha = 1 - level
    solver = TTestIndPower() if evidence.design == "two-sample" else TTestPower()

    def enough(n: int) -> bool:
        return bool(solver.power(size, n, alpha) >= power)

    try:
        root = float(solver.solve_power(effect_size=size, alpha=alpha, power=power))
    except (ValueError, RuntimeError, FloatingPointError):
        root = math.nan
    if not math.isfinite(root) or root > MAX_REPETITIONS:
        return MAX_REPETITIONS + 1
    n = max(2, math.ceil(root))
    # The solver's root is a float: step to the least whole n that reaches the power.
    while n > 2 and enough(n - 1):
        n -= 1
    while not enough(n) and n <= MAX_REPETITIONS:
        n += 1
    # n observations (pairs, for a paired design) come `per_repetition` to a repetition;
    # the repetitions already run did not decide, so a decision needs more than them.
    return max(evidence.repetitions + 1, math.ceil(n / evidence.per_repetition))
