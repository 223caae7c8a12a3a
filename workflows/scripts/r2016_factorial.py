"""Snakemake script: the 2016 2^3·r factorial design (servers, replication, writes) on
throughput and response time measured at the clients: effects, confidence intervals,
allocation of variation and the residual checks."""

import json
from pathlib import Path

import pandas as pd

from analysis import factorial
from analysis.aggregate import CI_LEVEL
from analysis.report import figures as fg
from analysis.scaling import in_study_time

FACTORS = {"level_servers": "S", "level_replication": "Rep", "level_writes": "w"}
HIGH = {"S": "7", "Rep": "full", "w": "10"}
ALPHA = 1 - CI_LEVEL


def placeholder(path: str, text: str) -> None:
    fig, axes = fg.figure(height=1.2)
    axes[0][0].axis("off")
    axes[0][0].text(0.5, 0.5, text, ha="center", va="center")
    fg.save(fig, path)


def main(sm) -> None:  # noqa: ANN001
    # Effects in the study's time (throughput / s, times * s by the runs' scale).
    runs = in_study_time(pd.read_parquet(sm.input.runs))
    runs = runs[(runs["side"] == "client") & (runs["type"] == "all") & (runs["status"] == "ok")]
    data = runs.rename(columns=FACTORS).reset_index(drop=True)
    data["response_ms"] = data["response_us_mean"] / 1e3
    results, problem = {}, None
    try:
        for response in ("throughput_ops", "response_ms"):
            results[response] = factorial.analyse(
                data, response, list(FACTORS.values()), high=HIGH, alpha=ALPHA, order="started_at"
            )
    except factorial.DesignError as err:
        problem = str(err)
    numbers: dict[str, str] = {"SixteenFactAlpha": fg.num(100 * (1 - ALPHA))}
    if problem:
        fg.write(sm.output.table, "")
        placeholder(sm.output.diagnostics, "not enough levels or repetitions")
        numbers["SixteenFactSentence"] = (
            "The design is incomplete in this run (" + fg.escape(problem) + "), so it is "
            "not analysed: not enough levels or repetitions."
        )
        Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))
        return
    tp, rt = results["throughput_ops"], results["response_ms"]
    rows = []
    for term in ["mean", *tp.terms]:
        cells = [fg.escape(term)]
        for res, digits in ((tp, 0), (rt, 3)):
            lo, hi = res.confidence_intervals[term]
            mark = "*" if term != "mean" and res.significant()[term] else ""
            cells += [
                fg.num(res.effects[term], digits) + mark,
                f"[{fg.num(lo, digits)}, {fg.num(hi, digits)}]",
                fg.pct(res.variation[term]) if term != "mean" else "",
            ]
        rows.append(cells)
    rows.append(
        ["error", "", "", fg.pct(tp.variation["error"]), "", "", fg.pct(rt.variation["error"])]
    )
    fg.write(
        sm.output.table,
        fg.table(
            [
                "Term",
                "$q$ ($X$, ops/s)",
                f"CI {fg.num(100 * (1 - ALPHA))}\\,\\%",
                "Var.",
                "$q$ ($R$, ms)",
                "CI",
                "Var.",
            ],
            rows,
            "lrrrrrr",
            f"$2^3 \\cdot {tp.replications}$ factorial design on the client-measured throughput "
            "$X$ and mean response time $R$ in the study's time (measured $X/s$, $R \\cdot s$, "
            "$s$ the runs' scale factor; the shares of variation do not depend on $s$): "
            "effects $q$ (additive model), their confidence "
            "intervals (* where the interval excludes zero) and the share of the variation "
            f"each term explains. Factors at $-1$/$+1$: $S$ = {tp.levels['S']['low']}/"
            f"{tp.levels['S']['high']} servers, Rep = {tp.levels['Rep']['low']}/"
            f"{tp.levels['Rep']['high']} replication, $w$ = {tp.levels['w']['low']}/"
            f"{tp.levels['w']['high']}\\,\\% writes.",
            "tab:sixteen-factorial",
        ),
    )
    factorial.plot_diagnostics(tp, sm.output.diagnostics)
    top = max(tp.terms, key=lambda t: tp.variation[t])
    numbers.update(
        SixteenFactReplications=fg.num(tp.replications),
        SixteenFactTopTerm=fg.escape(top),
        SixteenFactTopShare=fg.pct(tp.variation[top]),
        SixteenFactErrorShare=fg.pct(tp.variation["error"]),
        SixteenFactSentence=(
            f"Table~\\ref{{tab:sixteen-factorial}} gives the effects; the term that explains "
            f"most of the throughput's variation is {fg.escape(top)} "
            f"({fg.pct(tp.variation[top])}), and the experimental error explains "
            f"{fg.pct(tp.variation['error'])}."
        ),
    )
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
