"""The report's tables of the scale model, as tabulars (their captions are in
paper/sections/scalemodel.tex), and its number macros.

From calibration.json: the calibration targets, their runs and the fitted speed factors, each
fit checked at its factor (against its fit and the family that measured its configuration),
its repeatability between sessions, and the study numbers kept for validation with ours
beside each (as the table that holds ours computes it). From workflows/machines.yaml with
calibration.json: every fitted or assumed parameter of the model.
From the scale_check family: the rescaled throughput and response time at s and at every
other scale, their ratio, what bounds each point and whether the model holds there. Profiles
without the scale model (real machines) get tables that say so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.bottleneck import SATURATED
from analysis.calibration import (
    MAX_EXTRAPOLATION,
    extrapolation,
    refit_deviation,
    session_ratios,
    session_variation,
)
from analysis.latex import escape
from analysis.report import factor_words as fw
from analysis.report.figures import listed
from analysis.report.scale_check_factors import check_factor_numbers
from analysis.scale_model import (
    AGREEMENT_TOLERANCE,
    LINK,
    bound_by,
    classify,
    failed_points,
    in_study_time,
    scale_of,
)
from analysis.studies.s2015.common import name as name2015
from analysis.studies.s2018 import baseline_maxima, multiget
from analysis.studies.s2018 import seed as seed2018
from common.studies import STUDY_WORDS


def _f(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "--"
    return f"{float(x):,.{digits}f}".replace(",", "{,}")


def calibration_table(cal: dict[str, Any] | None) -> str:
    """One row per target, its source and runs on lines of their own, so that the table fits
    the page at the text's size."""
    if cal is None:
        return "\\emph{No scale model in this profile: its hosts are the study's machines.}\n"
    lines = [
        r"\begin{tabular}{@{}p{0.37\linewidth}rp{0.22\linewidth}r@{}}",
        r"\toprule",
        r"Target (role; designs) and its source & Study [ops/s] & Runs: speed $\to$ $X/s$"
        r" [ops/s] & Factor (fit) \\",
        r"\midrule",
    ]
    for t in cal["targets"]:
        runs = r"\newline ".join(
            f"{r['speed']:g} $\\to$ {_f(r['throughput_study'])}"
            + ("" if r["status"] == "ok" else " (failed)")
            for r in t["runs"]
        )
        fit = t["fit"]
        factor = f"{fit['speed']:.3f}" + (r"$^\ast$" if fit["clamped"] else "")
        if extrapolation(t) > MAX_EXTRAPOLATION:
            factor += r"$^\dagger$"
        served = ", ".join(str(s) for s in t.get("studies", [t["study"]]))
        target = escape(fw.words(t["name"], fw.TARGET_WORDS))
        lines.append(
            f"{target} ({t['role']}; {served})\\newline{{\\footnotesize {escape(t['source'])}}}"
            f" & {_f(t['value'])} & {runs} & {factor} ({fit['model']}) \\\\"
        )
    rule = cal["client_rule"]
    follows = {"upper": "upper bound", "unbudgeted": "no budget"}.get(
        rule["same_as"], f"same as the {rule['same_as']}"
    )
    clients = {f["client"] for f in cal["speed_factors"].values()}
    client = clients.pop() if len(clients) == 1 else None
    lines += [
        r"\midrule",
        f"client & \\multicolumn{{2}}{{p{{0.35\\linewidth}}}}{{{follows}: {escape(rule['why'])}}}"
        f" & {'--' if client is None else format(client, '.3f')} \\\\",
        r"\bottomrule",
        r"\end{tabular}",
    ]
    return "\n".join(lines) + "\n"


# The table (or section, `sec:`) that prints ours beside each kind of study number, as
# validation_ours reads ours; None where none prints it. With middlewares ours is read at the
# study's clients and workers (Table 5's): the MVA's table prints every client point at the
# largest worker count (mva_middleware.fit), the maxima's table only our best one. The writes
# are read at each worker count's study clients (Table 7's), which no table prints.
# The writes' table of each worker count's best point (Table 9).
WRITES_TABLE = "tab:writes-max"
REFERENCE_TABLES: dict[str, str | None] = {
    "baselines_direct": "tab:base-direct-max",
    "baselines_middleware": "tab:mva",
    "writes": None,
    "multiget": "tab:mget",
    "max_throughput": "sec:sixteen-max",
    "db_baseline": "sec:fifteen-baseline",
}


# The family whose points hold ours for each table of reference2018.yaml.
VALIDATION_FAMILIES = {
    "baselines_direct": "baseline_direct",
    "baselines_middleware": "baseline_middleware",
    "writes": "write_throughput",
    "multiget": "multiget",
}
# The families that hold the 2016 and 2015 study numbers' points (what bounds them).
SIXTEEN_MAX_FAMILY = "max_throughput_2016"
FIFTEEN_BASELINE_FAMILY = "mq_db_baseline"
# reference2016.yaml's max_throughput entries: the number of the 2016 maximum-throughput
# section (data/2016/max_throughput.json) that prints ours, its digits there, the number that
# gives its clients and where it was read (Ours.at). The median is ours at the study's
# configuration (its pool size and the nearest client count), not at our own maximum's load.
SIXTEEN_MAX_NUMBERS = {
    "throughput_ops": ("SixteenMaxThroughput", 0, "SixteenMaxClients", "maximum"),
    "response_ms_p50": ("SixteenMaxWaitResponse", 3, "SixteenMaxWaitClients", "study"),
    "response_ms_p90": ("SixteenMaxResponseNinety", 3, "SixteenMaxClients", "maximum"),
}
# The band within which the text counts ours as meeting a study number (ours / study - 1).
VALIDATION_TOLERANCE = 0.10
# How many of the largest errors the text names.
VALIDATION_WORST = 3
# The marks of the validation table's Clients column, by Ours.at: ours at the measured client
# (or worker) count nearest the study's, and our maximum beside the study's maximum.
CLIENT_MARKS = {"study": "", "nearest": r"$^\dagger$", "maximum": r"$^\ast$"}


@dataclass(frozen=True)
class Ours:
    """Our value beside a study number, in the study's time, with the digits the table that
    holds it prints; the clients (total) it was measured at and the study's number's (None
    where not known); where it was read (`at`): at the study's configuration (`study`), at
    the measured point nearest it where our grid has no point there (`nearest`), or our
    maximum over the clients beside the study's maximum (`maximum`); and the label of the
    table (or section, `sec:`) that prints it, None where none does; and what bounds the
    point it was read at (`bound`: a role whose CPU budget its runs used up, or LINK; None
    where the point is not known)."""

    value: float
    digits: int
    clients: int | None = None
    study_clients: int | None = None
    at: str = "study"
    table: str | None = None
    bound: str | None = None


def bound_of(rows: pd.DataFrame | pd.Series | None) -> str | None:
    """What bounds a point (its rows of a points table, any side): the role whose CPU budget
    its runs used up, by scale_model.bound_by on the busiest side's mean, else LINK; None
    without rows or without CPU accounting (nothing then says what bounds it)."""
    if rows is None or len(rows) == 0:
        return None
    frame = rows.to_frame().T if isinstance(rows, pd.Series) else rows
    uses = {
        f"{c.removesuffix('_mean')}_point": pd.to_numeric(frame[c], errors="coerce").max()
        for c in frame.columns
        if c.startswith("cpu_util_") and c.endswith("_mean")
    }
    if not any(math.isfinite(u) for u in uses.values()):
        return None
    return bound_by(pd.Series(uses, dtype=float), "point")


def _reference(v: Mapping[str, Any]) -> tuple[str, list[str]]:
    """`reference2018.yaml:writes.8.client_x` -> (`reference2018.yaml`, [writes, 8, client_x])."""
    file, _, key = str(v.get("reference", "")).partition(":")
    return file, key.split(".") if key else []


def _count(x: Any) -> int | None:
    """A client or worker count as an int, None where there is none."""
    try:
        x = float(str(x).replace("{,}", ""))
    except (TypeError, ValueError):
        return None
    return int(x) if math.isfinite(x) else None


def _printed(numbers: Mapping[str, str], name: str) -> float:
    """A number as a section's numbers file prints it (`2{,}199`); NaN for its dash."""
    try:
        return float(str(numbers.get(name, "")).replace("{,}", ""))
    except ValueError:
        return math.nan


def study_configuration(path: list[str], reference: Mapping[str, Any]) -> tuple[int | None, ...]:
    """The clients (in all) and workers per middleware at which seed 004 measured a study
    number of reference2018.yaml, as the reference gives them (the readers of
    analysis.studies.s2018.seed); None where it gives none (workers without middleware)."""
    if path[:1] in (["baselines_direct"], ["baselines_middleware"]) and len(path) >= 3:
        f = seed2018.baseline_figure_points(reference)
        row = f[(f["setup"] == path[1]) & (f["workload"] == path[2]) & (f["side"] == "client")]
        if len(row):
            return _count(row["clients"].iloc[0]), _count(row["workers"].iloc[0])
    if path[:1] == ["writes"] and len(path) >= 2 and path[1].isdigit():
        f = seed2018.writes_figure_points(reference)
        row = f[f["workers"] == int(path[1])]
        if len(row):
            return _count(row["clients"].iloc[0]), int(path[1])
    if path[:1] == ["multiget"]:
        m = reference.get("multiget") or {}
        return _count(m.get("clients")), _count(m.get("workers"))
    return None, None


def _nearest(levels: pd.Series, target: int) -> int:
    """The measured level nearest `target` on a logarithmic scale (the grids double), the
    smaller of two as near; `target` itself without a positive level."""
    values = sorted({int(v) for v in levels if v > 0})
    if not values or target <= 0:
        return target
    return min(values, key=lambda v: (abs(math.log(v / target)), v))


def _at(pts: pd.DataFrame, clients: int, workers: int | None) -> tuple[pd.DataFrame, bool]:
    """The rows of `pts` at the study's worker count (per middleware) and clients, each the
    nearest one measured where our grid has no point at it (the worker count first), and
    whether either is not the study's."""
    moved = False
    if workers is not None:
        w = _nearest(pts["middleware.workers"], workers)
        moved = w != workers
        pts = pts[pts["middleware.workers"].astype(int) == w]
    n = _nearest(pts["clients_total"], clients)
    return pts[pts["clients_total"].astype(int) == n], moved or n != clients


def _client_row(rows: pd.DataFrame) -> pd.Series | None:
    """The client row of a point, its `scale` as scale_of reads it (baseline_maxima.study)."""
    c = rows[rows["side"] == "client"].dropna(subset=["throughput_ops_mean"])
    if c.empty:
        return None
    return c.assign(scale=scale_of(c, "table of points")).iloc[0]


def _ours_2018(
    path: list[str], points: Mapping[str, pd.DataFrame], reference: Mapping[str, Any] | None
) -> Ours | None:
    """Ours for an entry of reference2018.yaml: without middleware our maximum beside the
    study's (Table 3, as the maxima's table computes it); else at the study's clients and
    workers (Tables 5 and 7, §5), which `reference` (reference2018.yaml) gives: None
    without it."""
    family = VALIDATION_FAMILIES.get(path[0]) if path else None
    table = points.get(family) if family else None
    if table is None or table.empty:
        return None
    clients, workers = study_configuration(path, reference or {})
    if path[0] == "baselines_direct":
        # baseline_maxima.direct_table: each setup's best client row.
        if len(path) != 3:
            return None
        pts = table[table["type"] == "all"]
        at = pts[(pts["level_setup"] == path[1]) & (pts["level_workload"] == path[2])]
        b = baseline_maxima.best(at)
        if b is None:
            return None
        return Ours(baseline_maxima.study(b, "throughput"), 0, int(b["clients_total"]),
                    clients, "maximum", REFERENCE_TABLES["baselines_direct"],
                    bound_of(b))  # fmt: skip
    if clients is None:
        return None
    if path[0] == "multiget":
        # multiget_report.keys_table: the middlewares' GET rate times the keys per request.
        if len(path) != 4 or path[1] != "keys_per_s" or not path[3].isdigit():
            return None
        size = int(path[3])
        mine = table[
            (table["level_sharding"] == path[2]) & (table["level_size"].astype(int) == size)
        ]
        if mine.empty:
            return None
        rows, moved = _at(mine, clients, workers)
        rate = multiget.get_rows(in_study_time(rows), "middleware")["throughput_ops_mean"]
        if rate.empty:
            return None
        n = int(rows["clients_total"].iloc[0])
        at = "nearest" if moved else "study"
        return Ours(float(rate.iloc[0]) * size, 0, n, clients, at, REFERENCE_TABLES["multiget"],
                    bound_of(rows))  # fmt: skip
    # Both sides' rows per point for every type together, as the baselines' and the writes'
    # tables read them; the client side holds the study's number.
    pts = table[table["type"] == "all"]
    if path[0] == "writes":
        quantity = path[2] if len(path) == 3 and path[1].isdigit() else None
    elif len(path) in (3, 4):
        quantity = path[3] if len(path) == 4 else "client_x"
        pts = pts[(pts["level_setup"] == path[1]) & (pts["level_workload"] == path[2])]
    else:
        return None
    if quantity not in ("client_x", "client_r") or pts.empty:
        return None
    rows, moved = _at(pts, clients, workers)
    row = _client_row(rows)
    if row is None:
        return None
    shown = REFERENCE_TABLES[path[0]]
    if path[0] == "baselines_middleware" and int(row["middleware.workers"]) != int(
        pts["middleware.workers"].max()
    ):
        shown = None  # the MVA's table prints only the largest worker count's points
    if path[0] == "writes":
        # The writes' table prints each worker count's best point: ours where it is that one.
        same = pts[pts["middleware.workers"].astype(int) == int(row["middleware.workers"])]
        best = _client_row(same.loc[same["side"] == "client"].nlargest(1, "throughput_ops_mean"))
        shown = WRITES_TABLE if best is not None and best["point"] == row["point"] else None
    if quantity == "client_x":
        value, digits = baseline_maxima.study(row, "throughput"), 0
    else:
        value, digits = baseline_maxima.study(row, "response"), 2
    at = "nearest" if moved else "study"
    return Ours(value, digits, int(row["clients_total"]), clients, at, shown, bound_of(rows))


def _ours_2016(
    path: list[str], sixteen: Mapping[str, str], points: pd.DataFrame | None = None
) -> Ours | None:
    """Ours for an entry of reference2016.yaml's max_throughput, as its section prints it;
    `points` the maximum-throughput family's, which say what bounds it."""
    if len(path) != 2 or path[0] != "max_throughput" or path[1] not in SIXTEEN_MAX_NUMBERS:
        return None
    name, digits, clients, at = SIXTEEN_MAX_NUMBERS[path[1]]
    if at == "study" and sixteen.get("SixteenMaxWaitClientsCase") == "nearest":
        at = "nearest"
    n, workers = _count(sixteen.get(clients)), _count(sixteen.get("SixteenMaxWorkers"))
    rows = None
    if points is not None and not points.empty and n is not None and workers is not None:
        rows = points[(points["clients_total"].astype(int) == n)
                      & (points["level_workers"].astype(int) == workers)]  # fmt: skip
    return Ours(_printed(sixteen, name), digits, n,
                _count(sixteen.get("SixteenOrigMaxClients")), at,
                REFERENCE_TABLES["max_throughput"], bound_of(rows))  # fmt: skip


def _ours_2015(
    path: list[str], fifteen: Mapping[str, str], points: pd.DataFrame | None = None
) -> Ours | None:
    """Ours for a maximum of reference2015.yaml's db_baseline (`[db_baseline, max, size,
    throughput]`): our maximum over the clients beside the study's maximum, as the 2015
    database baseline's numbers (data/2015/baseline.json) print it; `points` the database
    baseline family's, which say what bounds it."""
    if len(path) != 4 or path[:2] != ["db_baseline", "max"] or path[3] != "throughput":
        return None
    size = path[2]
    n = _count(fifteen.get(name2015("Baseline", "Max", size, "Clients")))
    rows = None
    if points is not None and not points.empty and n is not None:
        rows = points[(points["clients_total"].astype(int) == n) & (points["level_size"] == size)]
    return Ours(_printed(fifteen, name2015("Baseline", "Max", size, "Value")), 0, n,
                _count(fifteen.get(name2015("Baseline", "Seed", size, "Clients"))), "maximum",
                REFERENCE_TABLES["db_baseline"], bound_of(rows))  # fmt: skip


def validation_ours(
    validation: Sequence[Mapping[str, Any]],
    points: Mapping[str, pd.DataFrame],
    sixteen: Mapping[str, str],
    fifteen: Mapping[str, str] | None = None,
    reference: Mapping[str, Any] | None = None,
) -> dict[str, Ours]:
    """Ours beside each study number of calibration.json's `validation`, by its name, from
    the same data and functions as the table that holds it: `points` the families' points
    the validation kept, as measured, by family; `sixteen` the 2016 maximum-throughput
    numbers, `fifteen` the 2015 database baseline's; `reference` workflows/reference2018.yaml,
    whose configurations (clients, workers) say where ours is read. A study number without a
    measurement has no entry."""
    out: dict[str, Ours] = {}
    for v in validation:
        file, path = _reference(v)
        ours = None
        if file == "reference2018.yaml":
            ours = _ours_2018(path, points, reference)
        elif file == "reference2016.yaml":
            ours = _ours_2016(path, sixteen, points.get(SIXTEEN_MAX_FAMILY))
        elif file == "reference2015.yaml":
            ours = _ours_2015(path, fifteen or {}, points.get(FIFTEEN_BASELINE_FAMILY))
        if ours is not None and math.isfinite(ours.value):
            out[v["name"]] = ours
    return out


def validation_errors(
    validation: Sequence[Mapping[str, Any]], ours: Mapping[str, Ours], checks: bool = True
) -> list[tuple[Mapping[str, Any], float]]:
    """Each study number with ours and its relative error, ours / study - 1; with `checks`
    only those that check the model (not those a fitted throughput sets: `follows`)."""
    return [
        (v, ours[v["name"]].value / float(v["value"]) - 1)
        for v in validation
        if v["name"] in ours and float(v["value"]) != 0 and not (checks and v.get("follows"))
    ]


FOLLOWS = "follows"  # the validation table's block of numbers a fitted throughput sets


def _block(v: Mapping[str, Any], mine: Ours | None) -> str | None:
    """The validation table's block of a study number: FOLLOWS, else what bounds ours."""
    if v.get("follows"):
        return FOLLOWS
    return None if mine is None else mine.bound


def _where(table: str | None, measured: bool = True) -> str:
    """The table (or section) that prints ours too; `here` where only this table does."""
    if not table:
        return "here" if measured else "--"
    return f"\\S\\ref{{{table}}}" if table.startswith("sec:") else f"\\ScaleOursIn{{{table}}}"


def _clients(ours: Ours | None) -> str:
    """The Clients cell: the study's / ours, ours marked where it is not at the study's."""
    if ours is None or ours.clients is None:
        return "--"
    study = "--" if ours.study_clients is None else str(ours.study_clients)
    return f"{study} / {ours.clients}{CLIENT_MARKS.get(ours.at, '')}"


def validation_table(cal: dict[str, Any] | None, ours: Mapping[str, Ours] | None = None) -> str:
    """The study numbers the fit leaves out, in words, each with ours in the study's time
    (validation_ours), the clients of the study's number and of ours, its error and the
    table that prints ours; `--` where this profile has no measurement (and where no table
    prints ours)."""
    if cal is None:
        return "\\emph{No scale model in this profile: no study numbers to validate it.}\n"
    ours = ours or {}
    errors = {v["name"]: e for v, e in validation_errors(cal["validation"], ours, checks=False)}
    lines = [
        r"\begin{tabular}{@{}>{\raggedright\arraybackslash}p{0.30\linewidth}lrrlrrl@{}}",
        r"\toprule",
        r"Study number & Source & Study & Ours & Unit & Clients & Error & Ours in \\",
        r"\midrule",
    ]
    blocks: dict[str | None, list[Mapping[str, Any]]] = {}
    for v in cal["validation"]:
        mine = ours.get(v["name"])
        blocks.setdefault(_block(v, mine), []).append(v)
    for i, bound in enumerate(sorted(blocks, key=_bound_order)):
        if i:
            lines.append(r"\addlinespace")
        lines.append(rf"\multicolumn{{8}}{{@{{}}l}}{{\emph{{{_bound_heading(bound)}}}}} \\")
        for v in blocks[bound]:
            path = _reference(v)[1]
            mine = ours.get(v["name"])
            table = REFERENCE_TABLES.get(path[0] if path else "") if mine is None else mine.table
            lines.append(
                f"{escape(fw.reference_words(path) if path else v['name'])}"
                f" & {escape(v['source'])}"
                f" & {_f(v['value'], 0 if float(v['value']).is_integer() else 2)}"
                f" & {'--' if mine is None else _f(mine.value, mine.digits)}"
                f" & {fw.reference_unit(path)} & {_clients(mine)}"
                f" & {_percent(errors.get(v['name']), 1)} & {_where(table, mine is not None)}"
                r" \\"
            )
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _bound_order(bound: str | None) -> tuple[int, str]:
    """The table's blocks: link-bound points first, then each role's CPU, then the numbers
    a fitted throughput sets, unknown last."""
    rank = {LINK: 0, FOLLOWS: 2, None: 3}
    return (rank.get(bound, 1), bound or "")


def _bound_heading(bound: str | None) -> str:
    if bound == LINK:
        return (
            "No CPU budget used up: bounded by a link, a pool of threads, or the clients and delays"
        )
    if bound == FOLLOWS:
        return "Set by a fitted throughput (N / X at the target's point): shown, not counted"
    if bound is None:
        return "Not measured here, or what bounds it not known"
    return f"Bounded by the {bound}'s CPU budget"


def _bound_words(bound: str | None) -> str:
    return "budget-free" if bound == LINK else f"{bound}-CPU-bound"


def bound_sentence(cal: dict[str, Any] | None, ours: Mapping[str, Ours] | None) -> str:
    """The text's sentence on the validation errors by what bounds each point (the table's
    blocks): a link-bound number checks the links and delays, a CPU-bound one the fitted
    budgets; `--` without a calibration or where nothing bounds a measured number known."""
    if cal is None or ours is None:
        return "--"
    by: dict[str, list[float]] = {}
    for v, e in validation_errors(cal["validation"], ours):
        bound = ours[v["name"]].bound
        if bound is not None:
            by.setdefault(bound, []).append(e)
    if not by:
        return "--"
    tolerance = f"{100 * VALIDATION_TOLERANCE:.0f}\\,\\%"
    parts = []
    for bound in sorted(by, key=_bound_order):
        errors = by[bound]
        within = sum(abs(e) <= VALIDATION_TOLERANCE for e in errors)
        if len(errors) == 1:
            side = "within" if within else "outside"
            parts.append(
                f"the one {_bound_words(bound)} number lies {side} {tolerance}"
                f" ({_percent(errors[0], 1)})"
            )
            continue
        parts.append(
            f"{within} of the {len(errors)} {_bound_words(bound)} numbers lie within"
            f" {tolerance} ({_percent(min(errors), 1)} to {_percent(max(errors), 1)})"
        )
    return f"By what bounds each point ({FREE_WORDS}): {listed(parts)}."


FREE_WORDS = (
    "budget-free: no CPU budget used up, so a link, a pool of threads or the clients and"
    " delays bound it"
)


def validation_sentence(cal: dict[str, Any] | None, ours: Mapping[str, Ours] | None) -> str:
    """The text's sentence on the validation table's errors: how many lie within
    VALIDATION_TOLERANCE, their range and the largest; `--` without a calibration."""
    if cal is None or ours is None:
        return "--"
    errors = validation_errors(cal["validation"], ours)
    total = sum(not v.get("follows") for v in cal["validation"])
    if not errors:
        return "None of them has a measurement of ours in this profile."
    within = sum(abs(e) <= VALIDATION_TOLERANCE for _, e in errors)
    tolerance = f"{100 * VALIDATION_TOLERANCE:.0f}\\,\\%"
    measured = (
        f"Of the {len(errors)}" if len(errors) == total else f"Of the {len(errors)} (of {total})"
    )
    if len(errors) == 1:
        return (
            f"{measured} with a measurement of ours, {within} lies within {tolerance} of the"
            f" study's number: its error is {_percent(errors[0][1], 1)}.{_followed(cal)}"
        )
    low, high = min(e for _, e in errors), max(e for _, e in errors)
    worst = sorted(errors, key=lambda ve: -abs(ve[1]))[:VALIDATION_WORST]
    named = listed(
        [
            f"{_percent(e, 1)} ({escape(fw.reference_words(_reference(v)[1]) or v['name'])})"
            for v, e in worst
        ]
    )
    return (
        f"{measured} with a measurement of ours, {within} lie within {tolerance} of the study's"
        f" number; the errors range from {_percent(low, 1)} to {_percent(high, 1)}, the largest"
        f" being {named}.{_followed(cal)}"
    )


def _followed(cal: Mapping[str, Any]) -> str:
    """The clause on the numbers a fitted throughput sets, left out of the counts."""
    n = sum(bool(v.get("follows")) for v in cal["validation"])
    if n == 0:
        return ""
    what = "number" if n == 1 else "numbers"
    return (
        f" Not counted: the {n} {what} a fitted throughput sets (a mean response time at the"
        f" target's own point, which Little's law gives as N / X)."
    )


def _ratio(row: pd.Series, metric: str) -> str:
    r = row[f"{metric}_ratio"]
    lo, hi = row[f"{metric}_ratio_ci_low"], row[f"{metric}_ratio_ci_high"]
    ci = f" [{_f(lo, 2)}, {_f(hi, 2)}]" if math.isfinite(lo) else ""
    return f"{_f(r, 2)}{ci}"


def _bounds(row: pd.Series) -> str:
    return " / ".join(
        "link" if row[f"bound_{at}"] == LINK else f"{row[f'bound_{at}']} CPU"
        for at in ("reference", "other")
    )


def check_table(table: pd.DataFrame) -> str:
    """One row per point, side and other scale s': the rescaled values at s and s', their
    ratios, what bounds the point at s and at s', and whether the model holds there."""
    if table.empty:
        return "\\emph{The scale check did not run in this profile.}\n"
    if "outcome" not in table.columns:
        table = classify(table)
    lines = [
        r"\begin{tabular}{@{}llrlrrlrrll@{}}",
        r"\toprule",
        r" & & & & \multicolumn{3}{c}{Throughput $X/s$ [ops/s]} & \multicolumn{3}{c}{Response"
        r" time $R\cdot s$ [ms]} & \\",
        r"Workload & Side & $s'$ & Bound at $s$ / $s'$ & at $s$ & at $s'$ & ratio [\CILevel{} CI]"
        r" & at $s$ & at $s'$ & ratio & Model \\",
        r"\midrule",
    ]
    for _, row in table.sort_values(["level_workload", "other_scale", "side"]).iterrows():
        lines.append(
            f"{escape(str(row['level_workload']))} & {row['side']} & {row['other_scale']:g}"
            f" & {_bounds(row)}"
            f" & {_f(row['throughput_study_reference'])} & {_f(row['throughput_study_other'])}"
            f" & {_ratio(row, 'throughput_study')}"
            f" & {_f(row['response_ms_study_reference'], 2)}"
            f" & {_f(row['response_ms_study_other'], 2)} & {_ratio(row, 'response_ms_study')}"
            f" & {row['outcome']} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _gain(runs: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The largest over the smallest speed of a target's completed runs, and the ratio of
    the runs' mean throughputs at the two; None without two speeds."""
    by: dict[float, list[float]] = {}
    for r in runs:
        if r["status"] == "ok":
            by.setdefault(float(r["speed"]), []).append(float(r["throughput_study"]))
    if len(by) < 2:
        return None
    low, high = min(by), max(by)
    x_low, x_high = sum(by[low]) / len(by[low]), sum(by[high]) / len(by[high])
    if low <= 0 or x_low <= 0:
        return None
    return high / low, x_high / x_low


def _signed(values: list[float]) -> str:
    return " and ".join(f"{v:+,.0f}".replace(",", "{,}").replace("-", "$-$") for v in values)


def _sign(values: list[float]) -> str:
    """`negative` or `positive` when every value is, else `mixed`."""
    if all(v < 0 for v in values):
        return "negative"
    return "positive" if all(v > 0 for v in values) else "mixed"


def intercept_items(cal: dict[str, Any]) -> list[str]:
    """What the affine fits' intercepts say, per budgeted role with such fits, as the
    section's items: `\\ScaleIntercept{role}{count}{sign}{intercepts}{budget}{factor}{ratios}
    {proportion}`. Count is `one` or `many` fits; sign `negative` (the sign of a fixed cost),
    `positive` or `mixed`; budget what the calibration's own runs compared, the largest speed
    over the smallest: `twice` the budget, `times` (`factor` times it), `larger` (budgets that
    differ between fits) or `none` (no fit with two completed speeds); ratios the throughput
    gained; proportion `more` or `less` than the budget for every fit, else `mixed`."""
    items = []
    for role in ("middleware", "server"):
        fits = [t for t in cal["targets"] if t["role"] == role and t["fit"]["model"] == "affine"]
        if not fits:
            continue
        intercepts = [float(t["fit"]["intercept"]) for t in fits]
        gains = [g for t in fits if (g := _gain(t["runs"])) is not None]
        budgets = {b for b, _ in gains}
        factor = ""
        if not gains:
            budget = "none"
        elif len(budgets) > 1:
            budget = "larger"
        elif budgets == {2.0}:
            budget = "twice"
        else:
            budget, factor = "times", f"{budgets.pop():g}"
        if gains and all(x > b for b, x in gains):
            proportion = "more"
        elif gains and all(x < b for b, x in gains):
            proportion = "less"
        else:
            proportion = "mixed"
        ratios = " and ".join(f"{x:.2f}" for _, x in gains)
        count = "one" if len(fits) == 1 else "many"
        items.append(
            rf"\ScaleIntercept{{{role}}}{{{count}}}{{{_sign(intercepts)}}}{{{_signed(intercepts)}}}"
            f"{{{budget}}}{{{factor}}}{{{ratios}}}{{{proportion}}}"
        )
    return items


def _bound_role(row: pd.Series, at: str) -> str | None:
    """The role whose CPU budget the point used up at the scale `at`, None where none was."""
    role = bound_by(row, at)
    return None if role == LINK else role


def _worst_percent(rows: pd.DataFrame, metric: str) -> str:
    """The largest deviation in per cent, one decimal. The prose reads it as a bound ("agree
    within x %"), so a deviation that rounds to zero reads as the resolution, 0.1."""
    if not len(rows):
        return "--"
    return _f(max(100 * (rows[f"{metric}_ratio"] - 1).abs().max(), 0.1), 1)


def _worst_outcome(rows: pd.DataFrame) -> str:
    """The worst outcome of the rows (`fails` before `undecided` before `holds`), `--` for
    none."""
    for outcome in ("fails", "undecided", "holds"):
        if (rows["outcome"] == outcome).any():
            return outcome
    return "--"


OUTCOME_WORDS = {
    "holds": "the model holds",
    "undecided": "the check cannot tell",
    "fails": "the model fails",
}


def outcome_counts(rows: pd.DataFrame) -> str:
    """How often each outcome occurs among the rows, in words (`the model holds in 3 of its 4
    rows and the check cannot tell in 1`), `no row was measured` for none."""
    if rows.empty:
        return "no row was measured"
    counts = [(o, int((rows["outcome"] == o).sum())) for o in OUTCOME_WORDS]
    counts = [(o, n) for o, n in counts if n]
    first, n = counts[0]
    words = [f"{OUTCOME_WORDS[first]} in {n} of its {len(rows)} rows"]
    if len(counts) == 1:
        words = [f"{OUTCOME_WORDS[first]} in {'both' if n == 2 else f'all {n}'} of its rows"]
        if n == 1:
            words = [f"{OUTCOME_WORDS[first]} in its one row"]
    words += [f"{OUTCOME_WORDS[o]} in {k}" for o, k in counts[1:]]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def failed_items(table: pd.DataFrame) -> list[str]:
    """Each point and other scale where the model is not shown to hold
    (analysis.scale_model.failed_points), in words."""
    if "outcome" not in table.columns:
        table = classify(table)

    def bound(role: str) -> str:
        return "a link" if role == LINK else f"the {role}'s CPU budget"

    return [
        f"{escape(str(p['level_workload']))} at $s'={p['other_scale']:g}$ ({p['outcome']}; bound"
        f" by {bound(p['bound_reference'])} at $s$ and {bound(p['bound_other'])} at $s'$,"
        f" throughput ratio {p['throughput_ratio']:.2f}, {p['response_side']}'s response-time"
        f" ratio {p['response_ratio']:.2f})"
        for p in failed_points(table)
    ]


def check_numbers(table: pd.DataFrame) -> dict[str, str]:
    """The scale check's macros, at any number of scales (each other scale s' against s).
    Its points fall in two kinds: those no CPU budget bounds at s, which must agree once
    rescaled, and those a budget bounds at s, which need not (a larger budget does more than
    in proportion where the fits have a fixed cost). The case: `unbound` (no point is bound
    at s), `released` (every bound point's budget is no longer used up at s'), `bound` (some
    stay bound at s'), or `none` without a check. The outcome case: `holds` (the model holds
    at every point), `fails` (it fails at some), `undecided` (at none it fails, at some it
    cannot tell), with the points where it does not hold in `ScaleCheckFailed` and the worst
    outcome of the link- and CPU-bound points apart."""
    out = {
        "ScaleCheckCase": "none",
        "ScaleCheckOutcomeCase": "none",
        "ScaleCheckTolerancePercent": f"{100 * AGREEMENT_TOLERANCE:g}",
    }
    for name in ("Other", "Scales", "WorstThroughputPercent", "WorstResponsePercent",
                 "UnboundThroughputPercent", "UnboundResponsePercent", "BoundThroughputPercent",
                 "Bound", "Failed", "LinkOutcome", "CpuOutcome"):  # fmt: skip
        out[f"ScaleCheck{name}"] = "--"
    if table.empty:
        return out
    if "outcome" not in table.columns:
        table = classify(table)
    others = sorted({float(x) for x in table["other_scale"]})
    out["ScaleCheckOther"] = " and ".join(f"{x:g}" for x in others)
    out["ScaleCheckScales"] = str(len(others) + 1)
    out["ScaleCheckWorstThroughputPercent"] = _worst_percent(table, "throughput_study")
    out["ScaleCheckWorstResponsePercent"] = _worst_percent(table, "response_ms_study")
    out["ScaleCheckOutcomeCase"] = _worst_outcome(table)
    out["ScaleCheckFailed"] = "; ".join(failed_items(table)) or "--"
    out["ScaleCheckLinkOutcomes"] = outcome_counts(table[table["kind"] == LINK])
    out["ScaleCheckCpuOutcomes"] = outcome_counts(table[table["kind"] != LINK])
    roles = table.apply(lambda row: _bound_role(row, "reference"), axis=1)
    unbound, bound = table[roles.isna()], table[roles.notna()]
    out["ScaleCheckUnboundThroughputPercent"] = _worst_percent(unbound, "throughput_study")
    out["ScaleCheckUnboundResponsePercent"] = _worst_percent(unbound, "response_ms_study")
    out["ScaleCheckBoundThroughputPercent"] = _worst_percent(bound, "throughput_study")
    if bound.empty:
        out["ScaleCheckCase"] = "unbound"
        return out
    items, released = [], True
    # Every side of a workload at one scale is one run: its budgets are the same.
    for (workload, scale), rows in bound.groupby(["level_workload", "other_scale"], sort=True):
        row, role = rows.iloc[0], roles[rows.index[0]]
        other = float(row[f"cpu_util_{role}_other"])
        released &= other < SATURATED
        ratios = " and ".join(sorted({_f(r, 2) for r in rows["throughput_study_ratio"]}))
        at = "$s'$" if len(others) == 1 else f"$s'={scale:g}$"
        items.append(
            f"{escape(str(workload))}, where the {role} used "
            f"{100 * float(row[f'cpu_util_{role}_reference']):.0f}\\,\\% of its CPU budget at $s$ "
            f"and {100 * other:.0f}\\,\\% at {at} (throughput ratio {ratios})"
        )
    out["ScaleCheckCase"] = "released" if released else "bound"
    out["ScaleCheckBound"] = "; ".join(items)
    return out


def other_factor_numbers(cal: dict[str, Any] | None) -> dict[str, str]:
    """Whether the 2016 design would reach its study's maximum at the 2018 design's factor,
    from the 2016 target's own calibration runs (measured, not its fit's extrapolation): `below`
    when every run at a speed at or above that factor served less than the study (a faster
    budget serves more, so the factor serves less still), `above` when every run at a speed at
    or below it served more, else `unknown` (or `none` without both designs' factors)."""
    out = {"ScaleSixteenAtEighteenCase": "none"}
    for name in ("Speed", "Served", "Study"):
        out[f"ScaleSixteenAtEighteen{name}"] = "--"
    factor = ((cal or {}).get("speed_factors") or {}).get("2018", {}).get("middleware")
    own = [
        t
        for t in (cal or {}).get("targets", [])
        if t["role"] == "middleware" and t.get("studies", [t.get("study")]) == ["2016"]
    ]
    if factor is None or len(own) != 1:
        return out
    target = own[0]
    out["ScaleSixteenAtEighteenCase"] = "unknown"
    out["ScaleSixteenAtEighteenStudy"] = _f(target["value"])
    speeds: dict[float, list[float]] = {}
    for run in target["runs"]:
        if run["status"] == "ok" and run.get("throughput_study") is not None:
            speeds.setdefault(float(run["speed"]), []).append(float(run["throughput_study"]))
    # The measured speed nearest the factor on either side says the most.
    above = [v for v in sorted(speeds) if v >= factor and max(speeds[v]) < target["value"]]
    below = [v for v in sorted(speeds) if v <= factor and min(speeds[v]) > target["value"]]
    if above:
        speed, served, case = above[0], max(speeds[above[0]]), "below"
    elif below:
        speed, served, case = below[-1], min(speeds[below[-1]]), "above"
    else:
        return out
    out["ScaleSixteenAtEighteenCase"] = case
    out["ScaleSixteenAtEighteenSpeed"] = f"{speed:g}"
    out["ScaleSixteenAtEighteenServed"] = _f(served)
    return out


def numbers(
    cal: dict[str, Any] | None,
    table: pd.DataFrame,
    profile_scale: float,
    fits: list[dict[str, Any]] | None = None,
    ours: Mapping[str, Ours] | None = None,
    check_factors: Mapping[str, str] | None = None,
    machines: Mapping[str, Any] | None = None,
) -> str:
    """Every macro of the section; `fits` is analysis.calibration.fit_validation's rows (None
    without the family tables: the fits' check is then `none`), `ours` validation_ours's
    values beside the study numbers left out of the fit (None: no sentence on their errors),
    `check_factors` scale_check_factors.check_factor_numbers's macros (None: no check),
    `machines` the raw workflows/machines.yaml (None: the parameters' macros are dashes)."""
    out = {"ScaleFactor": f"{profile_scale:g}", "ScaleModelUsed": "no" if cal is None else "yes"}
    # Every macro is defined, "--" where this profile has no such number.
    speeds = [f"ScaleSpeed{role.capitalize()}{word}" for word in STUDY_WORDS.values()
              for role in ("server", "middleware", "client")]  # fmt: skip
    for name in ("ScaleCalibrationFactor", *speeds, "ScaleCalibrationTargets",
                 "ScaleValidationNumbers", "ScaleCalibrationDisturbed",
                 "ScaleIntercepts"):  # fmt: skip
        out[name] = "--"
    # The text's cases: without a calibration there are neither fits nor calibration runs.
    out["ScaleInterceptCase"] = "none"
    out["ScaleExtrapolatedCase"] = "none"
    out["ScaleExtrapolated"] = "--"
    out["ScaleCalibrationCase"] = "none"
    out["ScaleRefitCase"] = "none"
    out["ScaleValidationErrors"] = validation_sentence(cal, ours)
    out["ScaleValidationBounds"] = bound_sentence(cal, ours)
    if cal is not None:
        out["ScaleCalibrationFactor"] = f"{cal['scale']:g}"
        for study, factors in cal["speed_factors"].items():
            for role, f in factors.items():
                name = f"ScaleSpeed{role.capitalize()}{STUDY_WORDS[study]}"
                out[name] = "none (unbudgeted)" if f is None else f"{f:.3f}"
        out["ScaleCalibrationTargets"] = str(len(cal["targets"]))
        out["ScaleValidationNumbers"] = str(len(cal["validation"]))
        items = intercept_items(cal)
        out["ScaleInterceptCase"] = "fits" if items else "nofit"
        out["ScaleIntercepts"] = "; ".join(items) or "--"
        beyond = [
            f"{escape(fw.words(t['name'], fw.TARGET_WORDS))} ({t['fit']['speed']:.3f}, "
            f"{100 * x:.0f}\\,\\% {_side(t)} the speeds measured)"
            for t in cal["targets"]
            if (x := extrapolation(t)) > MAX_EXTRAPOLATION
        ]
        out["ScaleExtrapolatedCase"] = "some" if beyond else "none"
        out["ScaleExtrapolated"] = "; ".join(beyond) or "--"
        disturbed = len(cal.get("warnings", []))
        out["ScaleCalibrationCase"] = "quiet" if disturbed == 0 else "disturbed"
        out["ScaleCalibrationDisturbed"] = str(disturbed)
        # The targets both merged measurements fitted are Table 4's rows (variation_table).
        out["ScaleRefitCase"] = "some" if cal.get("refits") else "none"
    out |= other_factor_numbers(cal)
    out |= check_numbers(table)
    out |= fit_check_numbers(fits, cal)
    out |= check_factors or check_factor_numbers(None, pd.DataFrame(), None, None)
    out |= parameter_numbers(cal, machines)
    return "".join(f"\\newcommand{{\\{k}}}{{{v}}}\n" for k, v in out.items())


def _side(target: Mapping[str, Any]) -> str:
    """`below` a fitted factor under the lowest speed its runs measured, else `beyond`."""
    low = min((float(r["speed"]) for r in target["runs"] if r["status"] == "ok"), default=0.0)
    return "below" if float(target["fit"]["speed"]) < low else "beyond"


def _percent(x: float | None, digits: int = 0) -> str:
    if x is None or not math.isfinite(x):
        return "--"
    return f"{100 * x:+.{digits}f}\\,\\%".replace("-", "$-$")


def _speeds(speeds: list[float]) -> str:
    return ", ".join(f"{x:g}" for x in speeds) or "--"


def _beyond(row: Mapping[str, Any]) -> str:
    """Where an extrapolated factor lies: below the lowest or above the highest speed."""
    side = "below" if row["speed"] < min(row["speeds"]) else "above"
    return f"{100 * row['extrapolation']:.0f}\\,\\% {side} the speeds measured"


def _cpu(family: Mapping[str, Any] | None) -> str:
    """The share of its budget the target's role used at the family point."""
    use = math.nan if family is None else float(family.get("role_cpu", math.nan))
    return "--" if not math.isfinite(use) else f"{100 * use:.0f}\\,\\%"


def fit_check_table(rows: list[dict[str, Any]] | None) -> str:
    """The fits at their factors (analysis.calibration.fit_validation): per target the study's
    value, the fitted factor and the speeds its runs measured, the fit's prediction at the
    factor, and the family's measurement at the target's own configuration and at that
    setup's best load, each with its error against the study's value."""
    if rows is None:
        return "\\emph{No scale model in this profile: no fit to check.}\n"
    lines = [
        r"\begin{tabular}{@{}p{0.2\linewidth}rrlrp{0.22\linewidth}rrrr@{}}",
        r"\toprule",
        r"Target (role; designs) & Study & Factor & Speeds & Fit at factor & Family point"
        r" & Ours & Role CPU & Error & Best load \\",
        r"\midrule",
    ]
    for row in rows:
        family = row["family"]
        factor = f"{row['speed']:.3f}" + (r"$^\ast$" if row["clamped"] else "")
        if row["extrapolated"]:
            factor += r"$^\dagger$"
        here = (
            "--"
            if family is None
            else escape(fw.family_words(family["family"]))
            + r":\newline "
            + escape(fw.point_words(family["point"]))
        )
        best = (
            "--"
            if family is None
            else f"{_f(family['best_value'])} ({_percent(row['best_error'])})"
        )
        lines.append(
            f"{escape(fw.words(row['name'], fw.TARGET_WORDS))} ({row['role']};"
            f" {', '.join(row['studies'])}) & {_f(row['value'])} & {factor}"
            f" & {_speeds(row['speeds'])} & {_f(row['prediction'])} & {{\\footnotesize {here}}}"
            f" & {'--' if family is None else _f(family['value'])} & {_cpu(family)}"
            f" & {_percent(row['error'])} & {best} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def variation_table(cal: dict[str, Any] | None) -> str:
    """The calibration's repeatability between two sessions, per target both calibrated: the
    two factors, the two ratios of a throughput the role bounds (analysis.calibration.
    session_ratios) and the relative standard deviation it gives (target_variation)."""
    if cal is None or not cal.get("refits"):
        return "\\emph{One measurement session: no second calibration to repeat the fits.}\n"
    ratios = session_ratios(cal)
    lines = [
        r"\begin{tabular}{@{}lllrrrrr@{}}",
        r"\toprule",
        r"Target & Role & Studies & Kept & Other & Runs' ratio (speed) & At the factor & RSD \\",
        r"\midrule",
    ]
    for r, both in zip(cal["refits"], ratios, strict=True):
        measured = (
            "--" if both["measured"] is None else f"{both['measured']:.2f} ({float(r['speed']):g})"
        )
        lines.append(
            f"{escape(fw.words(r['name'], fw.TARGET_WORDS))} & {r['role']}"
            f" & {', '.join(map(str, r['studies']))} & {float(r['kept']):.3f}"
            f" & {float(r['other']):.3f} & {measured} & {both['operating']:.2f}"
            f" & {100 * refit_deviation(both):.1f}\\,\\% \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _short(source: str, limit: int = 150) -> str:
    """A source's first clause (to its first `;`), at most `limit` characters: a longer one
    ends at its last clause break within them (`:`, `,` or an opening parenthesis), else at a
    word with an ellipsis. The whole reasoning stays in workflows/machines.yaml."""
    text = source.split("; ")[0].strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind(b) for b in (": ", ", ", " ("))
    if cut >= limit // 3:
        return head[:cut].rstrip(" ,:")
    return head.rsplit(" ", 1)[0] + " \u2026"


def _taken(source: str, assumed: bool) -> str:
    """A source as the row states it: a study number another study's row takes over (its own
    seed measured none) says so."""
    short = _short(source)
    return f"taken over from {short}" if assumed and not source.startswith("assumed") else short


def _assumed(source: str, study_source: str, what: str) -> bool:
    return source.startswith("assumed") or f"{what} assumed" in study_source


def parameter_rows(cal: dict[str, Any], machines: Mapping[str, Any]) -> list[dict[str, str]]:
    """Every parameter of the scale model that is fitted or assumed, in one list: the scale
    factors, the speed factors per study and role, the speed bounds, the links per machine
    type, the one-way delays per pair (a study's own included), the database's commit delay.
    Each row: `parameter`, `studies`, `value`, `origin` (`fitted`, `assumed`, `set` by the
    profile, or `seed` for a study's measurement) and `source`. `machines` is the raw
    workflows/machines.yaml; the values the runs took come from calibration.json."""
    studies = {str(k): v for k, v in machines["studies"].items()}
    study_source = {k: str(v.get("source", "")) for k, v in studies.items()}
    low, high = cal["speed_bounds"]
    bounds = {
        "parameter": "speed bounds",
        "studies": ", ".join(sorted(studies)),
        "value": f"{low:g}--{high:g}",
        "origin": "assumed",
        "source": "the range a fitted factor may take (a fit beyond it is clamped)",
    }
    return [
        *_scale_rows(cal, studies),
        *_speed_rows(cal, studies),
        bounds,
        *_link_rows(machines["machine_types"], studies, study_source),
        *_delay_rows(machines["delays_ms"], studies, study_source),
        *_commit_rows(studies),
    ]


def _scale_rows(cal: dict[str, Any], studies: Mapping[str, Any]) -> list[dict[str, str]]:
    """The profile's scale factor, and each study's own where it has one."""
    own_scale = {
        str(k): float(v) for k, v in (cal.get("settings") or {}).get("studies", {}).items()
    }
    common = sorted(set(studies) - set(own_scale))
    rows = [
        {"parameter": "scale $s$", "studies": ", ".join(common), "value": f"{cal['scale']:g}",
         "origin": "set", "source": "the profile's scale factor"}
    ]  # fmt: skip
    for study, scale in sorted(own_scale.items()):
        rows.append(
            {"parameter": "scale $s$", "studies": study, "value": f"{scale:g}", "origin": "set",
             "source": "the profile's own scale of this study"}
        )  # fmt: skip
    return rows


def _speed_rows(cal: dict[str, Any], studies: Mapping[str, Any]) -> list[dict[str, str]]:
    """Each study's speed factor per role: fitted to its target, the clients' rule, or an
    assumed role's bound."""
    serving = {
        (str(s), t["role"]): t for t in cal["targets"] for s in t.get("studies") or [t["study"]]
    }
    unfitted = {
        (k, role): spec for k, v in studies.items() for role, spec in v.get("unfitted", {}).items()
    }
    rows = []
    for study, factors in sorted(cal["speed_factors"].items()):
        for role, factor in sorted(factors.items()):
            target = serving.get((study, role))
            if target is not None:
                where, origin = _fitted_where(target), "fitted"
            elif role == "client":
                rule = cal["client_rule"]
                where, origin = f"{rule['same_as']}: {rule['why']}", "assumed"
            else:
                spec = unfitted.get((study, role), {})
                where = f"{spec.get('same_as', 'upper')} bound: {_short(str(spec.get('why', '')))}"
                origin = "assumed"
            rows.append(
                {"parameter": f"speed factor, {role}", "studies": study,
                 "value": "unbudgeted" if factor is None else f"{factor:.3f}", "origin": origin,
                 "source": where}
            )  # fmt: skip
    return rows


def _fitted_where(target: Mapping[str, Any]) -> str:
    """A fitted factor's source, in plain text (the table escapes it): its target, the fit
    and the speeds it used, and how far it was extrapolated beyond them."""
    fit, speeds = target["fit"], sorted({float(r["speed"]) for r in target["runs"]
                                          if r["status"] == "ok"})  # fmt: skip
    beyond = extrapolation(target)
    where = (
        f"{fw.words(target['name'], fw.TARGET_WORDS)} ({target['value']:,.0f} ops/s),"
        f" {fit['model']} fit over speeds {', '.join(f'{x:g}' for x in speeds)}"
    )
    if beyond > 0:
        side = "below" if fit["speed"] < speeds[0] else "above"
        where += f", extrapolated {100 * beyond:.0f} % {side} them"
    return where


def _link_rows(
    types: Mapping[str, Any], studies: Mapping[str, Any], study_source: Mapping[str, str]
) -> list[dict[str, str]]:
    """Each machine type's link, per the studies that measured it and those that took it
    over (assumed)."""
    rows = []
    for name, spec in types.items():
        using = sorted(k for k, v in studies.items() if name in v["roles"].values())
        source = str(spec["link_source"])
        for assumed in (False, True):
            these = [k for k in using if _assumed(source, study_source[k], "link capacities")
                     == assumed]  # fmt: skip
            if these:
                rows.append(
                    {"parameter": f"link, {name.replace('_', ' ')}", "studies": ", ".join(these),
                     "value": f"{spec['link_mbit']:g} Mbit/s",
                     "origin": "assumed" if assumed else "seed",
                     "source": _taken(source, assumed)}
                )  # fmt: skip
    return rows


def _delay_rows(
    delays: Mapping[str, Any], studies: Mapping[str, Any], study_source: Mapping[str, str]
) -> list[dict[str, str]]:
    """Each pair's one-way delay, per the studies that share it, and a study's own apart."""
    rows = []
    for pair, spec in delays.items():
        own = {str(k): v for k, v in (spec.get("studies") or {}).items()}
        rest = sorted(set(studies) - set(own))
        source = str(spec["source"])
        for assumed in (False, True):
            these = [k for k in rest if _assumed(source, study_source[k], "delays") == assumed]
            if these:
                rows.append(
                    {"parameter": f"delay, {pair.replace('_', '--')}", "studies": ", ".join(these),
                     "value": f"{spec['one_way_ms']:g} ms",
                     "origin": "assumed" if assumed else "seed",
                     "source": _taken(source, assumed)}
                )  # fmt: skip
        for study, mine in sorted(own.items()):
            # A study's own delay stands apart because one of its numbers set it.
            rows.append(
                {"parameter": f"delay, {pair.replace('_', '--')}", "studies": study,
                 "value": f"{mine['one_way_ms']:g} ms", "origin": "fitted",
                 "source": _short(str(mine["source"]))}
            )  # fmt: skip
    return rows


def _commit_rows(studies: Mapping[str, Any]) -> list[dict[str, str]]:
    """A study database's commit delay, where it has one."""
    rows = []
    for study, spec in sorted(studies.items()):
        if "commit" in spec:
            source = str(spec["commit"]["source"])
            rows.append(
                {"parameter": "commit delay", "studies": study,
                 "value": f"{spec['commit']['ms']:g} ms",
                 "origin": "assumed" if source.startswith("assumed") else "seed",
                 "source": _short(source)}
            )  # fmt: skip
    return rows


def parameter_numbers(
    cal: dict[str, Any] | None, machines: Mapping[str, Any] | None
) -> dict[str, str]:
    """The text's macros of the parameter table (parameter_rows): how many parameters it
    lists (`ScaleParameters`) and how many of them are assumed (`ScaleParametersAssumed`), and
    per study its database's commit delay in the study's time, ms (`ScaleCommitDelay<Study>`),
    with its origin (`ScaleCommitDelayOrigin<Study>`: `assumed` or `seed`); dashes without a
    scale model or a commit delay."""
    out = {"ScaleParameters": "--", "ScaleParametersAssumed": "--"}
    for word in STUDY_WORDS.values():
        out[f"ScaleCommitDelay{word}"] = "--"
        out[f"ScaleCommitDelayOrigin{word}"] = "--"
    if cal is None or machines is None:
        return out
    rows = parameter_rows(cal, machines)
    out["ScaleParameters"] = str(len(rows))
    out["ScaleParametersAssumed"] = str(sum(r["origin"] == "assumed" for r in rows))
    for row in rows:
        if row["parameter"] != "commit delay":
            continue
        for study in row["studies"].split(", "):
            if study in STUDY_WORDS:
                out[f"ScaleCommitDelay{STUDY_WORDS[study]}"] = row["value"].removesuffix(" ms")
                out[f"ScaleCommitDelayOrigin{STUDY_WORDS[study]}"] = row["origin"]
    return out


def parameter_table(cal: dict[str, Any] | None, machines: Mapping[str, Any] | None) -> str:
    if cal is None or machines is None:
        return "\\emph{No scale model in this profile: its hosts are the study's machines.}\n"
    lines = [
        r"\begin{tabular}{@{}llrlp{0.45\linewidth}@{}}",
        r"\toprule",
        r"Parameter & Studies & Value & Origin & Where it comes from \\",
        r"\midrule",
    ]
    for row in parameter_rows(cal, machines):
        lines.append(
            f"{row['parameter']} & {row['studies']} & {row['value']} & {row['origin']}"
            f" & {{\\footnotesize {escape(row['source'])}}} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def fit_check_numbers(
    rows: list[dict[str, Any]] | None, cal: dict[str, Any] | None
) -> dict[str, str]:
    """The text's macros of the fits' check and their repeatability: the family's error at
    each target's configuration (`ScaleFitErrors`), the largest in size and its target, the
    extrapolated factors (`ScaleFitExtrapolated`, case `some` or `none`), the least share of
    its budget a target's role used at its own point (`ScaleFitLeastCpu`) and the targets
    whose role's budget did not bound it (`ScaleFitUnpinned`), and the session
    variation per study and role (`ScaleSessionVariation`, its largest) and the most sessions
    any target was calibrated in (`ScaleSessions`: one more than its refits)."""
    out = {"ScaleFitCase": "none", "ScaleFitExtrapolatedCase": "none",
           "ScaleSessionCase": "none", "ScaleSessions": "1"}  # fmt: skip
    for name in ("FitErrors", "FitWorstPercent", "FitWorstTarget", "FitBestLoads",
                 "FitExtrapolated", "SessionVariation", "SessionWorstPercent",
                 "SessionWorst", "FitUnpinned", "FitLeastCpu"):  # fmt: skip
        out[f"Scale{name}"] = "--"
    if rows:
        measured = [r for r in rows if r["error"] is not None]
        out["ScaleFitCase"] = "measured" if measured else "unmeasured"

        def name(r: Mapping[str, Any]) -> str:
            return escape(fw.words(r["name"], fw.TARGET_WORDS))

        out["ScaleFitErrors"] = (
            "; ".join(f"{name(r)} {_percent(r['error'])}" for r in measured) or "--"
        )
        out["ScaleFitBestLoads"] = (
            "; ".join(f"{name(r)} {_percent(r['best_error'])}" for r in measured) or "--"
        )
        # A fit pins its factor only where the role's budget bounds the target's own point.
        cpu = [(r, float(r["family"].get("role_cpu", math.nan))) for r in measured]
        cpu = [(r, u) for r, u in cpu if math.isfinite(u)]
        if cpu:
            out["ScaleFitLeastCpu"] = f"{100 * min(u for _, u in cpu):.0f}"
            out["ScaleFitUnpinned"] = "; ".join(
                f"{name(r)} ({r['role']} CPU {100 * u:.0f}\\,\\%)"
                for r, u in cpu if u < SATURATED
            ) or "--"  # fmt: skip
        if measured:
            worst = max(measured, key=lambda r: abs(r["error"]))
            out["ScaleFitWorstPercent"] = f"{100 * abs(worst['error']):.0f}"
            out["ScaleFitWorstTarget"] = name(worst)
        beyond = [r for r in rows if r["extrapolated"]]
        out["ScaleFitExtrapolatedCase"] = "some" if beyond else "none"
        out["ScaleFitExtrapolated"] = (
            "; ".join(
                f"{name(r)} ({r['speed']:.3f}, {_beyond(r)}: {_speeds(r['speeds'])})"
                for r in beyond
            )
            or "--"
        )
    variation = session_variation(cal) if cal else {}
    if variation:
        names = [str(r["name"]) for r in cal.get("refits") or []] if cal else []
        out["ScaleSessions"] = str(1 + max(names.count(n) for n in names))
        out["ScaleSessionCase"] = "some"
        out["ScaleSessionVariation"] = "; ".join(
            f"{study} {role} {100 * v:.1f}\\,\\%" for (study, role), v in variation.items()
        )
        (study, role), v = max(variation.items(), key=lambda kv: kv[1])
        out["ScaleSessionWorstPercent"] = f"{100 * v:.0f}"
        out["ScaleSessionWorst"] = f"the {study} {role}"
    return out
