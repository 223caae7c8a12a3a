"""Stable windows, per-run summaries, and per-point statistics across repetitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from common.stability import CI_LEVEL

# The fewest values an interval is computed from.
MIN_CI_N = 3
RUN_KEYS = ["run", "point", "repetition", "side", "type", "keys"]
# The timed metrics of a window; `all_types` weights them by the window's request count.
TIMED_METRICS = ("response_us_mean", "net_us_mean", "queue_us_mean", "worker_us_mean",
                 "server_us_mean")  # fmt: skip
_COMPONENTS = ("net_us_mean", "queue_us_mean", "worker_us_mean", "server_us_mean")


def trim(windows: pd.DataFrame, warmup_s: float, cooldown_s: float) -> pd.DataFrame:
    """Drops the windows that start within `warmup_s` of a source's first window or end within
    `cooldown_s` of its last one (per run, side and source). Windows without timestamps
    (memaslap) are cut by index, assuming one-second windows."""
    if warmup_s < 0 or cooldown_s < 0:
        raise ValueError("warm-up and cool-down must be >= 0")
    if windows.empty:
        return windows
    group = [c for c in ("run", "side", "source") if c in windows.columns]
    w = windows if group else windows.assign(_all=0)
    group = group or ["_all"]
    timed = w["start_ms"].notna()
    first = w.groupby(group)["start_ms"].transform("min")
    last = w.groupby(group)["end_ms"].transform("max")
    keep_timed = (w["start_ms"] >= first + warmup_s * 1000) & (
        w["end_ms"] <= last - cooldown_s * 1000
    )
    lo = w.groupby(group)["window"].transform("min")
    hi = w.groupby(group)["window"].transform("max")
    keep_index = (w["window"] >= lo + warmup_s) & (w["window"] <= hi - cooldown_s)
    kept = w[np.where(timed, keep_timed, keep_index)].reset_index(drop=True)
    return kept.drop(columns="_all", errors="ignore")


def trim_to_clients(windows: pd.DataFrame, warmup_s: float, cooldown_s: float) -> pd.DataFrame:
    """Keeps, for every side of a run, the windows that lie inside one stable interval: from
    `warmup_s` after the first client window starts to `cooldown_s` before the last one ends.
    The sides' window grids are not aligned, so each side keeps only the windows whose
    middle lies where every side has kept windows: client and middleware then cover the
    same seconds, give or take a fraction of a window at either end. Runs without
    timestamped client windows (memaslap without `launch.json`) fall back to `trim`."""
    if warmup_s < 0 or cooldown_s < 0:
        raise ValueError("warm-up and cool-down must be >= 0")
    if windows.empty:
        return windows
    clients = windows[(windows["side"] == "client") & windows["start_ms"].notna()]
    bounds = clients.groupby("run").agg(first=("start_ms", "min"), last=("end_ms", "max"))
    timed = windows[windows["run"].isin(bounds.index)].join(bounds, on="run")
    keep = (timed["start_ms"] >= timed["first"] + warmup_s * 1000) & (
        timed["end_ms"] <= timed["last"] - cooldown_s * 1000
    )
    kept = _common_span(timed[keep].drop(columns=["first", "last"]))
    rest = trim(windows[~windows["run"].isin(bounds.index)], warmup_s, cooldown_s)
    return pd.concat([kept, rest], ignore_index=True)


def _common_span(kept: pd.DataFrame) -> pd.DataFrame:
    """The windows whose middle lies within the span every side of their run covers."""
    if kept.empty:
        return kept
    span = kept.groupby(["run", "side"]).agg(lo=("start_ms", "min"), hi=("end_ms", "max"))
    common = span.groupby(level="run").agg(lo=("lo", "max"), hi=("hi", "min"))
    k = kept.join(common, on="run")
    middle = (k["start_ms"] + k["end_ms"]) / 2
    return kept[(middle >= k["lo"]) & (middle <= k["hi"])]


def summarise_runs(tidy: pd.DataFrame) -> pd.DataFrame:
    """One row per run × side × type × keys over the (already trimmed) windows: mean
    throughput, count-weighted mean response time and component times (so that the
    components of a run add up to its response time, however unequal its windows), and the
    stability of the throughput (coefficient of variation across windows)."""
    if tidy.empty:
        return pd.DataFrame()
    t = tidy.copy()
    timed = ["response_us_mean", *_COMPONENTS]
    for c in timed:
        t[f"_w_{c}"] = t[c] * t["count"]
        t[f"_n_{c}"] = t["count"].where(t[c].notna(), 0)
    g = t.groupby(RUN_KEYS, sort=True)
    out = g.agg(
        windows=("window", "nunique"),
        count=("count", "sum"),
        throughput_ops=("throughput_ops", "mean"),
        throughput_std=("throughput_ops", "std"),
        throughput_max=("throughput_ops", "max"),
        **{f"_w_{c}": (f"_w_{c}", "sum") for c in timed},
        **{f"_n_{c}": (f"_n_{c}", "sum") for c in timed},
    ).reset_index()
    for c in timed:
        out[c] = out[f"_w_{c}"] / out[f"_n_{c}"].where(out[f"_n_{c}"] > 0)
    out["throughput_cv"] = out["throughput_std"] / out["throughput_ops"]
    return out.drop(columns=[f"_{k}_{c}" for k in ("w", "n") for c in timed])


def per_source_totals(trimmed: pd.DataFrame) -> pd.DataFrame:
    """Throughput, response time and CV per run × side × type × keys, summing sources.

    Sources (load generators, middlewares) start a little apart, so their window indices do
    not line up; each source is averaged over its own stable windows before they are added.
    """
    w = trimmed.copy()
    per_window_all = (
        w.groupby(["run", "side", "source", "window"], sort=True)
        .agg(count=("count", "sum"), throughput_ops=("throughput_ops", "sum"))
        .reset_index()
        .assign(type="all", keys=0)
    )
    w["_rw"] = w["response_us_mean"] * w["count"]
    w["_n"] = w["count"].where(w["response_us_mean"].notna(), 0)
    per_window_all = per_window_all.merge(
        w.groupby(["run", "side", "source", "window"])[["_rw", "_n"]].sum().reset_index(),
        on=["run", "side", "source", "window"],
    )
    w = pd.concat([w, per_window_all], ignore_index=True)
    keys = ["run", "side", "type", "keys"]
    src = (
        w.groupby([*keys, "source"], sort=True)
        .agg(
            thr=("throughput_ops", "mean"),
            thr_std=("throughput_ops", "std"),
            rw=("_rw", "sum"),
            n=("_n", "sum"),
        )
        .reset_index()
    )
    src["cv"] = src["thr_std"] / src["thr"].where(src["thr"] > 0)
    out = (
        src.groupby(keys, sort=True)
        .agg(throughput_ops=("thr", "sum"), rw=("rw", "sum"), n=("n", "sum"),
             throughput_cv=("cv", "max"))
        .reset_index()
    )  # fmt: skip
    out["response_us_mean"] = out["rw"] / out["n"].where(out["n"] > 0)
    return out.drop(columns=["rw", "n"])


def confidence_interval(values: Sequence[float], level: float = CI_LEVEL) -> tuple[float, float]:
    """Student-t interval of the mean; NaN bounds with fewer than `MIN_CI_N` values (two
    values give an interval too wide, and too unreliable, to report)."""
    if not 0 < level < 1:
        raise ValueError(f"confidence level must lie in (0, 1), not {level}")
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < MIN_CI_N:
        return (float("nan"), float("nan"))
    half = stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return (float(x.mean() - half), float(x.mean() + half))


def aggregate_points(
    runs: pd.DataFrame,
    by: Sequence[str] = ("point", "side", "type", "keys"),
    metrics: Sequence[str] = ("throughput_ops", "response_us_mean"),
    level: float = CI_LEVEL,
) -> pd.DataFrame:
    """Mean, standard deviation and confidence interval of each metric across repetitions."""
    rows = []
    for key, grp in runs.groupby(list(by), sort=True):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        row["repetitions"] = grp["repetition"].nunique() if "repetition" in grp else len(grp)
        for m in metrics:
            x = grp[m].astype(float)
            lo, hi = confidence_interval(x, level)
            row.update(
                {
                    f"{m}_mean": x.mean(),
                    f"{m}_std": x.std(ddof=1),
                    f"{m}_ci_low": lo,
                    f"{m}_ci_high": hi,
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def side_by_side(
    table: pd.DataFrame,
    index: Sequence[str] = ("point", "type", "keys"),
    values: Sequence[str] = ("throughput_ops_mean", "response_us_mean_mean"),
) -> pd.DataFrame:
    """Client and middleware views of the same points in one row: columns `<side>_<value>`."""
    wide = table.pivot_table(index=list(index), columns="side", values=list(values))
    wide.columns = [f"{side}_{value}" for value, side in wide.columns]
    return wide.reset_index()


def all_types(stable: pd.DataFrame) -> pd.DataFrame:
    """Every request type of a window together: summed throughput, count-weighted times."""
    if stable.empty:
        return stable
    t = stable.copy()
    timed = [c for c in TIMED_METRICS if c in t.columns]
    for column in timed:
        t[f"_w_{column}"] = t[column] * t["count"]
        t[f"_n_{column}"] = t["count"].where(t[column].notna(), 0)
    keys = ["run", "point", "repetition", "side", "window"]
    agg: dict[str, Any] = {"count": ("count", "sum"), "throughput_ops": ("throughput_ops", "sum")}
    for column in timed:
        agg[f"_w_{column}"] = (f"_w_{column}", "sum")
        agg[f"_n_{column}"] = (f"_n_{column}", "sum")
    out = t.groupby(keys, sort=True).agg(**agg).reset_index()
    for column in timed:
        out[column] = out[f"_w_{column}"] / out[f"_n_{column}"].where(out[f"_n_{column}"] > 0)
        out = out.drop(columns=[f"_w_{column}", f"_n_{column}"])
    out["type"] = "all"
    out["keys"] = 0
    return out
