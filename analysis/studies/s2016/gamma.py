"""The response-time distribution at the chosen maximum-throughput point as the clients and
the middleware measure it, with a gamma fitted to each side (the 2016 study's Figure 1)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from analysis.models.gamma_fit import GammaFit, GammaFitError, fit_gamma, histogram_samples
from analysis.report import figures as fg
from analysis.report import series_plot as sp
from analysis.studies.s2016.sides import point_histogram


def point_histograms(
    hist: pd.DataFrame, windows: pd.DataFrame, ok: Iterable[str], point: str
) -> tuple[dict[str, pd.Series], dict[str, float]]:
    """Per side: the point's GET histogram over its ok runs, and its bucket width (the
    clients' histogram has exact values, width 0)."""
    runs = {r for r in ok if point in r.split("/")}
    hists = {
        side: point_histogram(hist, windows, point, side, sorted(runs), ["get"])
        for side in ("client", "middleware")
    }
    widths = {"client": 0.0, "middleware": bucket_width(hists["middleware"])}
    return hists, widths


def bucket_width(hist: pd.Series) -> float:
    """Width of a histogram's equal buckets (the smallest gap between bucket bounds)."""
    b = np.unique(hist.index.to_numpy(float))
    return float(np.min(np.diff(b))) if len(b) > 1 else 0.0


def gamma_figure(
    hists: dict[str, pd.Series], widths: dict[str, float], path: str
) -> dict[str, GammaFit | None]:
    """Per side: the chosen point's response-time histogram (density, ms in the study's
    time) with the fitted gamma density; the panels share both axes."""
    fits: dict[str, GammaFit | None] = {}
    samples = {
        side: histogram_samples(h.index.to_series(), h, widths[side]) / 1e3
        for side, h in hists.items()
    }
    pooled = np.concatenate([x for x in samples.values() if len(x)] or [np.zeros(1)])
    top = float(np.quantile(pooled, 0.99)) if pooled.size > 1 else 1.0
    edges = np.linspace(0.0, max(top, 1e-6), 50)
    fig, axes = fg.figure(ncols=len(samples), height=2.6)
    for i, (ax, (side, x)) in enumerate(zip(axes[0], samples.items(), strict=True)):
        try:
            fit = fit_gamma(x[x > 0])
        except GammaFitError:
            fit = None
        fits[side] = fit
        if len(x):
            ax.hist(
                x,
                bins=edges,
                density=True,
                color=sp.style(i)["color"],
                alpha=0.45,
                label="measured",
            )
        if fit is not None:
            grid = np.linspace(edges[1] / 4, edges[-1], 300)
            ax.plot(
                grid,
                fit.pdf(grid),
                color="black",
                linewidth=1.2,
                label=f"gamma, k={fit.shape:.2f}, θ={fit.scale:.3f} ms",
            )
        ax.set_title(f"measured at the {side}", fontsize=8)
        ax.set_xlabel(fg.study_label("response time", "ms"))
        ax.set_ylabel("density (1/ms)")
        ax.legend(fontsize=6, loc="upper right", frameon=True)
    if len(axes[0]) > 1:
        axes[0][1].sharex(axes[0][0])
        axes[0][1].sharey(axes[0][0])
    fg.save(fig, path)
    return fits


def gamma_numbers(fits: dict[str, GammaFit | None], ref: dict) -> dict[str, str]:
    """Fitted shape and scale per side, and the original's beside (`SixteenOrigGammaCase`:
    `printed`, or `unprinted` where it plots its fits but prints no parameters)."""
    out = {}
    for side, name in (("client", "Client"), ("middleware", "Middleware")):
        fit = fits.get(side)
        out[f"SixteenGamma{name}Shape"] = fg.num(fit.shape if fit else math.nan, 2)
        out[f"SixteenGamma{name}Scale"] = fg.num(fit.scale if fit else math.nan, 3)
        out[f"SixteenGamma{name}Mean"] = fg.num(fit.mean if fit else math.nan, 3)
    g = ref["gamma"]
    printed = g.get("parameters")
    out["SixteenOrigGammaFigure"] = g["figure"]
    out["SixteenOrigGammaCase"] = "printed" if printed else "unprinted"
    out["SixteenOrigGammaShape"] = str(printed["shape"]) if printed else fg.MISSING
    out["SixteenOrigGammaScale"] = str(printed["scale"]) if printed else fg.MISSING
    return out
