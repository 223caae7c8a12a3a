"""The study's findings against ours: per-family loads and bottlenecks, and one verdict per
finding of the catalogue (workflows/findings.yaml) by the rule the catalogue states.

Rules:
- `effect`: the effect has the study's direction and is significant at the report's
  confidence level (Welch's t-test on the repetitions, or a one-sample t-test on paired
  differences).
- `within`: our value lies within `tolerance` (absolute) of the study's.
- `sign`: our value has the study's sign and its magnitude exceeds `tolerance`.
- `same`: our label equals the study's.
- `share`: our value (a fraction) exceeds `tolerance`.
A finding that is not reproduced takes its reason from the catalogue, chosen by the computed
bottleneck of the family it is about.
"""

from __future__ import annotations

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

from analysis import factorial, linkload
from analysis.aggregate import CI_LEVEL
from analysis.bottleneck import cpu_utilisation, host_saturated, name_bottleneck
from analysis.histograms import histogram_quantiles
from analysis.scaling import TIME_BASE, in_study_time, scale_of, with_scale

GROUP_COLUMNS = ("level_setup", "level_workload")
RULES = ("effect", "within", "sign", "same", "share")


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


def family_loads(family: str, points: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per group of the family (setup and workload where it has them): its highest
    load point with link and CPU utilisations and the bottleneck they name."""
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
    return rows


def _matches(group: Mapping[str, str], wanted: Mapping[str, object] | None) -> bool:
    return all(str(group.get(k)) == str(v) for k, v in (wanted or {}).items())


def bottleneck_of(loads: Sequence[Mapping[str, Any]], family: str, group: Mapping | None) -> str:
    """The computed bottleneck of a family's group; with several groups, the most frequent."""
    names = [
        r["bottleneck"] for r in loads if r["family"] == family and _matches(r["group"], group)
    ]
    if not names:
        return "not identified"
    return max(sorted(set(names)), key=names.count)


# --- statistics ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Test:
    """An effect (`high` minus `low`, relative to `low`) and its two-sided p-value."""

    low: float
    high: float
    p: float

    @property
    def change(self) -> float:
        return (self.high - self.low) / self.low if self.low else math.nan


def welch(low: Sequence[float], high: Sequence[float]) -> Test:
    a, b = np.asarray(low, float), np.asarray(high, float)
    if len(a) == 0 or len(b) == 0:
        raise FindingsError("an effect needs observations at both levels")
    p = math.nan
    if len(a) >= 2 and len(b) >= 2 and (a.std() > 0 or b.std() > 0):
        p = float(stats.ttest_ind(b, a, equal_var=False).pvalue)
    return Test(float(a.mean()), float(b.mean()), p)


def paired(low: Sequence[float], high: Sequence[float]) -> Test:
    a, b = np.asarray(low, float), np.asarray(high, float)
    if len(a) != len(b) or len(a) == 0:
        raise FindingsError("paired observations need equal, non-zero counts")
    rel = (b - a) / a
    p = math.nan
    if len(rel) >= 2 and rel.std() > 0:
        p = float(stats.ttest_1samp(rel, 0.0).pvalue)
    return Test(float(a.mean()), float(b.mean()), p)


def verdict(rule: Mapping[str, Any], study: Any, ours: Any, level: float) -> bool:
    """Whether our value reproduces the study's under the finding's rule."""
    kind = rule.get("kind")
    tolerance = float(rule.get("tolerance", 0.0))
    if kind == "effect":
        if not isinstance(ours, Test):
            raise FindingsError("an effect rule needs a test")
        sign = {"increase": 1, "decrease": -1}[rule["direction"]]
        return bool(
            np.sign(ours.high - ours.low) == sign and not math.isnan(ours.p) and ours.p < 1 - level
        )
    if kind == "within":
        return bool(abs(float(ours) - float(study)) <= tolerance)
    if kind == "sign":
        return bool(np.sign(float(ours)) == np.sign(float(study)) and abs(float(ours)) > tolerance)
    if kind == "same":
        return str(ours) == str(study)
    if kind == "share":
        return bool(float(ours) > tolerance)
    raise FindingsError(f"unknown rule {kind!r}; known: {', '.join(RULES)}")


# --- measures: our side of each finding ----------------------------------------------------


@dataclass
class Data:
    """The tables the findings read: per family `points`, `runs`, `histograms`, `pools`, and
    the model results (`queueing2016`: the 2016 numbers, `mva2018`: the MVA rows)."""

    families: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    queueing2016: dict[str, str] = field(default_factory=dict)
    mva2018: pd.DataFrame | None = None

    def table(self, family: str, name: str) -> pd.DataFrame:
        """A family's table; points, runs and histograms in the study's time (throughput /
        s, times * s by the runs' scale), as the study's values they stand beside."""
        try:
            raw = self.families[family][name]
        except KeyError as err:
            raise FindingsError(f"no {name} table for family {family}") from err
        if name not in STUDY_TIME_TABLES or TIME_BASE in raw.columns:
            return raw
        points = self.families[family].get("points")
        if "scale" in raw.columns:
            framed = raw
        elif (
            points is not None
            and {"point", "scale"} <= set(points.columns)
            and ("point" in raw.columns)
        ):
            framed = with_scale(raw, points, "point")
        else:
            framed = raw.assign(scale=scale_of(raw))
        return in_study_time(framed)


# The tables whose throughputs and times the findings show beside the study's.
STUDY_TIME_TABLES = ("points", "runs", "histograms")


@dataclass(frozen=True)
class Measure:
    value: Any  # what the rule compares: a number, a label or a Test
    text: str  # ours, for the table


def _select(frame: pd.DataFrame, where: Mapping[str, object] | None) -> pd.DataFrame:
    for column, value in (where or {}).items():
        if column not in frame.columns:
            raise FindingsError(f"column {column!r} not in the data")
        frame = frame[frame[column].astype(str) == str(value)]
    return frame


def _ok_client_runs(runs: pd.DataFrame, kind: str = "all") -> pd.DataFrame:
    ok = runs["status"] == "ok" if "status" in runs.columns else True
    return runs[(runs["side"] == "client") & (runs["type"] == kind) & ok]


def _fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _pct(x: float) -> str:
    return f"{100 * x:+.1f} %" if not math.isnan(x) else "--"


def _test_text(t: Test, unit: str = "", digits: int = 0) -> str:
    p = "p n/a" if math.isnan(t.p) else f"p={t.p:.2g}"
    return f"{_fmt(t.low, digits)} → {_fmt(t.high, digits)}{unit} ({_pct(t.change)}, {p})"


def _order(value: object) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _levels(frame: pd.DataFrame, column: str, low: object, high: object) -> tuple[str, str]:
    values = sorted(frame[column].dropna().unique(), key=_order)
    if not values:
        raise FindingsError(f"no levels of {column}")
    pick = {"min": values[0], "max": values[-1]}
    return str(pick.get(str(low), low)), str(pick.get(str(high), high))


def measure_link_ratio(data: Data, p: Mapping[str, Any]) -> Measure:
    """Highest read throughput of the group against the servers' egress bound."""
    points = _select(data.table(p["family"], "points"), p.get("where"))
    rows = points[(points["side"] == "client") & (points["type"] == "all")]
    if rows.empty:
        raise FindingsError(f"no points for {p['family']} {p.get('where')}")
    top = rows.loc[rows["throughput_ops_mean"].idxmax()]
    per_server = linkload.egress_mbit(top, 0.0, 1.0, 1.0)["server"]
    # The throughput is in the study's time; so is the bound: the testbed's link cap is the
    # study's link times s (a setting, which in_study_time leaves as set).
    bound = float(top["caps_mbit.server"]) / float(top.get("scale", 1.0)) / per_server
    x = float(top["throughput_ops_mean"])
    return Measure(x / bound, f"{_fmt(x)} of {_fmt(bound)} ops/s ({100 * x / bound:.0f} %)")


def _max_point_runs(data: Data, p: Mapping[str, Any], column: str, level: str) -> list[float]:
    points = _select(data.table(p["family"], "points"), p.get("where"))
    rows = points[(points["side"] == "client") & (points["type"] == "all")]
    rows = rows[rows[column].astype(str) == level]
    if rows.empty:
        raise FindingsError(f"no points with {column}={level}")
    best = rows.loc[rows["throughput_ops_mean"].idxmax(), "point"]
    runs = _ok_client_runs(data.table(p["family"], "runs"))
    return runs[runs["point"] == best]["throughput_ops"].astype(float).tolist()


def measure_max_throughput(data: Data, p: Mapping[str, Any]) -> Measure:
    """The highest throughput at the factor's low and high level (runs of the best point)."""
    points = _select(data.table(p["family"], "points"), p.get("where"))
    low, high = _levels(points, p["factor"], p.get("low", "min"), p.get("high", "max"))
    test = welch(
        _max_point_runs(data, p, p["factor"], low), _max_point_runs(data, p, p["factor"], high)
    )
    return Measure(test, _test_text(test, " ops/s"))


def _run_quantile(hist: pd.DataFrame, q: float) -> pd.Series:
    def one(g: pd.DataFrame) -> float:
        counts = g.groupby("bucket_us")["count"].sum()
        # Client histograms are HdrHistogram's, keyed by each bucket's highest value.
        return histogram_quantiles(
            counts.index.to_numpy(float), counts.to_numpy(float), [q], "upper"
        )[0]

    return hist.groupby("run").apply(one, include_groups=False)


def measure_response(data: Data, p: Mapping[str, Any]) -> Measure:
    """Client response time (mean, or a quantile from the run's histogram) at two levels."""
    column, low, high, kind = p["factor"], str(p["low"]), str(p["high"]), p.get("type", "get")
    points = _select(data.table(p["family"], "points"), p.get("where"))
    wanted = set(points["point"])
    samples = []
    for level in (low, high):
        at = set(points[points[column].astype(str) == level]["point"])
        if p.get("quantile") is not None:
            hist = data.table(p["family"], "histograms")
            hist = hist[
                (hist["side"] == "client")
                & (hist["type"] == kind)
                & hist["point"].isin(at & wanted)
                & (hist["window"] < 0)
            ]
            values = _run_quantile(hist, float(p["quantile"])) / 1e3 if not hist.empty else []
        else:
            runs = _ok_client_runs(data.table(p["family"], "runs"), kind)
            values = runs[runs["point"].isin(at & wanted)]["response_us_mean"] / 1e3
        samples.append([float(v) for v in values])
    test = welch(*samples)
    return Measure(test, _test_text(test, " ms", 2))


def measure_paired_throughput(data: Data, p: Mapping[str, Any]) -> Measure:
    """Throughput at two levels of a factor, paired on every other level and repetition."""
    runs = _select(_ok_client_runs(data.table(p["family"], "runs")), p.get("where"))
    column, low, high = p["factor"], str(p["low"]), str(p["high"])
    keys = [c for c in runs.columns if c.startswith("level_") and c != column] + ["repetition"]
    runs = runs.assign(_level=runs[column].astype(str))
    wide = runs.pivot_table(index=keys, columns="_level", values="throughput_ops", aggfunc="mean")
    if low not in wide.columns or high not in wide.columns:
        raise FindingsError(f"{column} lacks level {low} or {high}")
    both = wide[[low, high]].dropna()
    test = paired(both[low].tolist(), both[high].tolist())
    return Measure(test, _test_text(test, " ops/s") + f", {len(both)} pairs")


def measure_factorial_top(data: Data, p: Mapping[str, Any]) -> Measure:
    """The term that explains most of the throughput's variation (the error left out)."""
    runs = _select(_ok_client_runs(data.table(p["family"], "runs")), p.get("where"))
    names: Mapping[str, str] = p["factors"]
    clash = [c for c in names.values() if c in runs.columns and c not in names]
    frame = runs.drop(columns=clash).rename(columns=dict(names)).reset_index(drop=True)
    try:
        res = factorial.analyse(
            frame, "throughput_ops", list(names.values()), high=p.get("high"), order="started_at"
        )
    except factorial.DesignError as err:
        return Measure(None, f"design incomplete ({err})")
    shares = {t: v for t, v in res.variation.items() if t != "error" and not math.isnan(v)}
    top = max(shares, key=shares.__getitem__)
    return Measure(
        top, f"{top} ({100 * shares[top]:.1f} %; error {100 * res.variation['error']:.1f} %)"
    )


_NUMBER = re.compile(r"[-+−]?\d[\d,{}]*(?:\.\d+)?")


def number_of(text: str) -> float:
    """The number in a generated macro value such as `-70.8\\,\\%` or `2{,}311`."""
    m = _NUMBER.search(text.replace("−", "-"))
    if not m:
        raise FindingsError(f"no number in {text!r}")
    return float(re.sub(r"[,{}]", "", m.group()))


def measure_model_error(data: Data, p: Mapping[str, Any]) -> Measure:
    """A 2016 model's relative error against the measurements, from the 2016 numbers."""
    try:
        x = number_of(data.queueing2016[p["key"]]) / 100
    except KeyError as err:
        raise FindingsError(f"2016 queueing numbers lack {p['key']}") from err
    return Measure(x, f"{_pct(x)} ({p.get('what', 'error')})")


def measure_mva2018(data: Data, p: Mapping[str, Any]) -> Measure:
    """The MVA's throughput error at the largest population of a workload, mean of setups."""
    mva = data.mva2018
    if mva is None or mva.empty:
        raise FindingsError("no MVA results of the 2018 baseline")
    rows = mva[mva["workload"] == p["workload"]]
    if rows.empty:
        raise FindingsError(f"no MVA rows for {p['workload']}")
    top = rows[rows["clients"] == rows.groupby("setup")["clients"].transform("max")]
    err = float(((top["x_model"] - top["x_measured"]) / top["x_measured"]).mean())
    return Measure(err, f"{_pct(err)} (N={int(top['clients'].max())})")


def measure_busiest_pool(data: Data, p: Mapping[str, Any]) -> Measure:
    """Share of the points of the 2016 design whose busiest pool is a server's write thread."""
    busiest = []
    for family in p["families"]:
        pools = data.table(family, "pools")
        if pools.empty:
            continue
        util = pools.groupby(["point", "pool", "server"])["busy_fraction"].mean().reset_index()
        top = util.loc[util.groupby("point")["busy_fraction"].idxmax()]
        busiest += top["pool"].tolist()
    if not busiest:
        raise FindingsError("no pool measurements of the 2016 design")
    share = busiest.count("write") / len(busiest)
    return Measure(share, f"write thread busiest in {busiest.count('write')} of {len(busiest)}")


MEASURES: dict[str, Callable[[Data, Mapping[str, Any]], Measure]] = {
    "link_ratio": measure_link_ratio,
    "max_throughput": measure_max_throughput,
    "response": measure_response,
    "paired_throughput": measure_paired_throughput,
    "factorial_top": measure_factorial_top,
    "model_error": measure_model_error,
    "mva2018": measure_mva2018,
    "busiest_pool": measure_busiest_pool,
}


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
        if f["rule"].get("kind") not in RULES:
            raise FindingsError(f"{path}: finding {f['id']}: unknown rule {f['rule'].get('kind')}")
        if "default" not in f["reasons"]:
            raise FindingsError(f"{path}: finding {f['id']}: reasons need a `default`")
    for b in doc["bottlenecks"]:
        if not {"family", "bottleneck", "source"} <= set(b):
            raise FindingsError(f"{path}: bottleneck entry {b} needs family, bottleneck, source")
    return doc


@dataclass(frozen=True)
class Outcome:
    id: str
    claim: str
    source: str
    study: str
    ours: str
    reproduced: bool
    bottleneck: str
    reason: str  # empty when reproduced


def evaluate(
    catalogue: Mapping[str, Any], data: Data, loads: Sequence[Mapping[str, Any]]
) -> list[Outcome]:
    """Every finding's verdict; a finding whose data is missing is not reproduced, with the
    missing data as its reason."""
    level = CI_LEVEL
    out = []
    for f in catalogue["findings"]:
        m = f["measure"]
        bottleneck = bottleneck_of(loads, m.get("family", ""), m.get("where_group"))
        try:
            measured = MEASURES[m["kind"]](data, m)
            ok = measured.value is not None and verdict(
                f["rule"], f["study"], measured.value, level
            )
            ours = measured.text
            reasons = f["reasons"]
            reason = "" if ok else str(reasons.get(bottleneck, reasons["default"]))
        except FindingsError as err:
            ok, ours, reason = False, "not measured", f"no data: {err}"
        out.append(
            Outcome(
                id=f["id"],
                claim=f["claim"],
                source=f["source"],
                study=f["study_text"],
                ours=ours,
                reproduced=ok,
                bottleneck=bottleneck,
                reason=reason,
            )
        )
    return out


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
