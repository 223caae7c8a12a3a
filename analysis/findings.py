"""The studies' findings against ours: per-family loads and bottlenecks, and one
three-valued verdict per finding of the catalogue (workflows/findings.yaml).

Each finding names a measure (what our data says, with an interval: `analysis.verdicts`)
and a rule that decides on it (`decide`): reproduced when the interval lies on the study's
side of the rule's threshold, contradicted when it lies on the other side, inconclusive when
it holds the threshold, with the repetitions a decision would need. A level measured by one
run is judged by that run's batch means (a quantile: by its order statistics), and the
verdict's test says so. A contradicted finding takes its reason from the catalogue, chosen
by the bottleneck our data shows at the points the finding is measured on; a finding that
follows from the scale model's construction says so (`construction`) and is counted apart.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from analysis import construction, linkload, pools, sensitivity, stability, verdicts
from analysis.aggregate import CI_LEVEL
from analysis.bottleneck import (
    NONE_SATURATED,
    SATURATED,
    cpu_utilisation,
    host_saturated,
    name_bottleneck,
)
from analysis.histograms import run_percentiles
from analysis.models import factorial
from analysis.scale_model import TIME_BASE, in_study_time, scale_of, with_scale
from analysis.verdicts import (
    MAX_REPETITIONS,
    Evidence,
    Sample,
    Verdict,
    VerdictError,
    average,
    dominance,
    log_contrast,
    mean_evidence,
    paired_excess_change,
    paired_relative_change,
    ratio_to,
    relative_change,
    repetitions_needed,
)
from common.stability import batch_mean

GROUP_COLUMNS = ("level_setup", "level_workload")
RULES = ("effect", "beyond", "within", "dominant")


class FindingsError(ValueError):
    """The findings catalogue or the data it needs is malformed."""


# --- per-family load and bottleneck -------------------------------------------------------


def highest_load(points: pd.DataFrame) -> pd.Series:
    """The point with the most clients, and among those the highest client throughput."""
    rows = points[(points["side"] == "client") & (points["type"] == "all")]
    if rows.empty:
        raise FindingsError("no client-side points")
    top = rows[rows["clients_total"] == rows["clients_total"].max()]
    return top.loc[top["throughput_ops_mean"].idxmax()]


def group_of(row: pd.Series) -> dict[str, str]:
    return {
        c.removeprefix("level_"): str(row[c])
        for c in GROUP_COLUMNS
        if c in row.index and pd.notna(row[c])
    }


def family_loads(
    family: str, points: pd.DataFrame, pools_table: pd.DataFrame | None = None
) -> list[dict[str, Any]]:
    """One row per group of the family (setup and workload where it has them): its highest
    load point with link and CPU utilisations and the bottleneck they name; given the
    family's thread pools, with its busiest pool (`threads`), which names the bottleneck where
    no link or budget does (`with_pool_bottleneck`)."""
    client = points[(points["side"] == "client") & (points["type"] == "all")]
    if client.empty:
        return []
    groups = [c for c in GROUP_COLUMNS if c in points.columns]
    parts = points.groupby(groups, dropna=False) if groups else [((), points)]
    rows = []
    for _, part in parts:
        top = highest_load(part)
        client = part[(part["point"] == top["point"]) & (part["side"] == "client")]
        link = linkload.utilisation(top, *linkload.point_rates(client))
        cpu = cpu_utilisation(top)
        host = host_saturated(top)
        rows.append(
            {
                "family": family,
                "group": group_of(top),
                "point": top["point"],
                "clients": int(top["clients_total"]),
                "throughput": float(top["throughput_ops_mean"]),
                "link": link,
                "cpu": cpu,
                "host_saturated": host,
                "bottleneck": name_bottleneck(link, cpu, host),
            }
        )
    if pools_table is None:
        return rows
    return [
        {**r, "bottleneck": with_pool_bottleneck(r)}
        for r in with_threads(rows, {family: {"pools": pools_table}})
    ]


def _matches(group: Mapping[str, str], wanted: Mapping[str, object] | None) -> bool:
    return all(str(group.get(k)) == str(v) for k, v in (wanted or {}).items())


def with_threads(
    loads: Sequence[Mapping[str, Any]], families: Mapping[str, Mapping[str, pd.DataFrame]]
) -> list[dict[str, Any]]:
    """Each load row with its middleware's busiest thread pool at that point (`threads`: the
    pool, as the report names it, and its busy fraction averaged over the runs; None where
    the family records no pools). A busy thread may wait on the CPU or on its server: the
    pool says where requests are held, the CPU and link shares what holds them."""
    out = []
    for r in loads:
        table = families.get(r["family"], {}).get("pools")
        threads = None
        if table is not None and not table.empty:
            busiest = pools.busiest_pools(table[table["point"] == r["point"]])
            if not busiest.empty:
                name = busiest["busiest"].mode().iloc[0]
                threads = {"pool": str(name), "busy": float(busiest["busiest_fraction"].mean())}
        out.append({**r, "threads": threads})
    return out


def bottleneck_of(loads: Sequence[Mapping[str, Any]], family: str, group: Mapping | None) -> str:
    """The computed bottleneck of a family's group; with several groups, the most frequent."""
    names = [
        r["bottleneck"] for r in loads if r["family"] == family and _matches(r["group"], group)
    ]
    if not names:
        return "not identified"
    return max(sorted(set(names)), key=names.count)


# --- measures: our side of each finding ----------------------------------------------------


@dataclass
class Data:
    """The tables the findings read: per family `points`, `runs`, `windows`, `histograms` and
    `pools`; the runs the validation excluded (failed, or unstable after their reruns) and,
    among those it excluded, the ones excluded only for imprecision (`imprecise`,
    `imprecise_runs`); and the model results (`queueing2016`: the 2016 numbers,
    `models2016`: the 2016 models' raw predictions at their points, `mva2018`: the MVA
    rows), and the sites where the scale model was fitted (`sites`)."""

    families: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    excluded: set[str] = field(default_factory=set)
    imprecise: set[str] = field(default_factory=set)
    queueing2016: dict[str, str] = field(default_factory=dict)
    models2016: dict[str, Any] = field(default_factory=dict)
    mva2018: pd.DataFrame | None = None
    # Where the scale model was fitted to a study number (analysis.construction.fitted_sites).
    sites: list[construction.Site] = field(default_factory=list)
    # study -> role: roles whose speed is assumed (machines.yaml `unfitted`).
    unfitted: dict[str, dict[str, construction.AssumedRole]] = field(default_factory=dict)
    # The other calibration sessions' scenarios, under which each verdict is decided again
    # (analysis.sensitivity).
    scenarios: list[sensitivity.Scenario] = field(default_factory=list)
    # (family, point) -> the other families' points of the same configuration
    # (analysis.configurations.shared): their runs are pooled.
    shared: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    # study -> the source of its database's commit delay, where that delay is assumed
    # (machines.yaml `commit`).
    assumed_commits: dict[str, str] = field(default_factory=dict)
    # study -> role pair -> one-way delay (ms, the study's time) of the delays derived from a
    # study number (machines.yaml `derived_at`).
    derived_delays: dict[str, dict[str, float]] = field(default_factory=dict)

    def table(self, family: str, name: str) -> pd.DataFrame:
        """A family's table; points, runs and histograms in the study's time (throughput /
        s, times * s by the runs' scale), as the study's values they stand beside. Windows
        stay as measured: only their spread is read, as a share of the run's mean."""
        try:
            raw = self.families[family][name]
        except KeyError as err:
            raise FindingsError(f"no {name} table for family {family}") from err
        if name not in STUDY_TIME_TABLES or TIME_BASE in raw.columns:
            return raw
        points = self.families[family].get("points")
        # A table without its own `scale` takes its points'; one with neither is refused.
        if "scale" in raw.columns or points is None:
            return in_study_time(raw)
        return in_study_time(with_scale(raw, points, "point"))

    def runs(
        self,
        family: str,
        kind: str = "all",
        side: str = "client",
        imprecise: bool = False,
        pooled: bool = True,
    ) -> pd.DataFrame:
        """The family's usable runs of one side and request type: status ok, not excluded
        by the validation, and not imprecise where their point has a run that is not: the
        runs the points table averages (analysis.family), so that a level's mean here is
        the one the report's tables show. `imprecise: true` keeps the imprecise runs too,
        for a design that needs every replication (a 2^k r design, as its section has it).

        A point whose configuration other families measured too (`shared`) takes their runs
        as well (`pooled`, the default; a design that needs its own replications says
        `pooled=False`), under its own point and levels and with repetitions numbered apart
        (so that a paired design pairs runs of one family's session only): its level's
        spread then holds the variation between the families' sessions."""
        runs = self._usable(family, kind, side)
        if pooled:
            runs = pd.concat([runs, *self._borrowed(family, kind, side)], ignore_index=True)
        if imprecise:
            return runs
        vague = runs["run"].isin(self.imprecise)
        if not vague.any():
            return runs
        # An imprecise run stays only as its point's sole run, where its own batch means
        # give the interval; beside repetitions it would count as one of equal weight.
        precise = set(runs.loc[~vague, "point"])
        return runs[~vague | ~runs["point"].isin(precise)]

    def _usable(self, family: str, kind: str, side: str) -> pd.DataFrame:
        runs = self.table(family, "runs")
        ok = runs["status"] == "ok" if "status" in runs.columns else True
        runs = runs[(runs["side"] == side) & (runs["type"] == kind) & ok]
        return runs[~runs["run"].isin(self.excluded)]

    def _borrowed(self, family: str, kind: str, side: str) -> list[pd.DataFrame]:
        """The other families' usable runs of this family's shared points, relabelled."""
        own = self.table(family, "runs")
        parts = []
        for (f, point), others in sorted(self.shared.items()):
            if f != family:
                continue
            mine = own[own["point"] == point]
            if mine.empty:
                continue
            levels = {c: mine[c].iloc[0] for c in mine.columns if c.startswith("level_")}
            for k, (other, theirs) in enumerate(others, start=1):
                if other not in self.families:
                    continue
                rows = self._usable(other, kind, side)
                rows = rows[rows["point"] == theirs]
                if rows.empty:
                    continue
                rows = rows.drop(columns=[c for c in rows.columns if c.startswith("level_")])
                offset = REPETITION_OFFSET * k
                parts.append(
                    rows.assign(point=point, repetition=rows["repetition"] + offset, **levels)
                )
        return parts

    def pooled_from(self, family: str, points: set[str]) -> list[str]:
        """The other families whose runs the given points of `family` pool."""
        return sorted(
            {o for (f, p), others in self.shared.items() if f == family and p in points
             for o, _ in others if o in self.families}
        )  # fmt: skip

    def family_of_run(self, run: str, default: str) -> str:
        """The family that measured a run (its name's first part), for a pooled run's
        windows and records."""
        head = str(run).split("/", 1)[0]
        return head if head in self.families else default


# A borrowed run's repetition is its own plus this times its family's place among the
# others: repetitions of different families never pair.
REPETITION_OFFSET = 1000


def _only_imprecise(validation: pd.DataFrame) -> pd.Series:
    """Of the runs the validation excluded, those it excluded for imprecision alone."""
    excluded = validation[validation["excluded"]]
    reasons = excluded["stability"].fillna("").astype(str)
    return (
        (excluded["status"] == "ok")
        & reasons.str.startswith("imprecise")
        & ~(reasons.str.contains("trend|too few", regex=True))
    )


def unusable_runs(validation: pd.DataFrame) -> set[str]:
    """The runs a verdict leaves out: those the validation excluded (`excluded`) for failing,
    a trend or too few windows. A run excluded only for imprecision is not among them (see
    `imprecise_runs`)."""
    excluded = validation[validation["excluded"]]
    return set(excluded.loc[~_only_imprecise(validation), "run"].astype(str))


def imprecise_runs(validation: pd.DataFrame) -> set[str]:
    """The runs the validation excluded only for imprecision. Such a run counts only where
    it is its point's one usable run (Data.runs): a verdict's interval then comes from its
    own batch means, so its imprecision widens the interval. Beside other repetitions it
    is left out, as the points table leaves it out of the point's mean, so that the
    findings compare the maxima the report's tables show."""
    excluded = validation[validation["excluded"]]
    return set(excluded.loc[_only_imprecise(validation), "run"].astype(str))


# The tables whose throughputs and times the findings show beside the study's.
STUDY_TIME_TABLES = ("points", "runs", "histograms")


@dataclass(frozen=True)
class Measure:
    evidence: Evidence | None  # the estimate the rule decides on; None: nothing to decide
    text: str  # ours, for the table
    unit: str = "change"  # of the estimate: "change" or "share" (fractions), else its unit
    # A share measure whose part holds a derived delay's round trip: that trip over the
    # part's median, and the delay in words (analysis.construction.delay_set).
    delay_part: tuple[float, str] | None = None
    # A paired change of a time that holds a derived delay's round trip: the low level's mean
    # and that round trip (ms), so a speed factor can move the rest (analysis.sensitivity).
    fixed_time: sensitivity.FixedTime | None = None


def _select(frame: pd.DataFrame, where: Mapping[str, object] | None) -> pd.DataFrame:
    """The rows whose columns hold the wanted values (a list: any of them)."""
    for column, value in (where or {}).items():
        if column not in frame.columns:
            raise FindingsError(f"column {column!r} not in the data")
        wanted = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        frame = frame[frame[column].astype(str).isin(wanted)]
    return frame


def _fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _pct(x: float) -> str:
    return f"{100 * x:+.1f} %" if not math.isnan(x) else "--"


def _order(value: object) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _levels(frame: pd.DataFrame, column: str, low: object, high: object) -> tuple[str, str]:
    values = sorted(frame[column].dropna().astype(str).unique(), key=_order)
    if not values:
        raise FindingsError(f"no levels of {column}")
    pick = {"min": values[0], "max": values[-1]}
    lo, hi = str(pick.get(str(low), low)), str(pick.get(str(high), high))
    if lo == hi:
        raise FindingsError(f"the usable runs hold one level of {column} only ({lo})")
    return lo, hi


# --- one level's sample: repetitions, or one run's batch means ------------------------------


def _side_window_values(
    data: Data, family: str, run: str, metric: str, kind: str, side: str
) -> np.ndarray:
    """A run's per-window values of a timed metric of one request type on one side,
    count-weighted over its sources, in window order."""
    windows = data.table(data.family_of_run(run, family), "windows")
    rows = windows[(windows["run"] == run) & (windows["side"] == side) & (windows["type"] == kind)]
    rows = rows[rows[metric].notna()]
    if rows.empty:
        return np.array([])
    weighted = rows.assign(_w=rows[metric] * rows["count"])
    per = weighted.groupby("window").agg(w=("_w", "sum"), n=("count", "sum"))
    return (per["w"] / per["n"].where(per["n"] > 0)).dropna().to_numpy(float)


def _kinds(kind: str | Sequence[str]) -> list[str]:
    return [kind] if isinstance(kind, str) else [str(k) for k in kind]


def _window_values(
    data: Data,
    family: str,
    run: str,
    metric: str,
    kind: str | Sequence[str],
    side: str = "client",
) -> np.ndarray:
    """A run's per-window values: the throughput of every request type and load generator
    together (as the stability check reads it), or of the request types `kind` on `side`
    summed, or a timed metric of one request type."""
    if metric == "throughput_ops":
        windows = data.table(data.family_of_run(run, family), "windows")
        rows = windows[windows["run"] == run]
        if _kinds(kind) != ["all"]:
            rows = rows[(rows["side"] == side) & rows["type"].isin(_kinds(kind))]
            # Without a side column the series sums the types of the rows given.
            rows = rows.drop(columns="side")
        return stability.window_series(rows).get(str(run), np.array([]))
    return _side_window_values(data, family, run, metric, str(kind), side)


def typed_runs(
    data: Data, family: str, kinds: Sequence[str], side: str, imprecise: bool = False
) -> pd.DataFrame:
    """The usable runs of `side` (with `imprecise`, those left out as imprecise too) with
    `throughput_ops` the sum over the request types `kinds` (e.g. a multi-GET family's GETs:
    `get` at one key, `multiget` above), one row per run."""
    parts = [data.runs(family, k, side, imprecise=imprecise) for k in kinds]
    runs = pd.concat([r for r in parts if not r.empty] or parts[:1])
    if runs.empty:
        return runs
    summed = runs.groupby("run", sort=False)["throughput_ops"].sum(min_count=1)
    out = runs.drop_duplicates("run").set_index("run")
    out["throughput_ops"] = summed
    out["type"] = "+".join(kinds)
    return out.reset_index()


def _left_out_values(
    data: Data, family: str, runs: pd.DataFrame, metric: str, kind: str | Sequence[str]
) -> list[float]:
    """The metric of the runs of the same points that were left out for imprecision alone
    (Data.runs): measured and complete, only their windows wandered."""
    side = str(runs["side"].iloc[0]) if "side" in runs.columns else "client"
    kinds = _kinds(kind)
    if len(kinds) > 1 and metric != "throughput_ops":
        return []
    every = typed_runs(data, family, kinds, side, imprecise=True)
    if every.empty:
        return []
    every = every[every["point"].isin(set(runs["point"])) & every["run"].isin(data.imprecise)]
    every = every[~every["run"].isin(set(runs["run"]))]
    return every[metric].astype(float).dropna().tolist()


def level_sample(
    data: Data,
    family: str,
    runs: pd.DataFrame,
    metric: str,
    kind: str | Sequence[str],
    point_spread: bool = True,
) -> Sample:
    """What the runs of one level say of its mean: the repetitions when there are two or
    more; one run's batch means (in the study's time: its mean from the runs table).

    Where the level's point measured other runs, left out for imprecision, the mean stays the
    one the tables show, but one repetition's spread is that of all the point's runs
    (`point_spread`), with their degrees of freedom: every run is a repetition of the point
    (an imprecise one only has wider windows), the runs kept are the calm ones, and one run's
    windows say nothing of how far a repetition wanders."""
    values = runs[metric].astype(float).dropna()
    if len(values) == 0:
        raise FindingsError(f"no usable runs with {metric}")
    others = _left_out_values(data, family, runs, metric, kind) if point_spread else []
    if not others:
        return _own_sample(data, family, runs, values, metric, kind)
    every = [*values.tolist(), *others]
    spread = float(np.std(every, ddof=1)) / math.sqrt(len(values))
    return Sample(float(values.mean()), spread, len(every) - 1, len(values),
                  f"spread of its point's {len(every)} runs")  # fmt: skip


def _own_sample(
    data: Data,
    family: str,
    runs: pd.DataFrame,
    values: pd.Series,
    metric: str,
    kind: str | Sequence[str],
) -> Sample:
    if len(values) >= 2:
        return Sample.of_repetitions(values.tolist())
    first = runs.loc[values.index[0]]
    side = str(first["side"]) if "side" in runs.columns else "client"
    series = _window_values(data, family, str(first["run"]), metric, kind, side)
    mean = float(values.iloc[0])
    if len(series) < 2:
        return Sample(mean, math.nan, 0, 1, "batch means")
    return Sample.of_run(batch_mean(series), mean=mean)


def _best_point_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs of the point with the highest mean throughput."""
    if runs.empty:
        raise FindingsError("no usable runs")
    best = runs.groupby("point")["throughput_ops"].mean().idxmax()
    return runs[runs["point"] == best]


def _change_text(low: Sample, high: Sample, e: Evidence, unit: str, digits: int = 0) -> str:
    return f"{_fmt(low.mean, digits)} → {_fmt(high.mean, digits)}{unit} ({_pct(e.estimate)})"


# --- measures: our side of each finding ----------------------------------------------------


def measure_link_ratio(data: Data, p: Mapping[str, Any]) -> Measure:
    """The best point's read throughput over the servers' egress bound."""
    runs = _best_point_runs(_select(data.runs(p["family"]), p.get("where")))
    points = data.table(p["family"], "points")
    rows = points[(points["point"] == runs["point"].iloc[0]) & (points["side"] == "client")]
    rows = rows[rows["type"] == "all"]
    top, scale = rows.iloc[0], float(scale_of(rows).iloc[0])
    per_server = linkload.egress_mbit(top, 0.0, 1.0, 1.0)["server"]
    # The throughput is in the study's time; so is the bound: the testbed's link cap is the
    # study's link times s (a setting, which in_study_time leaves as set).
    bound = float(top["caps_mbit.server"]) / scale / per_server
    sample = level_sample(data, p["family"], runs, "throughput_ops", "all")
    e = mean_evidence(sample).scaled(1 / bound)
    text = f"{_fmt(sample.mean)} of {_fmt(bound)} ops/s ({100 * e.estimate:.0f} %)"
    return Measure(e, text, "share")


def _measured_runs(data: Data, family: str, kinds: Sequence[str], on: str) -> pd.DataFrame:
    """The usable runs whose throughput a measure reads: the clients' of every request type,
    or the sum of the types `kinds` on side `on`."""
    if list(kinds) == ["all"] and on == "client":
        return data.runs(family)
    return typed_runs(data, family, kinds, on)


def _side_runs(
    data: Data,
    side: Mapping[str, Any],
    factor: str | None,
    level: str | None,
    kinds: Sequence[str] = ("all",),
    on: str = "client",
) -> pd.DataFrame:
    runs = _select(_measured_runs(data, side["family"], kinds, on), side.get("where"))
    if factor is not None:
        runs = runs[runs[factor].astype(str) == level]
    if runs.empty:
        raise FindingsError(f"no usable runs of {side['family']} {side.get('where')} {level}")
    return runs


def measure_max_throughput(data: Data, p: Mapping[str, Any]) -> Measure:
    """The highest throughput at two levels (the runs of each level's best point): of a factor
    of one family (`factor`, `low`, `high`: a level, `min` or `max`), or of two selections
    (`low` and `high` each a `family` and `where`). The throughput is the clients' of every
    request type, or that of the request types `type` (a list) on `side`. `per_level: true`
    multiplies each level's throughput by its (numeric) level, e.g. GETs by keys per GET,
    which needs `type` to hold the GETs only: a SET carries one key whatever the level."""
    kinds, on = _kinds(p.get("type", "all")), str(p.get("side", "client"))
    if p.get("per_level") and "all" in kinds:
        raise FindingsError("per_level counts keys per request: `type` must name the GETs")
    if "factor" in p:
        runs = _select(_measured_runs(data, p["family"], kinds, on), p.get("where"))
        low, high = _levels(runs, p["factor"], p.get("low", "min"), p.get("high", "max"))
        sides = [(p, p["factor"], low), (p, p["factor"], high)]
    else:
        sides = [(p["low"], None, None), (p["high"], None, None)]
    samples = []
    for side, factor, level in sides:
        runs = _best_point_runs(_side_runs(data, side, factor, level, kinds, on))
        sample = level_sample(data, side["family"], runs, "throughput_ops", kinds)
        if p.get("per_level"):
            k = float(level)  # type: ignore[arg-type]
            sample = Sample(k * sample.mean, k * sample.std_error, sample.df,
                            sample.repetitions, sample.basis)  # fmt: skip
        samples.append(sample)
    e = relative_change(*samples)
    unit = p.get("unit", " ops/s")
    return Measure(e, _change_text(*samples, e, unit))


def quantile_sample(hist: pd.DataFrame, q: float, level: float = CI_LEVEL) -> Sample:
    """One run's `q` quantile from its histogram (each bucket keyed by its highest value, as
    HdrHistogram's), with the distribution-free interval of the order statistics: the ranks
    the binomial(n, q) puts either side at `level`. It assumes independent responses, which
    a closed loop does not quite give, so it is narrower than a batch-means interval."""
    counts = hist.groupby("bucket_us")["count"].sum().sort_index()
    n = int(counts.sum())
    if n == 0:
        raise FindingsError("an empty histogram has no quantile")
    values, cum = counts.index.to_numpy(float), counts.cumsum().to_numpy()

    def at(rank: float) -> float:
        i = int(np.searchsorted(cum, min(max(rank, 1), n)))
        return float(values[min(i, len(values) - 1)])

    tail = (1 - level) / 2
    lo = at(stats.binom.ppf(tail, n, q))
    hi = at(stats.binom.ppf(1 - tail, n, q) + 1)
    se = (hi - lo) / (2 * stats.norm.ppf(1 - tail))
    return Sample(at(math.ceil(q * n)), se, n - 1, 1, "order statistics")


def _response_sample(
    data: Data, p: Mapping[str, Any], runs: pd.DataFrame, metric: str, kind: str
) -> Sample:
    """A level's response-time sample in ms: a quantile of each run's histogram, or a mean."""
    if p.get("quantile") is None:
        s = level_sample(data, p["family"], runs, metric, kind)
    else:
        q = float(p["quantile"])
        hist = data.table(p["family"], "histograms")
        hist = hist[(hist["side"] == "client") & (hist["type"] == kind) & (hist["window"] < 0)]
        per_run = [hist[hist["run"] == r] for r in runs["run"]]
        per_run = [h for h in per_run if not h.empty]
        if not per_run:
            raise FindingsError(f"no {kind} histograms at {p['factor']}")
        if len(per_run) >= 2:
            s = Sample.of_repetitions([quantile_sample(h, q).mean for h in per_run])
        else:
            s = quantile_sample(per_run[0], q)
    return Sample(s.mean / 1e3, s.std_error / 1e3, s.df, s.repetitions, s.basis)


def measure_response(data: Data, p: Mapping[str, Any]) -> Measure:
    """Client response time of one request type at two levels of a factor: its mean
    (`metric`, default response_us_mean), or a `quantile` of each run's histogram."""
    column, kind = p["factor"], p.get("type", "get")
    metric = p.get("metric", "response_us_mean")
    runs = _select(data.runs(p["family"], kind), p.get("where"))
    samples = [
        _response_sample(data, p, runs[runs[column].astype(str) == str(level)], metric, kind)
        for level in (p["low"], p["high"])
    ]
    e = relative_change(*samples)
    return Measure(e, _change_text(*samples, e, " ms", 2))


def _paired_wide(
    runs: pd.DataFrame, column: str, metric: str, drop: Sequence[str] = ()
) -> pd.DataFrame:
    """The metric per pairing (every other level, less `drop`, and the repetition) and level
    of `column`."""
    keys = [c for c in runs.columns if c.startswith("level_") and c not in (column, *drop)]
    runs = runs.assign(_level=runs[column].astype(str))
    return runs.pivot_table(
        index=[*keys, "repetition"], columns="_level", values=metric, aggfunc="mean"
    )


def measure_paired(data: Data, p: Mapping[str, Any]) -> Measure:
    """A metric (default the client throughput) at two levels of a factor, paired on every
    other level and repetition; a single pair is compared by its two runs' batch means. With
    a `control` ({where: {column: level}, words: its name}), the change beyond the same
    pairing's change at that level, over the low value (a difference in differences): what
    the selection adds to the change that the control shows too."""
    metric, kind, side = p.get("metric", "throughput_ops"), p.get("type", "all"), p.get("side")
    measured = data.runs(p["family"], kind, side or "client")
    runs = _select(measured, p.get("where"))
    column, low, high = p["factor"], str(p["low"]), str(p["high"])
    low, high = _levels(runs, column, low, high)
    control: Mapping[str, str] = (p.get("control") or {}).get("where", {})
    wide = _paired_wide(runs, column, metric, tuple(control))
    if low not in wide.columns or high not in wide.columns:
        raise FindingsError(f"{column} lacks level {low} or {high}")
    both = wide[[low, high]].dropna()
    scale, unit, digits = (1.0, " ops/s", 0) if metric == "throughput_ops" else (1e-3, " ms", 2)
    shown = f"{_fmt(scale * both[low].mean(), digits)} → {_fmt(scale * both[high].mean(), digits)}"
    if control:
        where = {**(p.get("where") or {}), **control}
        wide_c = _paired_wide(_select(measured, where), column, metric, tuple(control))
        if low not in wide_c.columns or high not in wide_c.columns:
            raise FindingsError(f"the control {dict(control)} lacks level {low} or {high}")
        both = both.join(wide_c[[low, high]].add_prefix("control_"), how="inner").dropna()
        if len(both) < 2:
            raise FindingsError(f"fewer than two pairs with their control {dict(control)}")
        reps = both.index.get_level_values("repetition").nunique()
        e = paired_excess_change(both[low].tolist(), both[high].tolist(),
                                 both[f"control_{low}"].tolist(),
                                 both[f"control_{high}"].tolist(), repetitions=reps)  # fmt: skip
        words = str(p["control"]["words"])
        versus = (
            f"{_fmt(scale * both[f'control_{low}'].mean(), digits)} →"
            f" {_fmt(scale * both[f'control_{high}'].mean(), digits)}"
        )
        text, delay_part = _with_delay_share(
            data, p, both.mean(),
            f"{shown}{unit} ({words}: {versus}{unit}); the change beyond that of {words}, over"
            f" the low value, mean of {len(both)} pairs {_pct(e.estimate)}",
        )  # fmt: skip
        return Measure(e, text, delay_part=delay_part)
    if len(both) >= 2:
        reps = both.index.get_level_values("repetition").nunique()
        e = paired_relative_change(both[low].tolist(), both[high].tolist(), repetitions=reps)
        # The means' change and the pairs' mean change differ: name the one that decides.
        text, delay_part = _with_delay_share(
            data, p, both.mean(),
            f"{shown}{unit}; mean change of {len(both)} pairs {_pct(e.estimate)}",
        )  # fmt: skip
        fixed = None
        if "derived_delay" in p:
            trip = _derived_round_trip(data, p["derived_delay"])[0]
            fixed = sensitivity.FixedTime(float(both[low].mean()) / 1e3, trip)
        return Measure(e, text, delay_part=delay_part, fixed_time=fixed)
    if len(both) == 0:
        raise FindingsError(f"no pair of {column} = {low} and {high}")
    keys = list(both.index.names)
    pair = dict(zip(keys, both.index[0], strict=True))
    at = _select(runs, {k: v for k, v in pair.items() if k != "repetition"})
    at = at.assign(_level=at[column].astype(str))
    samples = [
        level_sample(data, p["family"], at[at["_level"] == lv], metric, kind) for lv in (low, high)
    ]
    e = relative_change(*samples)
    scaled = [Sample(scale * x.mean, scale * x.std_error, x.df, 1, x.basis) for x in samples]
    return Measure(e, _change_text(*scaled, e, unit, digits) + ", one pair")


def _with_delay_share(
    data: Data, p: Mapping[str, Any], means_us: pd.Series, text: str
) -> tuple[str, tuple[float, str] | None]:
    """A time's change whose metric holds the round trip of a derived delay (`derived_delay`):
    the text with that round trip's share of the largest level compared (`means_us`, the
    levels' means in µs, in the study's time as the runs table holds them), and that share
    with the delay in words (for analysis.construction.delay_set); the text alone without
    one."""
    if "derived_delay" not in p:
        return text, None
    trip, words = _derived_round_trip(data, p["derived_delay"])
    largest_ms = float(means_us.max()) / 1e3
    share = trip / largest_ms if largest_ms > 0 else math.nan
    return (
        f"{text}; {_fmt(trip, 1)} ms of every level is the round trip of the delay derived"
        f" from the seed (at least {100 * share:.0f} %)",
        (share, words),
    )


def _factorial_error(data: Data, family: str, runs: pd.DataFrame) -> tuple[float, int]:
    """The variance of one run's mean and its degrees of freedom, from the runs' batch means
    (a design with one repetition has no error term of its own)."""
    variances, dfs = [], 0
    for _, r in runs.iterrows():
        one = runs[runs["run"] == r["run"]]
        s = level_sample(data, family, one, "throughput_ops", "all", point_spread=False)
        if not s.known:
            return math.nan, 0
        variances.append(s.std_error**2)
        dfs += s.df
    return float(np.mean(variances)), dfs


def measure_factorial_top(data: Data, p: Mapping[str, Any]) -> Measure:
    """Whether the study's term explains the most variation of the throughput: the
    difference between its |effect| and the largest other |effect|, with the effects' common
    standard error (Jain 1991 §18.4: s_q = s_e / sqrt(2^k r); with r = 1, s_e from the runs'
    batch means). A study that names several terms together (`workers+middlewares`) is
    judged on the weakest of them against the strongest other term."""
    # A 2^k r design needs every replication of every cell: its imprecise runs stay.
    runs = _select(data.runs(p["family"], imprecise=True, pooled=False), p.get("where"))
    names: Mapping[str, str] = p["factors"]
    clash = [c for c in names.values() if c in runs.columns and c not in names]
    frame = runs.drop(columns=clash).rename(columns=dict(names)).reset_index(drop=True)
    try:
        res = factorial.analyse(
            frame, "throughput_ops", list(names.values()), high=p.get("high"), order="started_at"
        )
    except factorial.DesignError as err:
        return Measure(None, f"design incomplete ({err})")
    q = {t: v for t, v in res.effects.items() if t != "mean"}
    shares = {t: v for t, v in res.variation.items() if t != "error" and not math.isnan(v)}
    top = max(shares, key=shares.__getitem__)
    terms = str(p["study"]).split("+")
    unknown = [t for t in terms if t not in q]
    if unknown:
        raise FindingsError(f"the design has no term {', '.join(unknown)}")
    term = min(terms, key=lambda t: abs(q[t]))
    cells = 2 ** len(names)
    if res.replications >= 2:
        s_q, df, basis = res.std_error / math.sqrt(cells * res.replications), res.error_dof, ""
        error = f"error {100 * res.variation['error']:.1f} %"
    else:
        var, df = _factorial_error(data, p["family"], frame)
        s_q, basis = math.sqrt(var / cells), "batch means; "
        error = "error not estimable with one repetition"
    other = max((t for t in q if t not in terms), key=lambda t: abs(q[t]))
    e = dominance(abs(q[term]), abs(q[other]), s_q, df, res.replications)
    reps = "one repetition" if res.replications == 1 else f"{res.replications} repetitions"
    e = Evidence(e.estimate, e.low, e.high, f"{reps}, {basis}{e.test}", e.repetitions, e.spread)
    if len(terms) > 1:
        together = sum(shares.get(t, 0.0) for t in terms)
        text = f"{' and '.join(terms)} ({100 * together:.1f} % together; {error})"
    else:
        text = f"{top} ({100 * shares[top]:.1f} %; {error})"
        if top != term:
            text += f"; {term} {100 * shares.get(term, math.nan):.1f} %"
    # The estimate is |q_term| - |q_other| in ops/s: the row's unit says so.
    return Measure(e, text, "ops/s")


_NUMBER = re.compile(r"[-+−]?\d[\d,{}]*(?:\.\d+)?")


def number_of(text: str) -> float:
    """The number in a generated macro value such as `-70.8\\,\\%` or `2{,}311`."""
    m = _NUMBER.search(text.replace("−", "-"))
    if not m:
        raise FindingsError(f"no number in {text!r}")
    return float(re.sub(r"[,{}]", "", m.group()))


def model_error(data: Data, family: str, entry: Mapping[str, Any]) -> Evidence:
    """A model's relative error against its measurement (`entry`: point, model, measured,
    metric, side), with the measurement's interval: the point's runs give its relative
    standard error, which the measured value keeps (the model's value is taken as exact)."""
    runs = data.runs(family, side=entry["side"])
    at = runs[runs["point"] == entry["point"]]
    sample = level_sample(data, family, at, entry["metric"], "all")
    measured = float(entry["measured"])
    if sample.mean <= 0 or measured <= 0:
        raise FindingsError(f"no positive measurement at {entry['point']}")
    k = measured / sample.mean
    sample = Sample(measured, sample.std_error * k, sample.df, sample.repetitions, sample.basis)
    return ratio_to(mean_evidence(sample), float(entry["model"]))


def measure_model_error(data: Data, p: Mapping[str, Any]) -> Measure:
    """A 2016 model's signed relative error (model / measured - 1) at its points (the
    models2016 entry `model`: one point, or several whose errors are averaged), with the
    measurements' intervals."""
    entries = data.models2016.get(p["model"])
    if not entries:
        raise FindingsError(f"no 2016 model results for {p['model']}")
    entries = entries if isinstance(entries, list) else [entries]
    errors, used, missing = [], [], []
    for entry in entries:
        try:
            errors.append(model_error(data, p["family"], entry))
            used.append(str(entry["label"]))
        except FindingsError:
            missing.append(str(entry["label"]))
    if not errors:
        raise FindingsError(f"no usable runs at {', '.join(missing)}")
    e = average(errors)
    text = f"{_pct(e.estimate)} ({p.get('what', 'error')}; {', '.join(used)}"
    text += f"; no usable runs at {', '.join(missing)})" if missing else ")"
    if -1 < e.estimate < -0.5 or e.estimate > 1:
        factor = 1 + e.estimate
        text += f"; off by a factor {max(factor, 1 / factor):.0f}"
    return Measure(e, text)


# A population "where the model's limits are not reached" (seed 004 §7.3.1): its predicted
# throughput is below this share of the highest the model predicts for its setup.
BELOW_LIMIT = 0.9


def measure_mva2018(data: Data, p: Mapping[str, Any]) -> Measure:
    """The MVA's throughput error over the rows of a workload at one population (`clients`: a
    number, `max` (the default), or `below_limit`: every population whose prediction is below
    BELOW_LIMIT of its setup's highest), with the measurements' intervals: their mean, or
    with `every: true` ("in all instances") the row of the smallest error, the weakest
    instance, which the rule then judges; `held_out: true` leaves out each setup's lightest
    population, where the model was parameterised."""
    mva = data.mva2018
    if mva is None or mva.empty:
        raise FindingsError("no MVA results of the 2018 baseline")
    rows = mva[mva["workload"] == p["workload"]]
    if rows.empty:
        raise FindingsError(f"no MVA rows for {p['workload']}")
    clients = p.get("clients", "max")
    if clients == "max":
        rows = rows[rows["clients"] == rows.groupby("setup")["clients"].transform("max")]
    elif clients == "below_limit":
        limit = rows.groupby("setup")["x_model"].transform("max")
        rows = rows[rows["x_model"] < BELOW_LIMIT * limit]
    else:
        rows = rows[rows["clients"] == int(clients)]
    if p.get("held_out"):
        # The lightest population of each setup is where the model's service times were
        # measured: there the model restates its inputs, so only the others test it.
        lightest = mva[mva["workload"] == p["workload"]].groupby("setup")["clients"].min()
        rows = rows[rows["clients"] > rows["setup"].map(lightest)]
    if rows.empty:
        raise FindingsError(f"no MVA rows of {p['workload']} at clients {clients}")
    runs = data.runs(p["family"])
    errors = []
    for _, r in rows.iterrows():
        at = runs[runs["point"] == r["point"]]
        sample = level_sample(data, p["family"], at, "throughput_ops", "all")
        errors.append(ratio_to(mean_evidence(sample), float(r["x_model"])))
    names = [
        f"{str(s).replace('_', ' ')} N={int(n)}"
        for s, n in zip(rows["setup"], rows["clients"], strict=True)
    ]
    if p.get("every"):
        each = ", ".join(
            f"{name}: {_pct(x.estimate)}" for name, x in zip(names, errors, strict=True)
        )
        weakest = min(range(len(errors)), key=lambda i: errors[i].estimate)
        e = errors[weakest]
        e = dataclasses.replace(e, test=f"{e.test}; the smallest of {len(errors)} errors")
        return Measure(e, f"smallest {_pct(e.estimate)} at {names[weakest]} ({each})")
    e = average(errors)
    return Measure(e, f"{_pct(e.estimate)} ({', '.join(names)})")


def measure_share(data: Data, p: Mapping[str, Any]) -> Measure:
    """The mean over runs of one request type's `part` over its response time (both
    count-weighted means of the run, on `side`), e.g. the share of a GET's middleware time
    spent waiting for its server; `most_clients: true` keeps the runs at the most clients.
    Its interval from those runs (their points and repetitions), or with one run from the
    run's batch means of the part and of the response time."""
    kind, side = p.get("type", "set"), p.get("side", "middleware")
    runs = _select(data.runs(p["family"], kind, side), p.get("where"))
    if p.get("most_clients") and not runs.empty:
        runs = runs[runs["clients_total"] == runs["clients_total"].max()]
    runs = runs[runs[p["part"]].notna() & (runs["response_us_mean"] > 0)]
    if runs.empty:
        raise FindingsError(f"no runs with {p['part']}")
    shares = runs[p["part"]] / runs["response_us_mean"]
    if len(shares) >= 2:
        e = mean_evidence(Sample.of_repetitions(shares.tolist()))
        e = Evidence(e.estimate, e.low, e.high, f"t over {len(shares)} runs", 1, e.spread)
    else:
        run = str(runs["run"].iloc[0])
        part = _side_window_values(data, p["family"], run, p["part"], kind, side)
        whole = _side_window_values(data, p["family"], run, "response_us_mean", kind, side)
        n = min(len(part), len(whole))
        if n < 2:
            raise FindingsError(f"too few windows of {run} for an interval")
        e = mean_evidence(Sample.of_run(batch_mean(part[:n] / whole[:n])))
    text = f"{100 * e.estimate:.0f} % of the response time ({len(shares)} runs)"
    return Measure(e, text, unit="share")


def measure_median_share(data: Data, p: Mapping[str, Any]) -> Measure:
    """One part's median over the response time's median, per run, of one request type on
    the middleware: a ratio of medians, to set beside a study's ratio of medians (a share of
    means is another quantity). The part's median comes from the pool records (count-weighted
    over windows and pools, as the 2016 section's tables compute them); the response time's is
    the run's median over the middleware's histograms of that type in its stable windows, the
    value the study's section prints for the same point (`analysis.histograms.
    run_percentiles`). Its interval over the runs at the selected points."""
    kind = str(p.get("type", "get"))
    records = data.table(p["family"], "pool_requests")
    # The pool records are the family's own: so are the runs.
    runs = _select(data.runs(p["family"], kind, "middleware", pooled=False), p.get("where"))
    if runs.empty:
        raise FindingsError(f"no middleware runs of {p['family']} at {p.get('where')}")
    chosen = set(runs["run"])
    records = records[records["run"].isin(chosen) & (records["type"] == kind)]
    part = pools.part_times(records, str(p["part"]), by=())
    histograms = data.table(p["family"], "histograms")
    windows = data.table(p["family"], "windows")
    whole = run_percentiles(
        histograms[histograms["run"].isin(chosen)], windows, qs=(0.5,), types=[kind]
    )
    # The histograms are in the study's time, the pool records as measured.
    whole = whole.assign(p50_whole=whole["p50"] / _time_scale(runs))[["run", "p50_whole"]]
    both = part.merge(whole, on="run")
    both = both[both["p50_whole"] > 0]
    if both.empty:
        raise FindingsError(f"no {kind} parts with a {p['part']} time at {p.get('where')}")
    shares = (both["p50"] / both["p50_whole"]).tolist()
    e = mean_evidence(Sample.of_repetitions(shares))
    if len(shares) < 2:
        e = _nan_evidence_of(e, "one run, no interval")
    clients = sorted({int(c) for c in runs["clients_total"]})
    where = f"{', '.join(map(str, clients))} clients"
    whole_ms = both["p50_whole"].mean() / 1e3 * _time_scale(runs)
    text = (
        f"median {p['part']} {_fmt(both['p50'].mean() / 1e3 * _time_scale(runs), 3)} of"
        f" {_fmt(whole_ms, 3)} ms ({100 * e.estimate:.0f} %; {where}, {len(shares)} runs)"
    )
    delay_part = None
    if "derived_delay" in p:
        part_ms = both["p50"].mean() / 1e3 * _time_scale(runs)
        trip, words = _derived_round_trip(data, p["derived_delay"])
        text += (
            f"; {_fmt(trip, 1)} ms of it is the round trip of the delay derived from the seed"
            f" ({100 * trip / whole_ms:.0f} % alone)"
        )
        delay_part = (trip / part_ms if part_ms > 0 else math.nan, words)
    return Measure(e, text, unit="share", delay_part=delay_part)


def _derived_round_trip(data: Data, which: Mapping[str, str]) -> tuple[float, str]:
    """The round trip (ms, the study's time) over a delay derived from a study number, which
    the measurement does not test, and the delay in words."""
    one_way = data.derived_delays.get(str(which["study"]), {}).get(str(which["pair"]))
    if one_way is None:
        raise FindingsError(f"no derived delay {which['pair']} of {which['study']}")
    return 2 * one_way, f"the {which['pair'].replace('_', '-')} delay of {which['study']}"


def _time_scale(runs: pd.DataFrame) -> float:
    """The factor that puts a run's times in the study's time (1/s slower: times times s)."""
    return float(scale_of(runs, "runs table").iloc[0])


def _nan_evidence_of(e: Evidence, test: str) -> Evidence:
    return Evidence(e.estimate, math.nan, math.nan, test, e.repetitions, math.nan, e.design)


def measure_gain_per_doubling(data: Data, p: Mapping[str, Any]) -> Measure:
    """Diminishing returns in every part: for each pair of consecutive steps of a factor's
    levels (each level's best point), the log gain of the earlier step minus that of the
    later (ln X2/X1 - ln X3/X2, ...); positive when the returns diminish. Every pair must be
    positive, so the estimate is the pair that decides: one whose interval lies below zero
    (the claim fails there), else the one with the lowest interval. Needs three levels. With
    `pair: last` the claim is that the returns diminish at some point: the last pair decides
    (the last step gains less than the one before); `pair: first`, the first pair."""
    runs = _select(data.runs(p["family"]), p.get("where"))
    levels = sorted(runs[p["factor"]].dropna().astype(str).unique(), key=_order)
    if len(levels) < 3:
        raise FindingsError(f"{p['factor']} has {len(levels)} levels here; the test needs 3")
    samples = {
        lv: level_sample(
            data,
            p["family"],
            _best_point_runs(runs[runs[p["factor"]].astype(str) == lv]),
            "throughput_ops",
            "all",
        )
        for lv in levels
    }
    contrasts = [
        (i, log_contrast([samples[a], samples[b], samples[c]], [-1, 2, -1]))
        for i, (a, b, c) in enumerate(zip(levels, levels[1:], levels[2:], strict=False))
    ]
    failing = [(i, e) for i, e in contrasts if e.has_interval and e.high < 0]
    if p.get("pair") in ("first", "last"):
        i, e = contrasts[0 if p["pair"] == "first" else -1]
    else:
        i, e = failing[0] if failing else min(contrasts, key=lambda ie: (ie[1].low, ie[1].estimate))

    def gain(a: str, b: str) -> str:
        return f"{a}→{b}: {_pct(samples[b].mean / samples[a].mean - 1)}"

    steps = "; ".join(gain(a, b) for a, b in itertools.pairwise(levels))
    decides = f"{levels[i]}→{levels[i + 1]} against {levels[i + 1]}→{levels[i + 2]} decides"
    return Measure(e, f"{steps} ({decides})", "log")


def measure_study_ratio(data: Data, p: Mapping[str, Any]) -> Measure:
    """The best point's throughput (in the study's time) over a value the study printed
    (`value`, its units): whether our maximum is the study's."""
    value = float(p["value"])
    if not value > 0:
        raise FindingsError(f"study_ratio needs a positive value, got {value}")
    runs = _best_point_runs(_select(data.runs(p["family"]), p.get("where")))
    sample = level_sample(data, p["family"], runs, "throughput_ops", "all")
    e = mean_evidence(sample).scaled(1 / value)
    text = f"{_fmt(sample.mean)} of {_fmt(value)} ops/s ({e.estimate:.2f})"
    return Measure(e, text, "ratio")


def _level_samples(
    data: Data, family: str, runs: pd.DataFrame, factor: str, levels: Sequence[str]
) -> dict[str, Sample]:
    """Each level's throughput sample: the runs of its best point."""
    return {
        lv: level_sample(
            data, family, _best_point_runs(runs[runs[factor].astype(str) == lv]),
            "throughput_ops", "all",
        )
        for lv in levels
    }  # fmt: skip


def measure_max_level(data: Data, p: Mapping[str, Any]) -> Measure:
    """Where the maximum lies: the best throughput of the levels of `factor` within `band`
    of the study's `level` over the best of every other level, minus one. Positive when the
    maximum lies at the study's level, negative when it lies elsewhere; a plateau over both
    gives about zero. The best of the other levels is the largest of several noisy means,
    biased upwards, so the test leans against the study's location, not towards it."""
    factor, at, band = p["factor"], float(p["level"]), float(p.get("band", 0))
    runs = _select(data.runs(p["family"]), p.get("where"))
    levels = sorted(runs[factor].dropna().astype(str).unique(), key=_order)
    inside = [lv for lv in levels if abs(float(lv) - at) <= band]
    outside = [lv for lv in levels if lv not in inside]
    if not inside or not outside:
        raise FindingsError(f"{factor} needs levels within {band:g} of {at:g} and beyond")
    samples = _level_samples(data, p["family"], runs, factor, levels)
    best_in = max(inside, key=lambda lv: samples[lv].mean)
    best_out = max(outside, key=lambda lv: samples[lv].mean)
    e = relative_change(samples[best_out], samples[best_in])
    top = max(levels, key=lambda lv: samples[lv].mean)
    words = str(p.get("words", factor.removeprefix("level_")))
    span = f"{inside[0]}–{inside[-1]}" if len(inside) > 1 else inside[0]
    text = (
        f"maximum at {top} {words} ({_fmt(samples[top].mean)} ops/s); best at {span}:"
        f" {_fmt(samples[best_in].mean)}, elsewhere: {_fmt(samples[best_out].mean)}"
        f" at {best_out} ({_pct(e.estimate)})"
    )
    return Measure(e, text)


MEASURES: dict[str, Callable[[Data, Mapping[str, Any]], Measure]] = {
    "link_ratio": measure_link_ratio,
    "study_ratio": measure_study_ratio,
    "max_throughput": measure_max_throughput,
    "response": measure_response,
    "paired": measure_paired,
    "factorial_top": measure_factorial_top,
    "model_error": measure_model_error,
    "mva2018": measure_mva2018,
    "share": measure_share,
    "median_share": measure_median_share,
    "gain_per_doubling": measure_gain_per_doubling,
    "max_level": measure_max_level,
}


# --- rules ----------------------------------------------------------------------------------

DIRECTIONS = {"increase": 1, "above": 1, "decrease": -1, "below": -1}


def decide(rule: Mapping[str, Any], study: Any, e: Evidence) -> tuple[Verdict, float]:
    """The verdict of a finding's rule on the evidence, and the distance from the decision's
    threshold (for the repetitions a decision would need).

    - `effect` (`direction`: increase or decrease): the estimate differs from zero that way;
    - `beyond` (`direction`: above or below, `threshold`): the estimate lies past the
      threshold that way;
    - `within` (`tolerance`): the estimate lies within `tolerance` of the study's value;
    - `dominant`: the study's term's effect exceeds every other term's (the estimate is the
      difference, so it is an `effect` with direction increase)."""
    kind = rule.get("kind")
    if kind in ("effect", "beyond", "dominant"):
        direction = DIRECTIONS[rule.get("direction", "increase")]
        threshold = float(rule.get("threshold", 0.0)) if kind == "beyond" else 0.0
        return verdicts.beyond(e, threshold, direction), verdicts.margin(e, threshold)
    if kind == "within":
        tolerance = float(rule["tolerance"])
        return (
            verdicts.within(e, float(study), tolerance),
            verdicts.band_margin(e, float(study), tolerance),
        )
    raise FindingsError(f"unknown rule {kind!r}; known: {', '.join(RULES)}")


def finding_bottleneck(data: Data, loads: Sequence[Mapping[str, Any]], m: Mapping) -> str:
    """The bottleneck at the highest load of the points a finding is measured on (its
    family's `where` selection), else of the family's group (`where_group`)."""
    family = m.get("family", "")
    raw = data.families.get(family, {}).get("points")
    if raw is not None and m.get("where"):
        try:
            pools_table = data.families[family].get("pools")
            names = [
                r["bottleneck"] for r in family_loads(family, _select(raw, m["where"]), pools_table)
            ]
        except FindingsError:
            names = []
        if names:
            return max(sorted(set(names)), key=names.count)
    return bottleneck_of(loads, family, m.get("where_group"))


def level_bottlenecks(
    data: Data, m: Mapping[str, Any], points: Mapping[str, pd.DataFrame]
) -> list[str]:
    """The bottleneck at each level a finding compares (analysis.construction.selections), at
    the point it judges: a maximum's best point (or the fitted point where a fit pins it on
    its plateau, analysis.construction.judged_point), else the highest load of that level's points
    in its group (`where_group`); [] when a level has no points."""
    out = []
    for family, where in construction.selections(m, points):
        raw = data.families.get(family, {}).get("points")
        if raw is None:
            return []
        rows = construction.select(raw, where)
        if m["kind"] == "max_throughput":
            judged = construction.judged_point(family, rows, data.sites)
            rows = rows[rows["point"].astype(str) == str(judged)]
        names = [
            r["bottleneck"]
            for r in family_loads(family, rows, data.families[family].get("pools"))
            if _matches(r["group"], m.get("where_group"))
        ]
        if not names:
            return []
        out.append(max(sorted(set(names)), key=names.count))
    return out


# --- the catalogue and its evaluation -------------------------------------------------------


def load_catalogue(path: str | Path) -> dict[str, Any]:
    """Reads and checks workflows/findings.yaml."""
    doc = yaml.safe_load(Path(path).read_text())
    if not isinstance(doc, dict) or "findings" not in doc or "bottlenecks" not in doc:
        raise FindingsError(f"{path}: needs `findings` and `bottlenecks`")
    if "level" in doc:
        raise FindingsError(
            f"{path}: `level` is not set here: the report has one confidence level,"
            " analysis.aggregate.CI_LEVEL"
        )
    for f in doc["findings"]:
        missing = {"id", "claim", "source", "study", "study_text", "measure", "rule", "reasons"}
        missing -= set(f)
        if missing:
            raise FindingsError(f"{path}: finding {f.get('id')} lacks {sorted(missing)}")
        if f["measure"]["kind"] not in MEASURES:
            raise FindingsError(
                f"{path}: finding {f['id']}: unknown measure {f['measure']['kind']}"
            )
        rule = f["rule"]
        if rule.get("kind") not in RULES:
            raise FindingsError(f"{path}: finding {f['id']}: unknown rule {rule.get('kind')}")
        if rule["kind"] in ("effect", "beyond") and rule.get("direction") not in DIRECTIONS:
            raise FindingsError(
                f"{path}: finding {f['id']}: direction must be one of {sorted(DIRECTIONS)}"
            )
        if rule["kind"] == "beyond" and "threshold" not in rule:
            raise FindingsError(f"{path}: finding {f['id']}: a `beyond` rule needs a threshold")
        if rule["kind"] == "within" and "tolerance" not in rule:
            raise FindingsError(f"{path}: finding {f['id']}: a `within` rule needs a tolerance")
        if rule["kind"] in ("beyond", "within") and not str(rule.get("why", "")).strip():
            raise FindingsError(
                f"{path}: finding {f['id']}: a `{rule['kind']}` rule needs a `why`: which"
                " words of the study its threshold reads, and how"
            )
        if not isinstance(f.get("study_value", 0.0), (int, float)):
            raise FindingsError(f"{path}: finding {f['id']}: `study_value` must be a number")
        if "construction" in f:
            raise FindingsError(
                f"{path}: finding {f['id']}: `construction` is not set by hand: the rules of"
                " analysis.construction decide it from the finding's points"
            )
        if "default" not in f["reasons"]:
            raise FindingsError(f"{path}: finding {f['id']}: reasons need a `default`")
        for key, entry in f["reasons"].items():
            if not isinstance(entry, str):
                raise FindingsError(
                    f"{path}: finding {f['id']}: reason {key!r} is a text: a verdict is"
                    " decided by the rules in code, which a reason only explains"
                )
        if f.get("study_of") not in STUDIES:
            raise FindingsError(
                f"{path}: finding {f['id']}: `study_of` must be one of {sorted(STUDIES)}"
            )
    for b in doc["bottlenecks"]:
        if not {"family", "bottleneck", "source"} <= set(b):
            raise FindingsError(f"{path}: bottleneck entry {b} needs family, bottleneck, source")
    check_untested(path, doc)
    return doc


def check_untested(path: str | Path, doc: Mapping[str, Any]) -> None:
    """The optional keys: a finding's `at` (the configuration it is judged at, as text) and
    the top-level `not_tested` list of a seed's statements that no finding tests, each with
    its `source`, `claim` and `why` (a hypothesis, an aim, or nothing our data can test)."""
    for f in doc["findings"]:
        if not isinstance(f.get("at", ""), str):
            raise FindingsError(f"{path}: finding {f['id']}: `at` must be text")
    entries = doc.get("not_tested", [])
    if not isinstance(entries, list):
        raise FindingsError(f"{path}: `not_tested` must be a list")
    for n in entries:
        if not isinstance(n, dict) or not {"source", "claim", "why", "study_of"} <= set(n):
            raise FindingsError(f"{path}: not_tested entry {n} needs study_of, source, claim, why")
        if not all(isinstance(n[k], str) and n[k].strip() for k in ("source", "claim", "why")):
            raise FindingsError(f"{path}: not_tested entry {n}: source, claim, why are text")
        if str(n["study_of"]) not in STUDIES:
            raise FindingsError(
                f"{path}: not_tested entry {n['claim']!r}: `study_of` must be one of"
                f" {sorted(STUDIES)}"
            )


# Which study a finding belongs to: the report groups its "do the conclusions hold?" tables so.
STUDIES = ("2018", "2016", "2015")


@dataclass(frozen=True)
class Outcome:
    id: str
    claim: str
    source: str
    study_of: str
    study: str
    ours: str
    verdict: Verdict  # one of five (analysis.verdicts.Verdict)
    estimate: float  # the quantity the rule decides on
    ci_low: float
    ci_high: float
    unit: str  # of the estimate (Measure.unit)
    test: str
    repetitions: int  # per level; 0 when nothing was measured
    needed: int | None  # repetitions per level a decision would need, when inconclusive
    study_value: float  # the study's value of the estimate (catalogue `study_value`), or NaN
    bottleneck: str
    construction: str  # why the result follows from the model's construction; "" otherwise
    reason: str  # why it is not reproduced; "" when reproduced
    # The rule that decided the verdict: the interval rule, a construction rule
    # (analysis.construction) or the model's validity check.
    decided_by: str = ""
    # What the interval rule alone gives (for a row by construction or not testable, the
    # verdict it would have had as evidence).
    interval_verdict: str = ""
    # The other families whose runs of the same configurations its levels pooled.
    pooled_with: tuple[str, ...] = ()
    # The reason in a few words, for the report's table (`reason` in full otherwise).
    short_reason: str = ""
    # The bottleneck at each level it compares (level_bottlenecks), where it has levels.
    level_bottlenecks: tuple[str, ...] = ()
    # The verdict under the other calibration sessions' scenarios (analysis.sensitivity), in
    # words; "" where no scenario moves the measure.
    sessions: str = ""

    @property
    def ratio(self) -> float:
        """Our estimate over the study's value of it (NaN without one)."""
        if math.isnan(self.study_value) or self.study_value == 0 or math.isnan(self.estimate):
            return math.nan
        return self.estimate / self.study_value

    @property
    def is_evidence(self) -> bool:
        """Whether the verdict counts as evidence: neither by construction nor untestable."""
        return self.verdict not in (Verdict.BY_CONSTRUCTION, Verdict.NOT_TESTABLE)


# The short reason of a row whose verdict differs between the calibration's sessions.
CALIBRATION_BOUND = "the calibration's session decides it"


def _inconclusive_reason(e: Evidence | None, needed: int | None) -> str:
    if e is None:
        return "nothing to decide on"
    if not e.has_interval:
        return f"no interval ({e.test})"
    if needed is None:
        return "the interval holds the threshold, and the estimate sits on it"
    run = f"{e.repetitions} repetition{'s' if e.repetitions != 1 else ''} per level"
    if needed > MAX_REPETITIONS:
        # A power calculation at an effect this near the threshold asks for no practical
        # count: say what it means instead of printing the count.
        return (
            f"the interval holds the threshold after {run}, and the estimate lies so near"
            f" the threshold that no practical number of repetitions (more than"
            f" {MAX_REPETITIONS} per level at the observed spread) would decide it"
        )
    return (
        f"the interval holds the threshold after {run}; at the observed effect and spread,"
        f" {needed} repetitions per level would decide"
    )


def rule_text(rule: Mapping[str, Any], study: Any) -> str:
    """The interval rule in words, as findings.json records what decided a verdict."""
    kind = rule.get("kind")
    if kind == "effect":
        direction = rule.get("direction", "increase")
        return f"interval: {'an' if direction == 'increase' else 'a'} {direction} (beyond 0)"
    if kind == "beyond":
        return f"interval: {rule.get('direction')} {float(rule['threshold']):+g}"
    if kind == "within":
        return f"interval: within {float(rule['tolerance']):g} of {float(study):g}"
    if kind == "dominant":
        return "interval: the study's term dominates every other"
    return f"interval: {kind}"


MODEL_MEASURES = ("model_error", "mva2018")


# What gates a claim about a model's own error (analysis.models.validity): a restated recipe
# makes it by construction, a model that fails its validity check makes it not testable here.
RECIPE = "recipe"
INVALID = "invalid"


def _gate_of(valid: bool, reason: str, recipe: str, in_domain: bool = False) -> tuple[str, str]:
    """A restated recipe first (by construction), then a model outside its domain (not
    testable). A model within its domain that only misses the lightest load is judged: a
    claim about its own error claims that miss."""
    if recipe:
        return RECIPE, recipe
    if valid or in_domain:
        return "", ""
    return INVALID, reason or "the model fails its validity check here"


def _entries_gate(entries: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The gate of a finding over several entries (a model per number of servers): the recipe's
    only where every entry's error is its recipe's (one entry that queues is a test of the
    model, and the average holds it), else the first invalid entry's, else ("", "")."""
    gates = []
    for entry in entries:
        check = entry.get("validity")
        if not isinstance(check, Mapping):
            return INVALID, "the model carries no validity check on our data"
        gates.append(
            _gate_of(
                bool(check.get("valid", False)),
                str(check.get("reason") or ""),
                str(check.get("restates_recipe") or ""),
                bool(check.get("in_domain", False)),
            )
        )
    if gates and all(g[0] == RECIPE for g in gates):
        return gates[0]
    return next((g for g in gates if g[0] == INVALID), ("", ""))


def model_gate(data: Data, m: Mapping[str, Any]) -> tuple[str, str]:
    """What keeps a finding about a model's own error from judging the study, and why:
    (`RECIPE`, why) when its error is its fitting recipe's algebra, (`INVALID`, why) when the
    model is applied outside its domain on our data (analysis.models.validity: inputs out of
    range, a utilisation above 1), ("", "") when it may be judged. A model within its domain
    that misses even the lightest load is judged: its miss is what the claim is about."""
    if m["kind"] == "model_error":
        entries = data.models2016.get(m["model"])
        if not entries:
            return "", ""  # not measured: the measure says so
        return _entries_gate(entries if isinstance(entries, list) else [entries])
    if m["kind"] == "mva2018":
        mva = data.mva2018
        if mva is None or mva.empty or "workload" not in mva.columns:
            return "", ""
        rows = mva[mva["workload"] == m["workload"]]
        if "valid" not in rows.columns:
            return INVALID, "the model carries no validity check on our data"
        for _, row in rows.iterrows():
            domain = bool(row["in_domain"]) if "in_domain" in rows.columns else False
            gate = _gate_of(bool(row["valid"]), str(row["validity_reason"]), "", domain)
            if gate[0]:
                return gate
        return "", ""
    return "", ""


# Measures that read a family's own replications only (Data.runs(pooled=False)).
UNPOOLED_MEASURES = ("factorial_top", "median_share")


def _pooled_families(
    data: Data, m: Mapping[str, Any], points: Mapping[str, pd.DataFrame]
) -> list[str]:
    """The other families whose runs the finding's levels pool (same configurations)."""
    out: set[str] = set()
    for family, where in construction.selections(m, points):
        table = points.get(family)
        if table is not None:
            chosen = set(construction.select(table, where)["point"].astype(str))
            out |= set(data.pooled_from(family, chosen))
    return sorted(out)


def evaluate(
    catalogue: Mapping[str, Any], data: Data, loads: Sequence[Mapping[str, Any]]
) -> list[Outcome]:
    """Every finding's verdict. The interval rule decides on the evidence (a finding whose
    data is missing is inconclusive, with the missing data as its reason; a contradicted one
    takes its reason from the catalogue, by the bottleneck of the points it is measured on).
    Then a model that fails its validity check makes the finding not testable here, and a
    quantity the scale model sets (analysis.construction) makes it by construction: both
    keep the interval's verdict beside theirs."""
    out = []
    points = {f: t["points"] for f, t in data.families.items() if "points" in t}
    for f in catalogue["findings"]:
        m = f["measure"]
        levels = level_bottlenecks(data, m, points)
        bottleneck = finding_bottleneck(data, loads, m)
        if bottleneck == "not identified" and len(set(levels)) == 1:
            # A measure over two selections names no one family's group: its levels do.
            bottleneck = levels[0]
        j = _judged(f, data, bottleneck, levels)
        e, sessions = j.evidence, j.sessions
        verdict, reason, decided_by, needed = j.verdict, j.reason, j.decided_by, j.needed
        pooled = _pooled_families(data, m, points) if m["kind"] not in UNPOOLED_MEASURES else []
        interval = verdict
        if j.bound_by_calibration:
            # The interval decides with the kept factors, another session's calibration not:
            # the calibration, not the system, would decide the verdict.
            verdict = Verdict.INCONCLUSIVE
        built = ""
        short = _short_reason(j)
        gate, why = model_gate(data, m) if m["kind"] in MODEL_MEASURES else ("", "")
        untestable = _untestable(f, points, data)
        measured = decided_by != "not measured"
        if gate == RECIPE:
            verdict, built, needed, reason = Verdict.BY_CONSTRUCTION, why, None, why
            short, decided_by = "restates the recipe", "construction (recipe): " + why
        elif gate == INVALID:
            verdict, reason, needed, short = Verdict.NOT_TESTABLE, why, None, ""
            decided_by = "model validity: " + why
        elif untestable.applies and measured:
            verdict, reason, needed = Verdict.NOT_TESTABLE, untestable.reason, None
            short = untestable.short
            decided_by = f"{untestable.rule}: {untestable.reason}"
        elif measured:
            rule = _construction(f, data, points, bottleneck, levels, j, interval)
            if rule.applies:
                verdict, built, needed = Verdict.BY_CONSTRUCTION, rule.reason, None
                reason, short = rule.reason, rule.short
                decided_by = f"construction ({rule.rule}): {rule.reason}"
        nan = math.nan
        out.append(
            Outcome(
                id=f["id"],
                claim=f["claim"],
                source=f["source"],
                study_of=str(f["study_of"]),
                study=f["study_text"],
                ours=j.ours,
                verdict=verdict,
                estimate=e.estimate if e else nan,
                ci_low=e.low if e else nan,
                ci_high=e.high if e else nan,
                unit=j.unit,
                test=e.test if e else "",
                repetitions=e.repetitions if e else 0,
                needed=needed,
                study_value=float(f.get("study_value", math.nan)),
                bottleneck=bottleneck,
                construction=built,
                reason=reason,
                decided_by=decided_by,
                interval_verdict=interval.value,
                pooled_with=tuple(pooled) if e is not None else (),
                short_reason=short,
                level_bottlenecks=tuple(levels),
                sessions=sessions.text() if sessions is not None else "",
            )
        )
    return out


@dataclass(frozen=True)
class _Judgement:
    """A finding as its interval rule decides it, before construction and validity: the
    evidence (None: nothing to decide), ours in words, its unit, the verdict with its reason
    and rule, the repetitions that would decide it, and how the other sessions' calibrations
    judge it (`bound_by_calibration`: one of them changes a decided verdict)."""

    evidence: Evidence | None
    ours: str
    unit: str
    verdict: Verdict
    reason: str
    decided_by: str
    needed: int | None = None
    delay_part: tuple[float, str] | None = None
    sessions: sensitivity.Sensitivity | None = None
    bound_by_calibration: bool = False


def _judged(f: Mapping[str, Any], data: Data, bottleneck: str, levels: Sequence[str]) -> _Judgement:
    """The finding's measure, decided by its rule and again under every other session's
    calibration; inconclusive with the missing data as its reason where it is not measured."""
    m = f["measure"]
    decided_by = rule_text(f["rule"], f["study"])
    # What was measured before a rule failed stays with the row, as its evidence.
    e: Evidence | None = None
    unit, delay_part = "change", None
    try:
        measured = MEASURES[m["kind"]](data, {**m, "study": f["study"]})
        e, ours, unit, delay_part = (
            measured.evidence,
            measured.text,
            measured.unit,
            measured.delay_part,
        )
        if e is None:
            reason = _inconclusive_reason(None, None)
            return _Judgement(None, ours, unit, Verdict.INCONCLUSIVE, reason, decided_by,
                              delay_part=measured.delay_part)  # fmt: skip
        # The rule's threshold alone decides; the study's own value does not.
        verdict, distance = decide(f["rule"], f["study"], e)
        sessions = sensitivity.judge(
            e, unit, m, str(f.get("study_of")), bottleneck, levels, verdict.value,
            data.scenarios, lambda moved: decide(f["rule"], f["study"], moved)[0].value,
            fixed_time=measured.fixed_time,
        )  # fmt: skip
    except (FindingsError, VerdictError) as err:
        return _Judgement(e, "not measured", unit, Verdict.INCONCLUSIVE, f"not measured: {err}",
                          "not measured", delay_part=delay_part)  # fmt: skip
    needed, bound = None, False
    if not sessions.stands and verdict is not Verdict.INCONCLUSIVE:
        bound = True
        decided_by += f"; {verdict.value} with the kept factors, {sessions.text()}"
        reason = f"the calibration's session decides it: {sessions.text()}"
    elif verdict is Verdict.INCONCLUSIVE:
        needed = repetitions_needed(e, distance)
        reason = _inconclusive_reason(e, needed)
    elif verdict is Verdict.CONTRADICTED:
        reason = str(f["reasons"].get(bottleneck, f["reasons"]["default"]))
    else:
        reason = ""
    return _Judgement(e, ours, unit, verdict, reason, decided_by, needed,
                      measured.delay_part, sessions, bound)  # fmt: skip


def _short_reason(j: _Judgement) -> str:
    """The row's short reason for an interval's verdict: the session that decides it, or
    what more repetitions would do."""
    if j.bound_by_calibration and j.sessions:
        return f"{CALIBRATION_BOUND} ({j.sessions.deciding()})"
    if not j.needed:
        return ""
    if j.needed > MAX_REPETITIONS:
        return "the estimate sits near the threshold"
    return f"{j.needed} repetitions per level would decide"


def _untestable(
    f: Mapping[str, Any], points: Mapping[str, pd.DataFrame], data: Data
) -> construction.Decision:
    """Whether the finding is not testable here: an assumed role's share of the result, a
    configuration the seed's is far from, or an assumed commit delay that shapes it."""
    decision = construction.assumed_role(f, points, data.unfitted)
    if not decision.applies:
        decision = construction.unmeasured_configuration(f, points)
    if not decision.applies:
        counters = {
            family: t["db_counters"] for family, t in data.families.items() if "db_counters" in t
        }
        decision = construction.assumed_commit(f, points, counters, data.assumed_commits)
    return decision


def _construction(
    f: Mapping[str, Any],
    data: Data,
    points: Mapping[str, pd.DataFrame],
    bottleneck: str,
    levels: Sequence[str],
    j: _Judgement,
    interval: Verdict,
) -> construction.Decision:
    """Whether the scale model sets what the finding judges (analysis.construction), or a
    derived delay's round trip does where its dilution could have made the verdict."""
    e = j.evidence
    # A change's interval (an estimate in units of change, between two levels): its sign
    # says which way the levels moved.
    signed = j.unit == "change" and e is not None and e.has_interval
    change = (e.low, e.high) if signed and e is not None else None
    rule = construction.decide(
        f, bottleneck, points, data.sites, levels, change,
        contradicted=interval is Verdict.CONTRADICTED,
    )  # fmt: skip
    # A constant delay dilutes a change toward none: it takes the change out of the
    # evidence only where that could have made the verdict, as a link's cap does.
    within = f["rule"]["kind"] == "within"
    against = j.unit == "change" and interval is (
        Verdict.CONTRADICTED if within else Verdict.REPRODUCED
    )
    if not rule.applies and j.delay_part is not None and not against:
        rule = construction.delay_set(*j.delay_part)
    return rule


MIDDLEWARE_THREADS = "middleware threads"


def with_pool_bottleneck(row: Mapping[str, Any]) -> str:
    """A load row's bottleneck, with the middleware's busiest thread pool (`with_threads`)
    named where no link or CPU budget reached SATURATED and the pool was busy that long: its
    threads then hold the requests, waiting on their servers rather than on a CPU."""
    threads = row.get("threads")
    if row["bottleneck"] == NONE_SATURATED and threads and threads["busy"] >= SATURATED:
        return MIDDLEWARE_THREADS
    return str(row["bottleneck"])


def study_bottleneck(catalogue: Mapping[str, Any], family: str, group: Mapping[str, str]) -> dict:
    """The catalogue's entry for a family's group: the most specific one that matches."""
    entries = [
        b
        for b in catalogue["bottlenecks"]
        if b["family"] == family and _matches(group, b.get("group"))
    ]
    if not entries:
        return {"bottleneck": "not in the study", "source": ""}
    return max(entries, key=lambda b: len(b.get("group") or {}))


# --- two builds side by side ----------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """One finding's verdicts in two builds (a findings.json each) and whether they clash: a
    finding reproduced in one build and contradicted in the other, which a verdict that says
    how sure it is must never give (a flip has to pass through inconclusive)."""

    id: str
    first: dict[str, Any]
    second: dict[str, Any]

    @property
    def flipped(self) -> bool:
        return self.first["verdict"] != self.second["verdict"]

    @property
    def clash(self) -> bool:
        decided = {Verdict.REPRODUCED.value, Verdict.CONTRADICTED.value}
        return self.flipped and {self.first["verdict"], self.second["verdict"]} == decided


def compare_builds(first: Sequence[Mapping], second: Sequence[Mapping]) -> list[Comparison]:
    """The findings both builds judged (their findings.json `findings`), in the first's order."""
    by_id = {str(f["id"]): dict(f) for f in second}
    return [
        Comparison(str(f["id"]), dict(f), by_id[str(f["id"])])
        for f in first
        if str(f["id"]) in by_id
    ]
