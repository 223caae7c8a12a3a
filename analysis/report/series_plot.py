"""Lines with error bars where each series has its own colour and marker and the measuring
side its own line style, and a legend placed outside the axes so it never covers data."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from analysis.report import figures as fg

MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")
SIDE_LINESTYLE = {"client": "-", "middleware": "--"}
# Larger than the filled markers and above them, so that both show where they coincide.
OPEN_MARKERS = {"markersize": 6.0, "markerfacecolor": "none", "markeredgewidth": 1.0,
                "zorder": 3}  # fmt: skip


def style(index: int) -> dict[str, str]:
    """Colour and marker of the `index`-th series (distinct for the first ten)."""
    colours = fg.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {"color": colours[index % len(colours)], "marker": MARKERS[index % len(MARKERS)]}


def series_lines(
    ax: fg.plt.Axes,
    data: pd.DataFrame,
    x: str,
    metric: str,
    series: str,
    scale: float = 1.0,
    label: str = "",
    side_in_label: bool = True,
    style_of: Callable[[object], dict[str, str]] | None = None,
    dodge: float = 0.0,
    open_side: str | None = None,
) -> dict[tuple[object, str], float]:
    """One line per value of `series` and per side (`<metric>_mean`, `_ci_low`, `_ci_high`
    of a points table); error bars where there is an interval. A series' colour and marker
    are `style_of` its value (e.g. fg.worker_style) or else by its rank; lines are drawn in
    numeric order of the series. With `dodge`, the k-th of n lines moves by (k - (n-1)/2)·dodge
    along x, so that lines at the same values stay apart. The markers of `open_side` are
    drawn larger and unfilled, above the others: a point of both sides at one value shows
    as a ring around a dot. Returns each (series value, side) line's shift along x."""
    names = fg.levels_sorted(data[series])
    groups = sorted(
        data.groupby([series, "side"]), key=lambda kg: (names.index(kg[0][0]), str(kg[0][1]))
    )
    shifts = {key: (k - (len(groups) - 1) / 2) * dodge for k, (key, _) in enumerate(groups)}
    for (name, side), g in groups:
        if dodge:
            g = g.assign(**{x: g[x].astype(float) + shifts[(name, side)]})
        fg.errorbar_line(
            ax,
            g,
            x,
            metric,
            scale,
            linestyle=SIDE_LINESTYLE.get(str(side), ":"),
            label=f"{label}{name}, {side}" if side_in_label else f"{label}{name}",
            **(OPEN_MARKERS if side == open_side else {"markersize": 3.5}),
            **(style_of(name) if style_of else style(names.index(name))),
        )
    return shifts


def legend_outside(fig: fg.plt.Figure, ax: fg.plt.Axes, ncols: int = 1) -> None:
    """The legend of `ax`'s lines to the right of the figure's axes (constrained layout
    makes room for it)."""
    fg.figure_legend(fig, *fg.legend_entries(ax), ncols=ncols, loc="outside right upper",
                     fontsize=6)  # fmt: skip
