"""Queue and server times of the 2016 design's parts per configuration, and tables in the
layout of the 2016 study's Tables 2, 3, 5 and 6 (medians per configuration, rows and columns
the study's factors) with the original's values beside ours."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import pandas as pd

from analysis import family, pools
from analysis.report import figures as fg

QS = ("p50", "p90")


def point_times(
    pool_requests: pd.DataFrame,
    averaged_runs: Iterable[str],
    metric: str,
    by: Sequence[str] = ("type",),
    kinds: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per point × `by`: the parts' `metric` time (queue, server or response) of each run
    (count-weighted over windows and pools), averaged over the point's ok runs: `mean`,
    `p50`, `p90`, `p99` (µs) and `repetitions`."""
    r = pool_requests[pool_requests["run"].isin(set(averaged_runs))]
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


def get_part_times(pool_requests: pd.DataFrame, ok: set[str], point: str) -> dict[str, pd.Series]:
    """Queue and server time percentiles of the GET parts at one point (an empty series
    where there are none)."""
    part = {}
    for metric in ("queue", "server"):
        t = point_times(pool_requests, ok, metric)
        t = t[(t["point"] == point) & (t["type"] == "get")]
        part[metric] = t.iloc[0] if len(t) else pd.Series(dtype=float)
    return part


def averaged_runs(runs: pd.DataFrame) -> set[str]:
    """The runs a point's statistics average (analysis.family.averaged_runs), so a model or
    table of a point uses the runs its throughput and times come from."""
    return set(family.averaged_runs(runs)["run"]) if len(runs) else set()


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
    The original's table is laid out as far as it or our runs fill it: a group our runs did
    not measure keeps only the original's column, and a row empty on both sides is left out."""

    def ours(key: Key) -> list[float]:
        c = cells.get(key, {})
        return [c.get(q, math.nan) / 1e3 for q in QS]

    def theirs(key: Key) -> float | None:
        return reference(key) if reference else None

    keys = [(b, r, c) for b, _ in blocks for r, _ in rows for c, _ in columns]
    measured = {c for b, r, c in keys if any(math.isfinite(v) for v in ours((b, r, c)))}
    referenced = {c for b, r, c in keys if theirs((b, r, c)) is not None}
    subs = [
        (
            column,
            name,
            (list(QS) if column in measured else []) + (["orig."] if column in referenced else []),
        )
        for column, name in columns
    ]
    subs = [s for s in subs if s[2]]
    total = sum(len(sub) for *_, sub in subs)
    spec = "l" + "r" * total
    head = [column_header] + [
        rf"\multicolumn{{{len(sub)}}}{{c}}{{{name}}}" for _, name, sub in subs
    ]
    rules, start = [], 2
    for *_, sub in subs:
        rules.append(rf"\cmidrule(lr){{{start}-{start + len(sub) - 1}}}")
        start += len(sub)
    lines = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(head) + r" \\",
        " ".join(rules),
        " & ".join([row_header] + [h for *_, sub in subs for h in sub]) + r" \\",
    ]
    for block, block_name in blocks:
        body = []
        for row, row_name in rows:
            out, filled = [row_name], False
            for column, _, sub in subs:
                key = (block, row, column)
                values = ours(key)
                filled |= any(math.isfinite(v) for v in values)
                if QS[0] in sub:
                    out += [fg.num(v, 3) for v in values]
                if "orig." in sub:
                    v = theirs(key)
                    filled |= v is not None
                    out.append(fg.num(v, 3) if v is not None else fg.MISSING)
            if filled:
                body.append(" & ".join(out) + r" \\")
        if body:
            lines.append(r"\midrule")
            lines.append(rf"\multicolumn{{{1 + total}}}{{@{{}}l}}{{\emph{{{block_name}}}}} \\")
            lines += body
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
