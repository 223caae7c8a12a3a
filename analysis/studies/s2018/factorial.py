"""The 2018 study's 2^k r designs: per workload, effects, allocation of variation and
confidence intervals of throughput and response time (client side), diagnostics plots, and
the study's Table 11 beside ours. Effects in the study's time (throughput / s, response
time * s); the allocation of variation does not depend on a constant s."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

import pandas as pd

from analysis.aggregate import CI_LEVEL
from analysis.models import factorial
from analysis.report import factor_words
from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2018.macros import camel

# The study's letters: A servers (1/3), B middlewares (1/2), C workers (8/32).
FACTORS = {"servers": "A", "middlewares": "B", "workers": "C"}
WORDS = {
    "servers": "the number of servers",
    "middlewares": "the number of middlewares",
    "workers": "the number of workers per middleware",
}
RESPONSES = [("throughput_ops", 1.0, "throughput", 0), ("response_ms", 1.0, "response", 2)]
ALPHA = 1 - CI_LEVEL
# The table's columns whose cells are confidence intervals.
CI_COLUMNS = [2, 7]


class Factorial(NamedTuple):
    """The section's LaTeX outputs, by the names of the rule's outputs."""

    table_read: str
    table_write: str
    numbers: str


def letters(term: str) -> str:
    return "".join(FACTORS[f] for f in term.split(":"))


def describe(term: str) -> str:
    """A term in words with its letter (`servers` -> the number of servers ($q_{A}$))."""
    return factor_words.term_words(term, WORDS, letters)


def study_term(term: str) -> str:
    """Our term's name in the reference file (`servers:workers` -> `A:C`)."""
    if term in ("mean", "error"):
        return term
    return ":".join(FACTORS[f] for f in term.split(":"))


def study_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The completed runs' client rows (every request type together) in the study's time,
    with `workers` per middleware and `response_ms`."""
    runs = in_study_time(runs)
    runs = runs[(runs["side"] == "client") & (runs["type"] == "all") & (runs["status"] == "ok")]
    return runs.assign(
        workers=runs["middleware.workers"].astype(int),
        response_ms=runs["response_us_mean"] / 1e3,
    )


def share_macros(key: str, term: str, share: float) -> list[str]:
    """A term that explains the largest share of a variation: `<key>Term` in words,
    `<key>Share` and `<key>ShareCase` (factor_words.share_case: most or largest)."""
    return [
        fg.macro(f"{key}Term", describe(term)),
        fg.macro(f"{key}Share", fg.pct(share)),
        fg.macro(f"{key}ShareCase", factor_words.share_case(share)),
    ]


def study_macros(theirs: Mapping, key: str) -> list[str]:
    """The term that explains the study's largest share of throughput variation."""
    study_var = theirs["throughput"]["variation"]
    study_top = max((t for t in study_var if t != "error"), key=study_var.get)
    ours = {v: k for k, v in FACTORS.items()}
    term = ":".join(ours[f] for f in study_top.split(":"))
    return share_macros(f"{key}Study", term, study_var[study_top])


def analyse(d: pd.DataFrame) -> tuple[dict[str, factorial.FactorialResult], str | None]:
    """Both responses' analyses of one workload's runs, or none with the reason why."""
    try:
        results = {
            name: factorial.analyse(d, col, list(FACTORS), alpha=ALPHA, order="started_at")
            for col, _, name, _ in RESPONSES
        }
    except factorial.DesignError as err:
        return {}, str(err)
    return results, None


def effect_rows(results: dict[str, factorial.FactorialResult], theirs: Mapping) -> list[list[str]]:
    """Per term: each response's effect (* where significant), interval and share of
    variation, beside the study's effect and share."""
    terms = [":".join(t) for t in factorial.terms(list(FACTORS))]
    rows = []
    for term in ["mean", *terms, "error"]:
        label = (
            "$q_0$"
            if term == "mean"
            else ("error" if term == "error" else f"$q_{{{letters(term)}}}$")
        )
        cells = [label]
        for _, _, name, digits in RESPONSES:
            th = theirs[name]
            res = results.get(name)
            eff = res.effects.get(term, math.nan) if res else math.nan
            lo, hi = res.confidence_intervals.get(term, (math.nan, math.nan)) if res else (0, 0)
            ci = (
                fg.MISSING
                if not res or math.isnan(lo)
                else f"[{fg.num(lo, digits)}, {fg.num(hi, digits)}]"
            )
            var = res.variation.get(term, math.nan) if res and term != "mean" else math.nan
            if term == "error" and res and res.replications < 2:
                var = math.nan  # not estimable with one repetition (zero by construction)
            sig = "*" if res and res.significant().get(term, False) else ""
            cells += [
                fg.num(eff, digits) + sig if term != "error" else "",
                ci if term != "error" else "",
                fg.pct(var) if term != "mean" else "",
                fg.num(th["effects"].get(study_term(term), math.nan), digits)
                if term != "error"
                else "",
                fg.pct(th["variation"].get(study_term(term), math.nan)) if term != "mean" else "",
            ]
        rows.append(cells)
    return rows


def header() -> list[str]:
    return [
        "",
        "X effect",
        f"{int(100 * (1 - ALPHA))}\\,\\% CI",
        "var.",
        "study",
        "var.",
        "R effect [ms]",
        "CI",
        "var.",
        "study",
        "var.",
    ]


def workload_report(
    d: pd.DataFrame, theirs: Mapping, source: str, key: str, fig_path: str
) -> tuple[str, list[str]]:
    """One workload's table and macros (named `key`...), and its diagnostics figure (saved at
    `fig_path`); `theirs`: the study's values of the workload, `source` where they are from.
    The text's cases: `<key>NoteCase` (the caption: `incomplete` design, `nointervals` with one
    repetition, else `none`) and `<key>DesignCase` (`incomplete`, `single` repetition or
    `repeated`), with the terms that explain the largest shares of the variations."""
    numbers = study_macros(theirs, key)
    results, error = analyse(d)
    rows = effect_rows(results, theirs)
    reps = results["throughput"].replications if results else d["repetition"].nunique()
    head = header()
    note = "none" if results else "incomplete"
    # One repetition gives no intervals: a column of dashes says less than the caption.
    if results and all(r[c] in (fg.MISSING, "") for r in rows for c in CI_COLUMNS):
        rows = [[x for i, x in enumerate(r) if i not in CI_COLUMNS] for r in rows]
        head = [x for i, x in enumerate(head) if i not in CI_COLUMNS]
        note = "nointervals"
    table = fg.tabular(head, rows, "l" + "r" * (len(head) - 1))
    # The caption (in the section) names these.
    numbers += [
        fg.macro(f"{key}Repetitions", fg.counted(int(reps), "repetition")),
        fg.macro(f"{key}Source", fg.escape(source)),
        fg.macro(f"{key}NoteCase", note),
        fg.macro(f"{key}DesignError", fg.MISSING if error is None else fg.escape(error)),
        fg.macro(f"{key}Runs", str(len(d))),
    ]
    if not results:
        fig, axes = fg.figure(width=4, height=1.2)
        axes[0][0].text(0.5, 0.5, "not enough levels", ha="center", va="center")
        axes[0][0].set_axis_off()
        fg.save(fig, fig_path)
        numbers.append(fg.macro(f"{key}DesignCase", "incomplete"))
        return table, numbers
    x, r = results["throughput"], results["response"]
    factorial.plot_diagnostics(x, fig_path)
    top = max(x.terms, key=lambda t: x.variation[t])
    top_r = max(r.terms, key=lambda t: r.variation[t])
    numbers += [
        fg.macro(f"{key}DesignCase", "single" if x.replications < 2 else "repeated"),
        *share_macros(f"{key}Throughput", top, x.variation[top]),
        *share_macros(f"{key}Response", top_r, r.variation[top_r]),
        fg.macro(f"{key}TermCase", "same" if top_r == top else "different"),
        fg.macro(f"{key}ErrorShare", fg.pct(x.variation["error"])),
    ]
    return table, numbers


def report(runs: pd.DataFrame, ref: Mapping, fig_read: str, fig_write: str) -> Factorial:
    """Both workloads' tables and macros from the family's runs as measured and the reference
    file's `factorial` section; the diagnostics figures are saved at `fig_read`, `fig_write`."""
    runs = study_runs(runs)
    numbers: list[str] = []
    tables = []
    for workload, fig_path in [("read-only", fig_read), ("write-only", fig_write)]:
        d = runs[runs["level_workload"] == workload].reset_index(drop=True)
        table, macros = workload_report(
            d, ref[workload], ref["source"], camel("Fact", workload), fig_path
        )
        tables.append(table)
        numbers += macros
    return Factorial(*tables, "".join(numbers))
