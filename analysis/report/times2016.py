"""Queue and server times of the 2016 design's parts per configuration, and tables in the
layout of the 2016 study's Tables 2, 3, 5 and 6 (medians per configuration, rows and columns
the study's factors) with the original's values beside ours."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import pandas as pd

from analysis import pools
from analysis.report import figures as fg

QS = ("p50", "p90")


def point_times(
    pool_requests: pd.DataFrame,
    ok_runs: Iterable[str],
    metric: str,
    by: Sequence[str] = ("type",),
    kinds: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per point × `by`: the parts' `metric` time (queue, server or response) of each run
    (count-weighted over windows and pools), averaged over the point's ok runs: `mean`,
    `p50`, `p90`, `p99` (µs) and `repetitions`."""
    r = pool_requests[pool_requests["run"].isin(set(ok_runs))]
    per_run = pools.part_times(r, metric, by, kinds)
    columns = ["point", *by, "repetitions", "mean", *pools.QUANTILES]
    if per_run.empty:
        return pd.DataFrame(columns=columns)
    out = (
        per_run.groupby(["point", *by], sort=True)
        .agg(
            repetitions=("run", "nunique"),
            mean=("mean", "mean"),
            **{q: (q, "mean") for q in pools.QUANTILES},
        )
        .reset_index()
    )
    return out[columns]


def ok_runs(runs: pd.DataFrame) -> set[str]:
    """Runs whose status is ok (a family's runs table has a row per run and side)."""
    return set(runs.loc[runs["status"] == "ok", "run"]) if len(runs) else set()


Key = tuple[str, str, str]  # (block, row, column) level names


def grid_tabular(
    cells: Mapping[Key, Mapping[str, float]],
    blocks: Sequence[tuple[str, str]],
    rows: Sequence[tuple[str, str]],
    columns: Sequence[tuple[str, str]],
    reference: Callable[[Key], float | None] | None,
    row_header: str,
    column_header: str,
) -> str:
    """A tabular of medians and 90th percentiles (µs in, ms out) in row blocks (e.g. queue
    and server time), rows (a factor) and column groups (another factor); with `reference`,
    each group has a third column with the original's median (a dash where it has none).
    Every row and column listed shows, measured or not, so a profile with few points still
    lays the original's table out in full."""
    sub = ["p50", "p90"] + (["orig."] if reference else [])
    width = len(sub)
    spec = "l" + ("r" * width) * len(columns)
    head = [column_header] + [rf"\multicolumn{{{width}}}{{c}}{{{name}}}" for _, name in columns]
    rules = " ".join(
        rf"\cmidrule(lr){{{2 + width * i}-{1 + width * (i + 1)}}}" for i in range(len(columns))
    )
    lines = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(head) + r" \\",
        rules,
        " & ".join([row_header] + sub * len(columns)) + r" \\",
    ]
    for block, block_name in blocks:
        lines.append(r"\midrule")
        lines.append(
            rf"\multicolumn{{{1 + width * len(columns)}}}{{@{{}}l}}{{\emph{{{block_name}}}}} \\"
        )
        for row, row_name in rows:
            out = [row_name]
            for column, _ in columns:
                c = cells.get((block, row, column), {})
                out += [fg.num(c.get(q, math.nan) / 1e3, 3) for q in QS]
                if reference:
                    v = reference((block, row, column))
                    out.append(fg.num(v, 3) if v is not None else fg.MISSING)
            lines.append(" & ".join(out) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
