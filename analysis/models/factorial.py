"""2^k·r full factorial designs (Jain, The Art of Computer Systems Performance Analysis, ch. 17-18).

Every factor has two levels coded −1 (low) and +1 (high). Effects come from the sign table of
all 2^k − 1 terms (main effects and every interaction); the variation each term explains is
2^k·r·q², and the unexplained rest is the experimental error.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from analysis.aggregate import CI_LEVEL


class DesignError(ValueError):
    """The data do not form a complete, balanced 2^k·r design."""


@dataclass(frozen=True)
class FactorialResult:
    response: str
    factors: tuple[str, ...]
    model: str  # "additive" or "multiplicative"
    replications: int
    levels: dict[str, dict[str, object]]  # factor -> {"low": value, "high": value}
    effects: dict[str, float]  # "mean", "A", "B", "A:B", ...
    sum_of_squares: dict[str, float]  # terms and "error", "total"
    variation: dict[str, float]  # fraction of total variation; terms and "error"
    confidence_intervals: dict[str, tuple[float, float]]  # NaN bounds when r = 1
    alpha: float
    error_dof: int
    std_error: float  # s_e
    std_effect: float  # s_q = s_e / sqrt(2^k r)
    observations: pd.DataFrame  # coded factors, response, predicted, residual, order

    @property
    def terms(self) -> list[str]:
        return [t for t in self.effects if t != "mean"]

    def significant(self) -> dict[str, bool]:
        """Effects whose confidence interval excludes zero."""
        return {
            t: not (lo <= 0 <= hi) if not math.isnan(lo) else False
            for t, (lo, hi) in self.confidence_intervals.items()
        }

    def multiplicative_factors(self) -> dict[str, float]:
        """For the multiplicative model, 10^q: the factor by which each term scales the response."""
        if self.model != "multiplicative":
            raise ValueError("only the multiplicative model has multiplicative factors")
        return {t: 10**q for t, q in self.effects.items()}

    def to_dict(self) -> dict[str, object]:
        return {
            "response": self.response,
            "factors": list(self.factors),
            "model": self.model,
            "replications": self.replications,
            "levels": self.levels,
            "effects": self.effects,
            "variation": self.variation,
            "sum_of_squares": self.sum_of_squares,
            "confidence_intervals": {t: list(ci) for t, ci in self.confidence_intervals.items()},
            "significant": self.significant(),
            "alpha": self.alpha,
            "error_dof": self.error_dof,
            "std_error": self.std_error,
            "std_effect": self.std_effect,
        }


def terms(factors: Sequence[str]) -> list[tuple[str, ...]]:
    """All main effects and interactions, by order, then in the order the factors were given."""
    return [c for size in range(1, len(factors) + 1) for c in itertools.combinations(factors, size)]


def sign_table(factors: Sequence[str]) -> pd.DataFrame:
    """The 2^k sign table: one row per experiment, columns I, every term; first factor fastest."""
    k = len(factors)
    rows = []
    for i in range(2**k):
        coded = {f: (1 if (i >> j) & 1 else -1) for j, f in enumerate(factors)}
        row = {"I": 1}
        for term in terms(factors):
            row[":".join(term)] = int(np.prod([coded[f] for f in term]))
        rows.append(row)
    return pd.DataFrame(rows)


def _sort_key(value: object) -> tuple[int, object]:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value))
    return (1, str(value))


def _matches(value: object, wanted: str) -> bool:
    if str(value) == wanted:
        return True
    try:
        return float(value) == float(wanted)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def code_factors(
    df: pd.DataFrame, factors: Sequence[str], high: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, dict[str, dict[str, object]]]:
    """±1 coding: the smaller value is −1 (numbers numerically, strings as text) unless `high`
    names the +1 level."""
    high = dict(high or {})
    unknown = set(high) - set(factors)
    if unknown:
        raise DesignError(f"--high names columns that are not factors: {sorted(unknown)}")
    coded = pd.DataFrame(index=df.index)
    levels: dict[str, dict[str, object]] = {}
    for f in factors:
        if f not in df.columns:
            raise DesignError(f"factor column {f!r} not in data (columns: {list(df.columns)})")
        values = list(pd.unique(df[f].dropna()))
        if df[f].isna().any():
            raise DesignError(f"factor {f!r} has missing values")
        if len(values) != 2:
            raise DesignError(f"factor {f!r} must have exactly two values, found {values}")
        low_v, high_v = sorted(values, key=_sort_key)
        if f in high:
            chosen = [v for v in values if _matches(v, high[f])]
            if not chosen:
                raise DesignError(f"--high {f}={high[f]}: not a value of {f!r} ({values})")
            high_v = chosen[0]
            low_v = next(v for v in values if v is not high_v and v != high_v)
        coded[f] = np.where(df[f] == high_v, 1, -1)
        levels[f] = {"low": _plain(low_v), "high": _plain(high_v)}
    return coded, levels


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def analyse(
    df: pd.DataFrame,
    response: str,
    factors: Sequence[str],
    *,
    high: Mapping[str, str] | None = None,
    alpha: float = 1 - CI_LEVEL,
    multiplicative: bool = False,
    order: str | None = None,
) -> FactorialResult:
    """Analyses a 2^k·r design. `order` names a column with the run order (default: row order)."""
    factors = list(factors)
    if not factors:
        raise DesignError("at least one factor is needed")
    if len(set(factors)) != len(factors):
        raise DesignError(f"factors repeat: {factors}")
    if response not in df.columns:
        raise DesignError(f"response column {response!r} not in data")
    if not 0 < alpha < 1:
        raise DesignError(f"alpha must lie in (0, 1), got {alpha}")
    y = pd.to_numeric(df[response], errors="coerce")
    if y.isna().any():
        raise DesignError(f"response {response!r} has missing or non-numeric values")
    if multiplicative:
        if (y <= 0).any():
            raise DesignError("the multiplicative model needs a strictly positive response")
        y = np.log10(y)
    coded, levels = code_factors(df, factors, high)
    k = len(factors)
    cells = coded.groupby(factors).size()
    if len(cells) != 2**k:
        raise DesignError(f"the design needs all {2**k} level combinations, found {len(cells)}")
    if cells.nunique() != 1:
        raise DesignError(f"unequal replications per combination: {cells.to_dict()}")
    r = int(cells.iloc[0])

    table = sign_table(factors)
    cell_mean = y.groupby([coded[f] for f in factors]).mean()
    means = np.array([cell_mean.loc[tuple(row[f] for f in factors)] for _, row in table.iterrows()])
    effects = {"mean": float(table["I"] @ means / 2**k)}
    for term in terms(factors):
        name = ":".join(term)
        effects[name] = float(table[name] @ means / 2**k)

    predicted = y.groupby([coded[f] for f in factors]).transform("mean")
    residual = y - predicted
    sse = float((residual**2).sum())
    sst = float(((y - y.mean()) ** 2).sum())
    ss = {t: 2**k * r * q**2 for t, q in effects.items() if t != "mean"}
    ss["error"] = sse
    ss["total"] = sst
    variation = {t: (v / sst if sst > 0 else math.nan) for t, v in ss.items() if t != "total"}

    dof = 2**k * (r - 1)
    if dof > 0:
        s_e = math.sqrt(sse / dof)
        s_q = s_e / math.sqrt(2**k * r)
        t_crit = float(stats.t.ppf(1 - alpha / 2, dof))
        ci = {t: (q - t_crit * s_q, q + t_crit * s_q) for t, q in effects.items()}
    else:
        s_e = s_q = math.nan
        ci = {t: (math.nan, math.nan) for t in effects}

    obs = coded.copy()
    obs[response] = df[response].to_numpy()
    obs["y"] = y.to_numpy()
    obs["predicted"] = predicted.to_numpy()
    obs["residual"] = residual.to_numpy()
    obs["order"] = df[order].to_numpy() if order else np.arange(len(df))
    return FactorialResult(
        response=response,
        factors=tuple(factors),
        model="multiplicative" if multiplicative else "additive",
        replications=r,
        levels=levels,
        effects=effects,
        sum_of_squares=ss,
        variation=variation,
        confidence_intervals=ci,
        alpha=alpha,
        error_dof=dof,
        std_error=s_e,
        std_effect=s_q,
        observations=obs.reset_index(drop=True),
    )


# Axis words for the response columns the pipeline analyses; others print their name.
RESPONSE_LABELS = {
    "throughput_ops": "throughput (ops/s)",
    "response_ms": "mean response time (ms)",
    "response_us_mean": "mean response time (µs)",
}


def response_label(result: FactorialResult) -> str:
    """The response in words with its unit, as an axis shows it."""
    label = RESPONSE_LABELS.get(result.response, result.response.replace("_", " "))
    return f"log10 {label}" if result.model == "multiplicative" else label


def residual_label(result: FactorialResult, what: str = "residual") -> str:
    """`what` with the response's unit: a residual is in the unit of what the model fits."""
    label = RESPONSE_LABELS.get(result.response, "")
    unit = label[label.rfind("(") + 1 : -1] if label.endswith(")") else ""
    if result.model == "multiplicative":
        unit = f"log10 {unit}".strip()
    return f"{what} ({unit})" if unit else what


def plot_diagnostics(result: FactorialResult, path: str | Path) -> Path:
    """Residuals against predicted values, a normal QQ plot and residuals against run order.
    With one repetition the model has as many terms as runs, so every residual is zero by
    construction: the figure says so instead of drawing flat lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if result.replications < 2:
        fig, ax = plt.subplots(figsize=(12, 1.2), constrained_layout=True)
        note = (
            "one repetition: the 2^k terms fit every run, so the residuals are zero by "
            "construction and there is nothing to check"
        )
        ax.text(0.5, 0.5, note, ha="center", va="center")
        ax.set_axis_off()
        fig.savefig(path)
        plt.close(fig)
        return path
    obs = result.observations
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), constrained_layout=True)
    axes[0].scatter(obs["predicted"], obs["residual"], s=14)
    axes[0].axhline(0, color="grey", lw=0.8)
    axes[0].set(xlabel=f"predicted {response_label(result)}", ylabel=residual_label(result))
    (osm, osr), (slope, intercept, _) = stats.probplot(obs["residual"], dist="norm")
    axes[1].scatter(osm, osr, s=14)
    axes[1].plot(osm, slope * np.asarray(osm) + intercept, color="grey", lw=0.8)
    axes[1].set(xlabel="normal quantile", ylabel=residual_label(result, "residual quantile"))
    ordered = obs.sort_values("order")
    axes[2].plot(np.arange(len(ordered)), ordered["residual"], marker="o", ms=3, lw=0.6)
    axes[2].axhline(0, color="grey", lw=0.8)
    axes[2].set(xlabel="run order", ylabel=residual_label(result))
    fig.savefig(path)
    plt.close(fig)
    return path


@dataclass(frozen=True)
class AllocationCheck:
    """A printed allocation of variation beside the one recomputed from the same data."""

    printed: dict[str, float]  # terms and "error", as printed
    recomputed: dict[str, float]  # terms and "error", SS / SST of the recomputation
    effect_difference: float  # largest |printed − recomputed| effect; NaN without effects

    @property
    def printed_sum(self) -> float:
        return sum(self.printed.values())

    @property
    def recomputed_sum(self) -> float:
        return sum(self.recomputed.values())

    def ratio(self, term: str) -> float:
        """Printed over recomputed share of one term (NaN where the recomputed share is 0)."""
        r = self.recomputed[term]
        return self.printed[term] / r if r else math.nan


def check_allocation(
    result: FactorialResult,
    shares: Mapping[str, float],
    effects: Mapping[str, float] | None = None,
) -> AllocationCheck:
    """Sets printed shares of variation (fractions, every term and "error") beside those of
    `result`, which were recomputed from the printed data: the shares of a 2^k·r design
    must add up to one, since SST = Σ SS(term) + SSE (Jain, ch. 18). `effects`, when given,
    are the printed effects q (with "mean"), to show that both analyses fit the same model."""
    wanted = {*result.terms, "error"}
    if set(shares) != wanted:
        raise DesignError(
            f"printed shares must name every term and the error: missing "
            f"{sorted(wanted - set(shares))}, unknown {sorted(set(shares) - wanted)}"
        )
    diff = math.nan
    if effects is not None:
        unknown = set(effects) - set(result.effects)
        if unknown:
            raise DesignError(f"printed effects of unknown terms: {sorted(unknown)}")
        diff = max((abs(q - result.effects[t]) for t, q in effects.items()), default=math.nan)
    return AllocationCheck(
        printed={t: float(shares[t]) for t in [*result.terms, "error"]},
        recomputed={t: result.variation[t] for t in [*result.terms, "error"]},
        effect_difference=diff,
    )
