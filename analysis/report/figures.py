"""Generic report helpers: figures with error bars per measuring side, booktabs tables and
number macros. Every value is formatted here, so NaN (one repetition, a missing side) is
rendered the same way everywhere."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.patheffects as pe
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from analysis.aggregate import CI_LEVEL
from analysis.latex import escape

__all__ = ["escape"]

# Which side measured is shown by line style and marker; colours distinguish the series.
SIDE_STYLE = {
    "client": {"linestyle": "-", "marker": "o"},
    "middleware": {"linestyle": "--", "marker": "s"},
}
MISSING = "--"
# Markers for figures that give every series its own colour and marker (`distinct_styles`).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
_MACRO_NAME = re.compile(r"^[A-Za-z]+$")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")

# One colour and marker per worker (thread) count, the same in every figure, so that a count
# reads alike across sections: the counts the studies run have tab10 colours of their own
# (grey and black are left to reference lines and seeds); any other count gets a shade of a
# colour map fixed by the count alone.
WORKER_COLOURS = {
    1: "#17becf",
    2: "#e377c2",
    4: "#9467bd",
    8: "#1f77b4",
    16: "#ff7f0e",
    24: "#bcbd22",
    32: "#2ca02c",
    64: "#d62728",
    128: "#8c564b",
}
WORKER_MARKERS = {1: "<", 2: ">", 4: "v", 8: "o", 16: "s", 24: "P", 32: "^", 64: "D", 128: "X"}


def figure(ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 2.8) -> tuple:
    plt.rcParams.update({"font.size": 8, "axes.grid": True, "grid.alpha": 0.3})
    return plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, layout="constrained")


def save(fig: plt.Figure, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def leading_number(value: object) -> float:
    """The first number in a value or its text ("8 WT" -> 8, "T=24" -> 24); NaN without one."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        found = _NUMBER.search(str(value))
        return float(found.group()) if found else math.nan


def worker_colour(workers: object) -> str:
    """The colour of a worker count (a number, or a label that starts with it: "32 WT") in
    every figure."""
    n = leading_number(workers)
    if not math.isfinite(n) or n <= 0:
        return "k"
    if n in WORKER_COLOURS:
        return WORKER_COLOURS[int(n)]
    return matplotlib.colors.to_hex(matplotlib.colormaps["viridis"](min(math.log2(n) / 8, 1.0)))


def worker_marker(workers: object) -> str:
    """The marker of a worker count, as worker_colour its colour."""
    n = leading_number(workers)
    return WORKER_MARKERS.get(int(n), "*") if math.isfinite(n) else "*"


def worker_style(workers: object) -> dict[str, str]:
    return {"color": worker_colour(workers), "marker": worker_marker(workers)}


def error_lines(
    ax: plt.Axes,
    data: pd.DataFrame,
    x: str,
    metric: str,
    series: str | None = None,
    scale: float = 1.0,
    label: str = "",
    distinct: bool = False,
    colour_of: Callable[[object], str] | None = None,
    dodge: float = 0.0,
) -> None:
    """One line per value of `series` and per side, with the metric's confidence interval as
    error bars (absent where there is a single repetition). `metric` names the columns
    `<metric>_mean`, `_ci_low`, `_ci_high` of a points table. Colours tell the series apart
    (`colour_of` a series value's, e.g. worker_colour; else by rank) and line style and
    marker the side; with `distinct`, every series × side line has its own colour and marker
    (and the side's line style). Lines are drawn, and so listed, in numeric order. With
    `dodge`, the k-th of n lines moves by (k - (n-1)/2)·dodge along x, so that lines at the
    same values stay apart."""
    groups = data.groupby([series, "side"] if series else ["side"], sort=True, dropna=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    names = sorted({k[0] for k in groups.groups} if series else {""}, key=_order)
    sides = sorted({k[1] if series else k[0] for k in groups.groups})
    styles = distinct_styles(len(names) * len(sides))
    ordered = sorted(groups, key=lambda kg: (names.index(kg[0][0]) if series else 0, str(kg[0])))
    for k, (key, g) in enumerate(ordered):
        name, side = (key[0], key[1]) if series else ("", key[0])
        if dodge:
            g = g.assign(**{x: g[x].astype(float) + (k - (len(ordered) - 1) / 2) * dodge})
        text = f"{label}{name}, {side}" if series else side
        colour = colour_of(name) if colour_of else colours[names.index(name) % len(colours)]
        style = {**SIDE_STYLE.get(side, {}), "color": colour}
        if distinct:
            style |= styles[names.index(name) * len(sides) + sides.index(side)]
        errorbar_line(ax, g, x, metric, scale, markersize=3, label=text, **style)


def errorbar_line(
    ax: plt.Axes, g: pd.DataFrame, x: str, metric: str, scale: float = 1.0, **style: object
) -> None:
    """One line of a points table's rows `g`: `<metric>_mean` against `x`, its confidence
    interval (`_ci_low`, `_ci_high`) as error bars where there is one; nothing when every
    mean is missing."""
    g = g.sort_values(x)
    y = g[f"{metric}_mean"].to_numpy(float) * scale
    if np.all(np.isnan(y)):
        return
    lo = g[f"{metric}_ci_low"].to_numpy(float) * scale
    hi = g[f"{metric}_ci_high"].to_numpy(float) * scale
    yerr = np.vstack([np.nan_to_num(y - lo), np.nan_to_num(hi - y)])
    ax.errorbar(g[x].to_numpy(float), y, yerr=yerr, capsize=2, linewidth=1, **style)  # type: ignore[arg-type]


def distinct_styles(n: int) -> list[dict[str, str]]:
    """`n` pairs of colour and marker, no two alike in either (while the colour cycle and
    `MARKERS` last; beyond them, pairs repeat)."""
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return [{"color": colours[i % len(colours)], "marker": MARKERS[i % len(MARKERS)]}
            for i in range(n)]  # fmt: skip


# Values an original study printed, drawn beside our curves as unconnected, unfilled
# markers larger than ours, above every line and error bar, so they show both alone and on
# top of a line; the side that measured them by the marker, as in SIDE_STYLE.
SEED_STYLE = {"linestyle": "none", "markersize": 8, "markerfacecolor": "none",
              "markeredgewidth": 1.0, "zorder": 10}  # fmt: skip
# A white rim keeps a seed's outline apart from a line of its own colour beneath it.
SEED_HALO = [pe.Stroke(linewidth=2.6, foreground="white"), pe.Normal()]
SEED_SIDE_MARKER = {"client": "*", "middleware": "D"}


def seed_points(
    ax: plt.Axes,
    x: Sequence[float],
    y: Sequence[float],
    label: str,
    side: str = "client",
    color: str = "k",
) -> None:
    """An original study's values at `x` as markers of SEED_STYLE (`side` picks the
    marker); nothing where every value is missing."""
    y = np.asarray(y, dtype=float)
    if len(y) == 0 or np.all(np.isnan(y)):
        return
    marker = SEED_SIDE_MARKER.get(side, "*")
    size = SEED_STYLE["markersize"] * (0.7 if marker == "D" else 1.0)
    style = {**SEED_STYLE, "markersize": size}
    ax.plot(np.asarray(x, dtype=float), y, label=label, color=color, marker=marker,
            path_effects=SEED_HALO, **style)  # type: ignore[arg-type]  # fmt: skip


def shared_ylim(axes: Sequence[plt.Axes], margin: float = 0.05) -> tuple[float, float]:
    """Give `axes` one y range that holds the data of all of them (lines, markers, error
    bars), widened by `margin` of its span each way, and return it. `Axes.sharey` after
    plotting keeps the limits of one axis and can cut the other's data off."""
    lows = [ax.dataLim.y0 for ax in axes if np.isfinite(ax.dataLim.y0)]
    highs = [ax.dataLim.y1 for ax in axes if np.isfinite(ax.dataLim.y1)]
    if not lows or not highs:
        return axes[0].get_ylim() if axes else (0.0, 1.0)
    low, high = min(lows), max(highs)
    pad = margin * (high - low) if high > low else max(abs(high) * margin, 1.0)
    limits = (low - pad, high + pad)
    for ax in axes:
        ax.set_ylim(*limits)
    return limits


def ci_errors(points: pd.DataFrame, metric: str, scale: float = 1.0) -> np.ndarray:
    """Error bars (below, above) of `metric`'s confidence interval in a points table; zero
    where there is no interval."""
    y = points[f"{metric}_mean"].to_numpy(float) * scale
    lo = points[f"{metric}_ci_low"].to_numpy(float) * scale
    hi = points[f"{metric}_ci_high"].to_numpy(float) * scale
    return np.vstack([np.nan_to_num(y - lo), np.nan_to_num(hi - y)])


def t_errors(
    points: pd.DataFrame, metric: str, scale: float = 1.0, level: float = CI_LEVEL
) -> np.ndarray:
    """Error bars (below, above) of the Student-t interval of `metric`'s mean from the
    repetitions' mean, standard deviation and count (the interval aggregate.confidence_interval
    gives, also from two repetitions); zero where there is no deviation."""
    n = points["repetitions"].to_numpy(float)
    sd = points[f"{metric}_std"].to_numpy(float) * scale
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.where(n >= 2, stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)), np.nan)
        half = half * sd / np.sqrt(n)
    return np.vstack([np.nan_to_num(half), np.nan_to_num(half)])


def study_label(quantity: str, unit: str, wrap: bool = False) -> str:
    """An axis label of a value in the study's time scale (throughput / s, times · s):
    "response time (ms, study's time scale)"; with `wrap`, the unit on a second line."""
    return f"{quantity}{chr(10) if wrap else ' '}({unit}, study's time scale)"


def not_measured(ax: plt.Axes) -> None:
    """Marks an empty panel: the profile measured none of its points."""
    ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes)


def numeric_order(handles: Sequence, labels: Sequence[str]) -> tuple[list, list[str]]:
    """Legend entries in numeric order: entries that differ only in their numbers ("8 WT,
    client", "16 WT, client") form a group, sorted by those numbers (8 before 16, not as
    text); the groups keep the order in which they first appear."""
    pattern = [_NUMBER.sub("#", label) for label in labels]
    first = {p: i for i, p in reversed(list(enumerate(pattern)))}
    key = [
        (first[p], [float(n) for n in _NUMBER.findall(lab)])
        for p, lab in zip(pattern, labels, strict=True)
    ]
    order = sorted(range(len(labels)), key=lambda i: key[i])
    return [handles[i] for i in order], [labels[i] for i in order]


def legend_entries(*axes: plt.Axes) -> tuple[list, list[str]]:
    """The labelled artists of `axes`, a label once, in numeric order."""
    seen: dict[str, object] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    return numeric_order(list(seen.values()), list(seen))


def by_rows(entries: Sequence, ncols: int) -> list:
    """`entries` rearranged so that a legend of `ncols` columns, which Matplotlib fills
    column by column, reads them row by row: with as many columns as a group has counts,
    each group is a row in numeric order (not 8, 24 / 16, 32 down two rows)."""
    ncols = max(1, min(ncols, len(entries)))
    lengths = [len(c) for c in np.array_split(np.arange(len(entries)), ncols)]
    return [entries[r * ncols + c] for c in range(ncols) for r in range(lengths[c])]


def figure_legend(
    fig: plt.Figure, handles: Sequence, labels: Sequence[str], ncols: int = 1, **kwargs: object
) -> None:
    """The one way a figure's legend is made: entries in numeric order (numeric_order),
    read row by row in `ncols` columns (by_rows); `kwargs` go to Figure.legend."""
    handles, labels = numeric_order(list(handles), list(labels))
    if handles:
        fig.legend(by_rows(handles, ncols), by_rows(labels, ncols), ncols=ncols, **kwargs)  # type: ignore[arg-type]


def legend_below(fig: plt.Figure, *axes: plt.Axes, ncols: int = 4) -> None:
    """One legend for the whole figure, under its axes, where it covers no data and no
    panel's title (the series of `axes`)."""
    figure_legend(fig, *legend_entries(*axes), ncols=ncols, loc="outside lower center", fontsize=6,
                  frameon=False)  # fmt: skip


def legend_right(fig: plt.Figure, *axes: plt.Axes, fontsize: float = 6) -> None:
    """One legend for the whole figure, right of its axes (constrained layout makes room),
    of the series of `axes`."""
    figure_legend(fig, *legend_entries(*axes), loc="outside right upper", fontsize=fontsize)


def _order(value: object) -> tuple[int, tuple[float, ...], str]:
    """Numbers by value, then text with numbers by them wherever they stand ("8 WT" before
    "16 WT", "T=8" before "T=16", "S=5, full" before "S=10, full"), then other text."""
    try:
        return (0, (float(value),), "")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        text = str(value)
        found = tuple(float(n) for n in _NUMBER.findall(text))
        return (1, found, text) if found else (2, (), text)


def levels_sorted(values: Iterable[object]) -> list:
    return sorted(set(values), key=_order)


def num(value: object, digits: int = 0) -> str:
    """A number for LaTeX; NaN, None and infinities become a dash."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return escape(str(value))
    if not math.isfinite(v):
        return MISSING
    text = f"{v:,.{digits}f}"
    if float(text.replace(",", "")) == 0:
        text = text.removeprefix("-")  # -0.004 rounds to a zero without a sign
    return text.replace(",", "{,}")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n noun` with the noun's plural unless n is 1: "1 repetition", "4 client counts"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def listed(items: Sequence[object]) -> str:
    """`1, 3 and 6`: the items of a list the text reads as one (one alone as it is)."""
    s = [str(x) for x in items]
    if len(s) < 2:
        return "".join(s)
    return ", ".join(s[:-1]) + " and " + s[-1]


def pct(value: object, digits: int = 1) -> str:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return MISSING
    return MISSING if not math.isfinite(v) else f"{100 * v:.{digits}f}\\,\\%"


def macro(name: str, value: str) -> str:
    if not _MACRO_NAME.match(name):
        raise ValueError(f"macro name {name!r}: letters only")
    return f"\\newcommand{{\\{name}}}{{{value}}}\n"


def tabular(header: Sequence[str], rows: Sequence[Sequence[str]], spec: str) -> str:
    """A booktabs tabular without a float, for a table whose caption is in the paper's
    source; cells are already LaTeX."""
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(r) + r" \\" for r in rows]
    if not rows:
        lines.append(rf"\multicolumn{{{len(header)}}}{{c}}{{no data}} \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def grouped_tabular(
    lead: Sequence[str],
    groups: Sequence[str],
    width: int | Sequence[int],
    sub: Sequence[str],
    rows: Sequence[Sequence[str] | str],
    spec: str,
) -> str:
    """A booktabs tabular with two header rows: the `lead` cells, then one heading per group
    spanning `width` columns (one width for all, or one per group), ruled below; `sub` is
    the second row, lead columns included. A row is a list of cells, or a line of LaTeX kept
    as it is (a rule, a spanning row). Its caption is in the paper's source."""
    first = len(lead)
    widths = [width] * len(groups) if isinstance(width, int) else list(width)
    head = [
        *lead,
        *(rf"\multicolumn{{{w}}}{{c}}{{{g}}}" for w, g in zip(widths, groups, strict=True)),
    ]
    ends = [first + sum(widths[: i + 1]) for i in range(len(widths))]
    spans = [(end - w + 1, end) for w, end in zip(widths, ends, strict=True)]
    lines = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(head) + r" \\",
        " ".join(rf"\cmidrule(lr){{{a}-{b}}}" for a, b in spans),
        " & ".join(sub) + r" \\",
        r"\midrule",
        *(r if isinstance(r, str) else " & ".join(r) + r" \\" for r in rows),
        r"\bottomrule",
        r"\end{tabular}",
        "",
    ]
    return "\n".join(lines)


def longtable_macros(stem: str, head: str, rows: Sequence[str]) -> str:
    """`\\<stem>Head` and `\\<stem>Rows`: the header and the rows (each already ending in
    `\\\\`) of a longtable whose environment and caption are in the paper's source; a
    longtable cannot \\input its body, but it expands macros."""
    return (
        rf"\newcommand{{\{stem}Head}}{{{head}}}" + "\n"
        rf"\newcommand{{\{stem}Rows}}{{%" + "\n" + "\n".join(rows) + "\n}\n"
    )


def write(path: str | Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
