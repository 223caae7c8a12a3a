"""Calibration of the scale model: per-role speed factors fitted to named study numbers.

Each calibration target is one study throughput that one role bounds (memcached's write
maximum for the server, the one-middleware write plateau for the middleware). Its point runs
with that role at one or more speed factors f (CPU budget vCPUs x s x f) and the other roles
fast enough not to matter. CPU-bound throughput grows with the budget, so the measured
throughput in the study's time, Y = X / s, is fitted as Y = b f (one level: through the
origin) or Y = a + b f (two or more levels), and the role's factor is the f at which Y equals
the study's number, kept within the machines file's bounds (a clamped fit is flagged).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.scale_model import scale_of
from common.machinespeed import MAX_SPREAD as MAX_SPEED_SPREAD
from common.scalemodel import SATURATED_IDLE, Machines, speed_factors


class CalibrationError(ValueError):
    """The calibration runs cannot give a speed factor."""


@dataclass(frozen=True)
class Fit:
    model: str  # "proportional" or "affine"
    slope: float  # study-time ops/s per unit of speed factor
    intercept: float
    speed_unclamped: float
    speed: float
    clamped: bool


def fit_speed(points: pd.DataFrame, target: float, lower: float, upper: float) -> Fit:
    """The speed factor at which the study-time throughput meets `target`.

    `points` holds one row per run: `speed` and `throughput_study` (ops/s in the study's
    time); repetitions of a level are averaged first."""
    if not (math.isfinite(target) and target > 0):
        raise CalibrationError(f"target must be a positive throughput, got {target!r}")
    data = points.dropna(subset=["speed", "throughput_study"])
    if data.empty:
        raise CalibrationError("no successful calibration run to fit")
    if (data["speed"] <= 0).any():
        raise CalibrationError("speed factors of calibration runs must be positive")
    means = data.groupby("speed", sort=True)["throughput_study"].mean()
    f = means.index.to_numpy(dtype=float)
    y = means.to_numpy(dtype=float)
    model, intercept = "proportional", 0.0
    slope = float(np.dot(f, y) / np.dot(f, f))
    if len(f) >= 2:
        b, a = np.polyfit(f, y, 1)
        if b > 0:
            model, slope, intercept = "affine", float(b), float(a)
    if slope <= 0:
        raise CalibrationError(
            f"throughput does not grow with the speed factor (slope {slope:g}): no fit"
        )
    raw = (target - intercept) / slope
    speed = min(max(raw, lower), upper)
    return Fit(model, slope, intercept, float(raw), float(speed), bool(speed != raw))


def extrapolation(target: Mapping[str, Any]) -> float:
    """How far a target's fitted speed factor (calibration.json's `fit.speed`) lies beyond
    the speeds its completed runs measured, as a share of the nearest one: 0 within them,
    0.5 at 1.5 times the highest. Beyond them the factor is the
    fit's extrapolation, which holds only as far as throughput stays linear in the budget.
    NaN without a completed run or a fitted speed."""
    levels = [float(r["speed"]) for r in target["runs"] if r["status"] == "ok"]
    speed = target["fit"].get("speed")
    if not levels or speed is None:
        return math.nan
    speed = float(speed)
    low, high = min(levels), max(levels)
    if speed > high:
        return speed / high - 1
    if speed < low:
        return 1 - speed / low
    return 0.0


# A fitted factor this far beyond its measured speeds is marked in the report: any, since
# outside them no run measured the factor, only the fit's line reached it.
MAX_EXTRAPOLATION = 0.0


# A calibration run whose machine lost more than this share of its CPU time to the
# hypervisor (steal) measured a slower machine than the one the points will run on.
MAX_STEAL_SHARE = 0.2


def machine_shares(manifest: Mapping[str, Any]) -> dict[str, float]:
    """The machine's idle and steal shares over a run's window (run.json `cpu.machine`) and
    the spread of its CPU's speed (`cpu.machine_speed`, testbed.speedprobe), NaN where the
    run recorded none."""
    cpu = manifest.get("cpu") or {}
    machine = cpu.get("machine") or {}
    spread = (cpu.get("machine_speed") or {}).get("spread")
    return {
        share: math.nan if machine.get(share) is None else float(machine[share])
        for share in ("idle_share", "steal_share")
    } | {"speed_spread": math.nan if spread is None else float(spread)}


def disturbance(run: Mapping[str, Any]) -> str | None:
    """Why a run's machine was not the quiet machine a calibration fit assumes, if so: too
    much steal, saturated (cpuaccount's rule), or a CPU whose speed spread beyond
    common.machinespeed.MAX_SPREAD. Missing shares are not judged."""
    steal, idle = run.get("steal_share"), run.get("idle_share")
    spread = run.get("speed_spread")
    problems = []
    if steal is not None and math.isfinite(steal) and steal > MAX_STEAL_SHARE:
        problems.append(f"steal {steal:.0%} > {MAX_STEAL_SHARE:.0%}")
    if spread is not None and math.isfinite(spread) and spread > MAX_SPEED_SPREAD:
        problems.append(f"CPU speed spread {spread:.0%} > {MAX_SPEED_SPREAD:.0%}")
    if idle is not None and math.isfinite(idle) and idle < SATURATED_IDLE:
        problems.append(f"idle {idle:.0%} < {SATURATED_IDLE:.0%}")
    return "; ".join(problems) or None


def calibrate(runs: pd.DataFrame, machines: Machines, scale: float) -> dict[str, Any]:
    """The content of calibration.json from the calibration runs.

    `runs` has one row per run: `target`, `speed`, `status`, `throughput_ops` (measured, on
    the target's side) and `run` (its path); optionally the machine's `idle_share` and
    `steal_share` over the run's window, which `warnings` judges."""
    missing = sorted(set(machines.targets) - set(runs["target"]))
    if missing:
        raise CalibrationError(f"no calibration runs for targets {missing}")
    runs = runs.assign(scale=scale_of(runs, "table of calibration runs"))
    ok = runs[runs["status"] == "ok"].copy()
    ok["throughput_study"] = ok["throughput_ops"] / ok["scale"]
    fitted: dict[str, float] = {}
    targets = []
    for name, target in machines.targets.items():
        mine = ok[ok["target"] == name]
        try:
            fit = fit_speed(mine, target.value, machines.speed_lower, machines.speed_upper)
        except CalibrationError as err:
            raise CalibrationError(f"target {name}: {err}") from err
        fitted[name] = fit.speed
        points = runs[runs["target"] == name].sort_values(["speed", "run"])
        targets.append(
            {
                "name": name,
                "role": target.role,
                "study": target.study,
                "studies": list(target.studies),
                "value": target.value,
                "source": target.source,
                "side": target.side,
                "point": target.point,
                "fit": asdict(fit),
                "runs": [
                    {
                        "run": str(r["run"]),
                        "speed": float(r["speed"]),
                        "status": str(r["status"]),
                        "throughput_ops": _num(r["throughput_ops"]),
                        "throughput_study": _num(r["throughput_ops"] / r["scale"]),
                        "disturbed": disturbance(r),
                    }
                    for _, r in points.iterrows()
                ],
            }
        )
    warnings = [
        f"calibration run {run['run']}: {run['disturbed']}; its fit may not hold"
        for t in targets
        for run in t["runs"]
        if run["disturbed"]
    ]
    return {
        "scale": scale,
        "speed_factors": speed_factors(machines, fitted),
        "speed_bounds": [machines.speed_lower, machines.speed_upper],
        "client_rule": {"same_as": machines.client_same_as, "why": machines.client_why},
        "targets": targets,
        "warnings": warnings,
        "validation": validation_entries(machines),
    }


def validation_entries(machines: Machines) -> list[dict[str, Any]]:
    """The study numbers the machines file keeps for validation, as calibration.json lists
    them: name, value, source and where in the reference files, and the target whose fitted
    throughput sets it (`follows`), where one does."""
    return [
        {"name": v.name, "value": v.value, "source": v.source, "reference": v.where}
        | ({"follows": v.follows} if v.follows else {})
        for v in machines.validation.values()
    ]


def with_validation(cal: Mapping[str, Any], machines: Machines) -> dict[str, Any]:
    """`cal` listing every study number the machines file keeps for validation: those the
    calibration lists as it lists them, those it does not (listed in the file after it was
    measured) as the file gives them, in the file's order, and those only the calibration lists
    after them. A validation number is the study's and never fitted, so the calibration's runs
    and factors are the same with it. Only where every target of the calibration is one of the
    file's (same name and value), so that the file's check that no validation number is a
    target holds for this calibration too; otherwise `cal` as it is."""
    out = dict(cal)
    known = {n: t.value for n, t in machines.targets.items()}
    if any(known.get(t["name"]) != float(t["value"]) for t in cal["targets"]):
        return out
    listed = {v["name"]: v for v in cal.get("validation") or []}
    # What sets a number is the file's to say, also for a calibration measured before it.
    entries = [
        listed.get(v["name"], v) | ({"follows": v["follows"]} if "follows" in v else {})
        for v in validation_entries(machines)
    ]
    named = {v["name"] for v in entries}
    out["validation"] = entries + [v for n, v in listed.items() if n not in named]
    return out


def _num(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def merge(
    first: Mapping[str, Any], second: Mapping[str, Any], first_studies: Iterable[str]
) -> dict[str, Any]:
    """One calibration from two measurements of different studies (`mwlab dataset merge`):
    the speed factors of `first_studies` and the targets that serve them come from `first`,
    every other study's from `second`. Both must have run under the same scale, speed bounds,
    client rule and calibration settings, and no target may serve studies of both."""
    mine = {str(s) for s in first_studies}
    differ = [k for k in ("scale", "speed_bounds", "client_rule") if first.get(k) != second.get(k)]

    def settings(doc: Mapping[str, Any]) -> dict[str, Any]:
        # A study's own factor is that study's: only the shared settings must agree.
        return {k: v for k, v in (doc.get("settings") or {}).items() if k != "studies"}

    if settings(first) != settings(second):
        differ.append("settings")
    if differ:
        raise CalibrationError(
            f"the two calibrations differ in {', '.join(differ)}: their budgets are not one model"
        )

    def served(target: Mapping[str, Any]) -> set[str]:
        return {str(s) for s in target.get("studies") or [target["study"]]}

    both = sorted(
        {t["name"] for t in [*first["targets"], *second["targets"]] if served(t) & mine}
        & {t["name"] for t in [*first["targets"], *second["targets"]] if served(t) - mine}
    )
    if both:
        raise CalibrationError(
            f"target {', '.join(both)} serves studies of both measurements; measure those "
            "studies together"
        )
    ours = [t for t in first["targets"] if served(t) & mine]
    theirs = [t for t in second["targets"] if not served(t) & mine]
    factors = {s: f for s, f in second["speed_factors"].items() if s not in mine}
    factors |= {s: f for s, f in first["speed_factors"].items() if s in mine}
    # A warning names its run, and so its target: it goes where the target goes.
    warnings = [
        w
        for doc, kept in ((first, ours), (second, theirs))
        for w in doc.get("warnings") or []
        if any(f"target={t['name']}," in w for t in kept)
    ]
    return {
        **second,
        "targets": ours + theirs,
        "speed_factors": dict(sorted(factors.items())),
        "warnings": warnings,
        # What both fitted is the calibration's repeatability: the report states it.
        "refits": [
            *first.get("refits", []),
            *second.get("refits", []),
            *refits(first["targets"], second["targets"], {t["name"] for t in ours}),
        ],
    }


def add_session(first: Mapping[str, Any], later: Mapping[str, Any]) -> dict[str, Any]:
    """`first`'s calibration with a later session's fits of the same targets as refits (`mwlab
    dataset merge --families`: families measured again under their own calibration). The
    dataset keeps `first`'s factors; the later session adds to the calibration's repeatability.
    Both must be one scale model (scale, speed bounds, client rule and settings)."""
    keys = ("scale", "speed_bounds", "client_rule", "settings")
    differ = [k for k in keys if first.get(k) != later.get(k)]
    if differ:
        raise CalibrationError(
            f"the two calibrations differ in {', '.join(differ)}: their budgets are not one model"
        )
    kept = {t["name"] for t in first["targets"]}
    return {
        **first,
        "refits": [*first.get("refits", []), *refits(first["targets"], later["targets"], kept)],
    }


def _mean_by_speed(runs: Iterable[Mapping[str, Any]]) -> dict[float, float]:
    ok: dict[float, list[float]] = {}
    for r in runs:
        if r["status"] == "ok" and r["throughput_study"] is not None:
            ok.setdefault(float(r["speed"]), []).append(float(r["throughput_study"]))
    return {s: sum(xs) / len(xs) for s, xs in ok.items()}


def refits(
    first: Iterable[Mapping[str, Any]], second: Iterable[Mapping[str, Any]], first_kept: set[str]
) -> list[dict[str, Any]]:
    """The targets two calibrations both fitted, each with the factor the merged dataset keeps
    and the other one, and at the largest speed both ran, the mean throughput of the kept runs
    over the other's (None without a shared speed)."""
    others = {t["name"]: t for t in second}
    out = []
    for mine in first:
        theirs = others.get(mine["name"])
        if theirs is None:
            continue
        kept, other = (mine, theirs) if mine["name"] in first_kept else (theirs, mine)
        at_kept, at_other = _mean_by_speed(kept["runs"]), _mean_by_speed(other["runs"])
        shared = sorted(set(at_kept) & set(at_other))
        speed = shared[-1] if shared and at_other[shared[-1]] > 0 else None
        out.append(
            {
                "name": mine["name"],
                "role": mine["role"],
                "studies": list(mine.get("studies") or [mine["study"]]),
                "kept": kept["fit"]["speed"],
                "other": other["fit"]["speed"],
                "speed": speed,
                "throughput_ratio": None if speed is None else at_kept[speed] / at_other[speed],
            }
        )
    return out


# ---- Validation of the fits, and their repeatability between measurement sessions ----


def _flat(point: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A point's settings under the dotted names of the tidy tables (`middleware.workers`)."""
    out: dict[str, Any] = {}
    for key, value in point.items():
        if isinstance(value, Mapping):
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def _matching(rows: pd.DataFrame, settings: Mapping[str, Any]) -> pd.DataFrame:
    for key, value in settings.items():
        if key not in rows.columns:
            return rows.iloc[0:0]
        # Settings come from YAML and parquet alike: compare their text (2016 and "2016").
        rows = rows[rows[key].astype(str) == str(value)]
    return rows


def family_measurements(
    target: Mapping[str, Any], points: Mapping[str, pd.DataFrame], scale: float | None = None
) -> dict[str, Any] | None:
    """Where a family measured a calibration target's own configuration, at the fitted
    factor (every family point runs with calibration.json's budgets): the family, its point,
    the mean study-time throughput on the target's side (all request types), its
    repetitions and the share of its CPU budget the target's role used (`role_cpu`); and
    that setup's best point, the largest mean over the levels of `virtual_clients` (the load
    the study's maximum was read from). `points` maps each family to its points table. None
    where no family measured the target's configuration; of several, the one with the most
    repetitions. Only points that ran under the scale model count: at `scale` (the
    calibration's s for the target's study) where given, and with a CPU budget for the
    target's role, where the tables record them (a profile's families may run on real
    machines while its calibration emulates them)."""
    settings = _flat(target["point"])
    budget = f"budgets_cores.{target['role']}"
    setup = {k: v for k, v in settings.items() if k != "virtual_clients"}
    found: list[dict[str, Any]] = []
    for family, table in sorted(points.items()):
        if table.empty or "throughput_study_mean" not in table.columns:
            continue
        rows = table[(table["side"] == target["side"]) & (table["type"] == "all")]
        if scale is not None and "scale" in rows.columns:
            rows = rows[np.isclose(pd.to_numeric(rows["scale"], errors="coerce"), scale)]
        if budget in rows.columns:
            rows = rows[pd.to_numeric(rows[budget], errors="coerce") > 0]
        same = _matching(rows, setup).dropna(subset=["throughput_study_mean"])
        at = _matching(same, settings)
        if at.empty:
            continue
        here, best = at.iloc[0], same.loc[same["throughput_study_mean"].idxmax()]
        cpu = f"cpu_util_{target['role']}_mean"
        found.append(
            {
                "family": family,
                "point": str(here["point"]),
                # The share of its budget the role used there: below saturation the budget
                # did not bound the point, so the fit did not pin the factor.
                "role_cpu": float(here[cpu]) if cpu in here.index else math.nan,
                "value": float(here["throughput_study_mean"]),
                "repetitions": int(here["repetitions"]),
                "best_point": str(best["point"]),
                "best_value": float(best["throughput_study_mean"]),
            }
        )
    return max(found, key=lambda f: f["repetitions"], default=None)


def _ok(runs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in runs if r["status"] == "ok"]


def fit_validation(
    calibration: Mapping[str, Any], points: Mapping[str, pd.DataFrame]
) -> list[dict[str, Any]]:
    """One row per fitted target: the study's value, the fitted factor, the fit's prediction
    there (a + b f; the study's value itself unless the factor was clamped), the family
    measurement at the target's own configuration and at that setup's best point
    (`family_measurements`, None without one), each one's error (ours / study - 1), the
    speeds the fit used, and `extrapolated`: the factor lies outside them (by `extrapolation`
    of the nearest speed measured), so the fit's line, not a run, put it there."""
    own = {
        str(k): float(v) for k, v in (calibration.get("settings") or {}).get("studies", {}).items()
    }
    rows = []
    for target in calibration["targets"]:
        fit = target["fit"]
        value = float(target["value"])
        prediction = float(fit["intercept"]) + float(fit["slope"]) * float(fit["speed"])
        scale = own.get(str(target["study"]), calibration.get("scale"))
        family = family_measurements(target, points, None if scale is None else float(scale))
        beyond = extrapolation(target)
        rows.append(
            {
                "name": target["name"],
                "role": target["role"],
                "studies": list(target.get("studies") or [target["study"]]),
                "value": value,
                "speed": float(fit["speed"]),
                "clamped": bool(fit["clamped"]),
                "prediction": prediction,
                "prediction_error": prediction / value - 1,
                "family": family,
                "error": None if family is None else family["value"] / value - 1,
                "best_error": None if family is None else family["best_value"] / value - 1,
                "speeds": sorted({float(r["speed"]) for r in _ok(target["runs"])}),
                "extrapolation": beyond,
                "extrapolated": bool(beyond > 0),
            }
        )
    return rows


def relative_deviation(ratio: float) -> float:
    """The relative standard deviation of two values whose ratio is `ratio`: with a = r b,
    sd / mean = (|a - b| / sqrt 2) / ((a + b) / 2) = sqrt 2 |r - 1| / (r + 1)."""
    if not (math.isfinite(ratio) and ratio > 0):
        raise CalibrationError(f"a ratio of two throughputs must be positive, got {ratio!r}")
    return math.sqrt(2) * abs(ratio - 1) / (ratio + 1)


def session_ratios(calibration: Mapping[str, Any]) -> list[dict[str, float | None]]:
    """Per refit (calibration.json `refits`: a target two sessions both calibrated; a target
    three sessions calibrated has two), in their order, two ratios of a throughput its role's
    budget bounds, kept session over the other:

    - `measured`: the target's own runs at the largest speed both sessions ran
      (`throughput_ratio`: the same point under the same budget), None without such a speed;
    - `operating`: at the study's value, the kept fit's throughput at the other session's
      factor over the study's value, (a + b f_other) / (a + b f_kept): the same budget where
      the results are read, which the measured speed may lie far from. Without the kept fit
      (a target this dataset does not keep) the factors' ratio f_kept / f_other, a CPU-bound
      throughput growing in proportion to its budget to first order."""
    fits = {t.get("name"): t.get("fit") for t in calibration.get("targets") or []}
    out: list[dict[str, float | None]] = []
    for refit in calibration.get("refits") or []:
        kept, other = float(refit["kept"]), float(refit["other"])
        fit = fits.get(refit["name"])
        if fit is not None and math.isclose(float(fit["speed"]), kept):
            at_kept = float(fit["intercept"]) + float(fit["slope"]) * kept
            operating = (float(fit["intercept"]) + float(fit["slope"]) * other) / at_kept
        else:
            operating = kept / other
        measured = refit.get("throughput_ratio")
        out.append(
            {"measured": None if measured is None else float(measured), "operating": operating}
        )
    return out


def refit_deviation(ratios: Mapping[str, float | None]) -> float:
    """One refit's relative standard deviation between its two sessions: the larger of its
    `session_ratios`' (`relative_deviation`)."""
    return max(relative_deviation(r) for r in ratios.values() if r is not None)


def target_variation(calibration: Mapping[str, Any]) -> dict[str, float]:
    """Per target that two or more sessions calibrated: the relative standard deviation
    between the sessions of a throughput its role's budget bounds, the largest of its refits'
    `session_ratios` (`relative_deviation`). Targets fitted by one session only are absent."""
    out: dict[str, float] = {}
    refits = calibration.get("refits") or []
    for refit, ratios in zip(refits, session_ratios(calibration), strict=True):
        rsd = refit_deviation(ratios)
        out[str(refit["name"])] = max(out.get(str(refit["name"]), 0.0), rsd)
    return out


def session_variation(calibration: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """Per (study, role) whose speed factor a target fits: the relative standard deviation
    between measurement sessions of a throughput that role's CPU budget bounds.

    For two sessions' throughputs of the same point at the same budget, with r = X_1 / X_2,

        RSD = sd / mean = sqrt 2 |r - 1| / (r + 1)        (sample sd of two values, ddof 1)

    for the target that serves the study's role, r the one of two ratios that deviates more
    (`session_ratios`): its runs at the largest speed both sessions ran, and its kept fit at
    the two sessions' factors where the study's value is read (`target_variation`). A result
    bounded by that role's budget may move by this share between sessions beside its own
    repetitions' spread: a verdict's interval on such a result widens by it (for a relative
    half-width h and a t quantile q, sqrt(h^2 + (q RSD)^2) combines both). Roles no target
    fits (a study's unfitted roles, the unbudgeted clients) and targets only one session
    calibrated are absent: for them this dataset holds no repetition of the calibration, not
    a variation of zero."""
    per_target = target_variation(calibration)
    out: dict[tuple[str, str], float] = {}
    for refit in calibration.get("refits") or []:
        for study in refit.get("studies") or []:
            key = (str(study), str(refit["role"]))
            out[key] = max(out.get(key, 0.0), per_target[str(refit["name"])])
    return dict(sorted(out.items()))
