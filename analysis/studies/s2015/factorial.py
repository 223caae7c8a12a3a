"""§3.5, Table 3: the 2^4·r design (workers per middleware, middlewares, clients, message
size) and its allocation of variation of the system's throughput, with each effect's
confidence interval (analysis.models.factorial through models.factorial). The seed gives the
design only; a factor that a profile measured at one level is left out of the design, and
with one repetition the error term and the intervals are empty."""

from __future__ import annotations

import math

import pandas as pd

from analysis.models.factorial import DesignError, FactorialResult
from analysis.report import figures as fg
from analysis.report.numbers import Report
from analysis.studies.s2015 import models
from analysis.studies.s2015.common import name, study_points

LABELS = {"queue.workers": "W", "middlewares": "M", "clients_total": "C",
          "queue.message_size": "S"}  # fmt: skip


def design_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The completed runs' system throughput (clients, every type) in study units."""
    if runs.empty or "side" not in runs.columns:
        return pd.DataFrame()
    r = study_points(runs)
    ok = r["status"] == "ok" if "status" in r.columns else True
    return r[(r["side"] == "client") & (r["type"] == "all") & ok].copy()


def varied(runs: pd.DataFrame) -> tuple[str, ...]:
    """The design's factors measured at two levels."""
    return tuple(f for f in models.FACTORS if f in runs.columns and runs[f].nunique() == 2)


def _signed(value: float) -> str:
    """An effect in math mode, so that a negative one has a minus sign, not a hyphen."""
    return f"${fg.num(value)}$"


def _term(term: str) -> str:
    return ":".join(LABELS.get(t, t) for t in term.split(":"))


def report(runs: pd.DataFrame) -> Report:
    r = design_runs(runs)
    factors = varied(r) if not r.empty else ()
    n = {name("Factorial", "Measured"): "1" if factors else "0",
         name("Factorial", "Factors"): str(len(factors))}  # fmt: skip
    if not factors:
        unknown = ("Top", "TopShare", "TopEffect", "Error", "Reps", "Mean", "Significant",
                   "HalfWidth")  # fmt: skip
        n |= {name("Factorial", k): "--" for k in unknown}
        n |= {name("Factorial", k): "0" for k in ("SignificantCount", "ErrorLeads",
                                                   "WorkersLower")}  # fmt: skip
        return Report(tex={"table": fg.tabular(["term", "effect", "variation", "interval"],
                                                 [], "lrrr")}, numbers=n)  # fmt: skip
    try:
        result = models.factorial(r, "throughput_ops", factors)
    except DesignError as err:
        raise DesignError(f"mq_factorial: {err}") from err
    rows = []
    for term in result.terms:
        lo, hi = result.confidence_intervals[term]
        interval = f"$[{fg.num(lo)}, {fg.num(hi)}]$" if math.isfinite(lo) else fg.MISSING
        rows.append([_term(term), _signed(result.effects[term]),
                     fg.pct(result.variation[term]), interval])  # fmt: skip
    rows.append(["error", "", fg.pct(result.variation.get("error", math.nan))
                 if result.replications > 1 else fg.MISSING, ""])  # fmt: skip
    top = max(result.terms, key=lambda t: result.variation[t])
    n[name("Factorial", "Top")] = _term(top)
    n[name("Factorial", "TopShare")] = fg.pct(result.variation[top])
    n[name("Factorial", "Error")] = (
        fg.pct(result.variation.get("error", math.nan)) if result.replications > 1 else "--"
    )
    n[name("Factorial", "TopEffect")] = _signed(result.effects[top])
    n[name("Factorial", "Reps")] = str(result.replications)
    n[name("Factorial", "Mean")] = fg.num(result.effects["mean"])
    n |= _significance(result, top)
    table = fg.tabular(["term", "effect (ops/s)", "variation", "interval"], rows, "lrrr")
    return Report(tex={"table": table}, numbers=n)


def _significance(result: FactorialResult, top: str) -> dict[str, str]:
    """Which terms' intervals exclude zero, how wide the intervals are (one width for every
    term of a 2^k·r design: s_q is common), whether the error outweighs the largest term, and
    whether more workers significantly lower the throughput."""
    marked = result.significant()
    significant = [_term(t) for t in result.terms if marked.get(t)]
    lo, hi = result.confidence_intervals[top]
    workers = "queue.workers"
    lowers = marked.get(workers, False) and result.effects.get(workers, 0.0) < 0
    return {
        name("Factorial", "Significant"): fg.listed(significant) if significant else "none",
        name("Factorial", "SignificantCount"): str(len(significant)),
        name("Factorial", "HalfWidth"): fg.num((hi - lo) / 2) if math.isfinite(lo) else "--",
        name("Factorial", "ErrorLeads"): "1"
        if result.variation.get("error", 0.0) > result.variation[top]
        else "0",
        name("Factorial", "WorkersLower"): "1" if lowers else "0",
    }
