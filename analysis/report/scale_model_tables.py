"""The report's tables of the scale model, as tabulars (their captions are in
paper/sections/scalemodel.tex), and its number macros.

From calibration.json: the calibration targets, their runs and the fitted speed factors, and
the study numbers kept for validation. From the scale_check family: the rescaled throughput
and response time at s and 2s and their ratio. Profiles without the scale model (real
machines) get tables that say so.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from analysis.bottleneck import SATURATED
from analysis.calibration import MAX_EXTRAPOLATION, extrapolation
from analysis.latex import escape
from analysis.report import factor_words as fw


def _f(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "--"
    return f"{float(x):,.{digits}f}".replace(",", "{,}")


# Macro names take no digits.
STUDY_WORDS = {"2015": "Fifteen", "2016": "Sixteen", "2018": "Eighteen"}


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


# The table that sets our measurement beside each kind of study number.
REFERENCE_TABLES = {
    "baselines_direct": "tab:base-direct-max",
    "baselines_middleware": "tab:base-mw-max",
    "writes": "tab:seeds-writes",
    "multiget": "tab:mget",
    "max_throughput": "tab:sixteen-max",
}


def validation_table(cal: dict[str, Any] | None) -> str:
    """The study numbers the fit leaves out, in words, each with the table that sets ours
    beside it: the scale model is validated there, not here."""
    if cal is None:
        return "\\emph{No scale model in this profile: no study numbers to validate it.}\n"
    lines = [
        r"\begin{tabular}{@{}llrll@{}}",
        r"\toprule",
        r"Study number & Source & Value & Unit & Ours in \\",
        r"\midrule",
    ]
    for v in cal["validation"]:
        path = v.get("reference", "").partition(":")[2].split(".")
        table = REFERENCE_TABLES.get(path[0])
        where = f"\\ScaleOursIn{{{table}}}" if table else "--"
        lines.append(
            f"{escape(fw.reference_words(path) if path[0] else v['name'])} & {escape(v['source'])}"
            f" & {_f(v['value'], 0 if float(v['value']).is_integer() else 2)}"
            f" & {fw.reference_unit(path)} & {where} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _ratio(row: pd.Series, metric: str) -> str:
    r = row[f"{metric}_ratio"]
    lo, hi = row[f"{metric}_ratio_ci_low"], row[f"{metric}_ratio_ci_high"]
    ci = f" [{_f(lo, 2)}, {_f(hi, 2)}]" if math.isfinite(lo) else ""
    return f"{_f(r, 2)}{ci}"


def check_table(table: pd.DataFrame) -> str:
    if table.empty:
        return "\\emph{The scale check did not run in this profile.}\n"
    lines = [
        r"\begin{tabular}{@{}llrrlrrl@{}}",
        r"\toprule",
        r" & & \multicolumn{3}{c}{Throughput $X/s$ [ops/s]} & \multicolumn{3}{c}{Response time"
        r" $R\cdot s$ [ms]} \\",
        r"Workload & Side & at $s$ & at $s'$ & ratio [\CILevel{} CI] & at $s$ & at $s'$ & ratio \\",
        r"\midrule",
    ]
    for _, row in table.iterrows():
        lines.append(
            f"{escape(str(row['level_workload']))} & {row['side']}"
            f" & {_f(row['throughput_study_reference'])} & {_f(row['throughput_study_other'])}"
            f" & {_ratio(row, 'throughput_study')}"
            f" & {_f(row['response_ms_study_reference'], 2)}"
            f" & {_f(row['response_ms_study_other'], 2)} & {_ratio(row, 'response_ms_study')} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _gain(runs: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The largest over the smallest speed of a target's completed runs, and the throughput
    ratio between them; None without two speeds."""
    ok = sorted((r["speed"], r["throughput_study"]) for r in runs if r["status"] == "ok")
    if len(ok) < 2 or ok[0][0] <= 0 or ok[0][1] <= 0:
        return None
    return ok[-1][0] / ok[0][0], ok[-1][1] / ok[0][1]


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


def refit_items(cal: dict[str, Any]) -> list[str]:
    """Each target two merged measurements both fitted: the factor this dataset keeps, the
    other measurement's and their ratio, and the runs' throughput ratio at a speed both ran."""
    items = []
    for r in cal.get("refits", []):
        item = (
            f"{escape(fw.words(r['name'], fw.TARGET_WORDS))} ({r['role']}): {r['kept']:.3f} kept"
            f" against {r['other']:.3f} ({r['kept'] / r['other']:.2f} times)"
        )
        if r["speed"] is not None:
            item += (
                f", and at speed {r['speed']:g} the kept runs gave {r['throughput_ratio']:.2f}"
                " times the other's throughput"
            )
        items.append(item)
    return items


def _bound_role(row: pd.Series, at: str) -> str | None:
    """The role whose CPU budget the point used up (SATURATED or more) at the scale `at`
    (`reference` or `other`), the busiest if several; None without one or without accounting."""
    uses = {
        column.removeprefix("cpu_util_").removesuffix(f"_{at}"): float(row[column])
        for column in row.index
        if column.startswith("cpu_util_") and column.endswith(f"_{at}") and pd.notna(row[column])
    }
    role, use = max(uses.items(), key=lambda kv: kv[1], default=(None, 0.0))
    return role if use >= SATURATED else None


def _worst_percent(rows: pd.DataFrame, metric: str) -> str:
    """The largest deviation in per cent, one decimal. The prose reads it as a bound ("agree
    within x %"), so a deviation that rounds to zero reads as the resolution, 0.1."""
    if not len(rows):
        return "--"
    return _f(max(100 * (rows[f"{metric}_ratio"] - 1).abs().max(), 0.1), 1)


def check_numbers(table: pd.DataFrame) -> dict[str, str]:
    """The scale check's macros. Its points fall in two kinds: those no CPU budget bounds at
    s, which must agree once rescaled, and those a budget bounds at s, which need not (a
    larger budget does more than in proportion where the fits have a fixed cost). The case:
    `unbound` (no point is bound at s), `released` (every bound point's budget is no longer
    used up at s'), `bound` (some stay bound at s'), or `none` without a check."""
    out = {"ScaleCheckCase": "none"}
    for name in ("Other", "WorstThroughputPercent", "WorstResponsePercent",
                 "UnboundThroughputPercent", "UnboundResponsePercent", "BoundThroughputPercent",
                 "Bound"):  # fmt: skip
        out[f"ScaleCheck{name}"] = "--"
    if table.empty:
        return out
    out["ScaleCheckOther"] = f"{table['other_scale'].iloc[0]:g}"
    out["ScaleCheckWorstThroughputPercent"] = _worst_percent(table, "throughput_study")
    out["ScaleCheckWorstResponsePercent"] = _worst_percent(table, "response_ms_study")
    roles = table.apply(lambda row: _bound_role(row, "reference"), axis=1)
    unbound, bound = table[roles.isna()], table[roles.notna()]
    out["ScaleCheckUnboundThroughputPercent"] = _worst_percent(unbound, "throughput_study")
    out["ScaleCheckUnboundResponsePercent"] = _worst_percent(unbound, "response_ms_study")
    out["ScaleCheckBoundThroughputPercent"] = _worst_percent(bound, "throughput_study")
    if bound.empty:
        out["ScaleCheckCase"] = "unbound"
        return out
    items, released = [], True
    # Every side of a workload is one run: its budgets are the same.
    for workload, rows in bound.groupby("level_workload", sort=True):
        row, role = rows.iloc[0], roles[rows.index[0]]
        other = float(row[f"cpu_util_{role}_other"])
        released &= other < SATURATED
        ratios = " and ".join(sorted({_f(r, 2) for r in rows["throughput_study_ratio"]}))
        items.append(
            f"{escape(str(workload))}, where the {role} used "
            f"{100 * float(row[f'cpu_util_{role}_reference']):.0f}\\,\\% of its CPU budget at $s$ "
            f"and {100 * other:.0f}\\,\\% at $s'$ (throughput ratio {ratios})"
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


def numbers(cal: dict[str, Any] | None, table: pd.DataFrame, profile_scale: float) -> str:
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
    out["ScaleRefits"] = "--"
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
            f"{100 * x:.0f}\\,\\% beyond the speeds measured)"
            for t in cal["targets"]
            if (x := extrapolation(t)) > MAX_EXTRAPOLATION
        ]
        out["ScaleExtrapolatedCase"] = "some" if beyond else "none"
        out["ScaleExtrapolated"] = "; ".join(beyond) or "--"
        disturbed = len(cal.get("warnings", []))
        out["ScaleCalibrationCase"] = "quiet" if disturbed == 0 else "disturbed"
        out["ScaleCalibrationDisturbed"] = str(disturbed)
        refit = refit_items(cal)
        out["ScaleRefitCase"] = "some" if refit else "none"
        out["ScaleRefits"] = "; ".join(refit) or "--"
    out |= other_factor_numbers(cal)
    out |= check_numbers(table)
    return "".join(f"\\newcommand{{\\{k}}}{{{v}}}\n" for k, v in out.items())
