"""Snakemake script: the 2016 maximum-throughput family. Throughput against clients per
read-pool size, middleware response-time percentiles, the breakdown of the middleware's
response time, the chosen maximum-throughput configuration beside the original's (with the
percentiles of its Table 1), and the grid of throughput and read-pool load per pool size.
Throughputs and times in the study's time (throughput / s, times * s by the runs' scale),
the chosen configuration's raw values beside."""

import json
import math
from pathlib import Path

import pandas as pd
import yaml

from analysis import pools
from analysis.bottleneck import SATURATED  # a resource used this share of its budget is full
from analysis.models.gamma_fit import GammaFit, GammaFitError, fit_gamma, histogram_samples
from analysis.report import figures as fg
from analysis.report import series_plot as sp
from analysis.scaling import in_study_time, with_scale
from analysis.studies.s2016.sides import point_histogram, side_percentiles
from analysis.studies.s2016.tables import (
    MAX_TOLERANCE,
    choose_max,
    in_get_windows,
    point_statistics,
    read_only_points,
    run_percentiles,
)
from analysis.studies.s2016.times import ok_runs, point_times

W = "middleware.workers"
nan = float("nan")
COMPONENTS = {
    "net_us": "net-thread",
    "queue_us": "queue",
    "worker_us": "worker",
    "server_us": "server",
    "response_us": "response",
}


def throughput_figure(points: pd.DataFrame, path: str, mx: dict) -> None:
    fig, axes = fg.figure()
    ax = axes[0][0]
    sp.series_lines(ax, points, "clients_total", "throughput_ops", series=W, label="T=")
    original_marks(ax, fg.levels_sorted(points[W]), mx)
    ax.set_xlabel("total clients")
    ax.set_ylabel("throughput (ops/s), study time")
    sp.legend_outside(fig, ax)
    fg.save(fig, path)


def original_marks(ax: fg.plt.Axes, ours: list, mx: dict) -> None:
    """The original's value per pool size (its text on its Figure 3) as a dotted horizontal
    line in the colour of our series of that size; a peak also as a hollow marker at its
    clients."""
    sizes = fg.levels_sorted([*ours, *mx["plateau_ops"]])
    extra = [t for t in sizes if t not in ours]
    for t in sizes:
        # Our sizes keep their series' style; the original's other sizes follow on.
        style = sp.style(ours.index(t) if t in ours else len(ours) + extra.index(t))
        value = float(mx["plateau_ops"][t])
        kind = mx.get("plateau_kind", {}).get(t, {"kind": "plateau"})
        label = f"T={t}, original's {kind['kind']}"
        if "clients" in kind:
            label += f" ({kind['clients']} clients)"
            ax.plot([kind["clients"]], [value], linestyle="none", markersize=5,
                    markerfacecolor="none", **style)  # fmt: skip
        ax.axhline(value, color=style["color"], linestyle=":", linewidth=1, label=label)


def percentile_figure(pct: pd.DataFrame, path: str) -> None:
    fig, axes = fg.figure(ncols=2)
    for ax, q, name in zip(axes[0], ("p50", "p90"), ("median", "90th percentile"), strict=True):
        sp.series_lines(ax, pct, "clients_total", q, series=W, scale=1e-3, label="T=")
        ax.set_xlabel("total clients")
        ax.set_title(name, fontsize=8)
    # One scale for both panels, named once: a label per panel is cut at the axis height.
    axes[0][0].set_ylabel("get response time (ms), study time")
    fg.shared_ylim(axes[0])
    sp.legend_outside(fig, axes[0][0])
    fg.save(fig, path)


def breakdown_figure(mw: pd.DataFrame, path: str) -> None:
    fig, axes = fg.figure()
    ax = axes[0][0]
    g = mw.sort_values("clients_total")
    for i, (col, name) in enumerate(COMPONENTS.items()):
        y = g[f"{col}_mean_mean"].to_numpy(float) / 1e3
        lo = g[f"{col}_mean_ci_low"].to_numpy(float) / 1e3
        hi = g[f"{col}_mean_ci_high"].to_numpy(float) / 1e3
        err = [fg.np.nan_to_num(y - lo), fg.np.nan_to_num(hi - y)]
        ax.errorbar(
            g["clients_total"],
            y,
            yerr=err,
            capsize=2,
            markersize=3.5,
            linewidth=1,
            linestyle=sp.SIDE_LINESTYLE["middleware"],
            label=name,
            **sp.style(i),
        )
    ax.set_xlabel("total clients")
    ax.set_ylabel("mean time (ms), study time")
    sp.legend_outside(fig, ax)
    fg.save(fig, path)


def bucket_width(hist: pd.Series) -> float:
    """Width of a histogram's equal buckets (the smallest gap between bucket bounds)."""
    b = fg.np.unique(hist.index.to_numpy(float))
    return float(fg.np.min(fg.np.diff(b))) if len(b) > 1 else 0.0


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
    pooled = fg.np.concatenate([x for x in samples.values() if len(x)] or [fg.np.zeros(1)])
    top = float(fg.np.quantile(pooled, 0.99)) if pooled.size > 1 else 1.0
    edges = fg.np.linspace(0.0, max(top, 1e-6), 50)
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
            grid = fg.np.linspace(edges[1] / 4, edges[-1], 300)
            ax.plot(
                grid,
                fit.pdf(grid),
                color="black",
                linewidth=1.2,
                label=f"gamma, k={fit.shape:.2f}, θ={fit.scale:.3f} ms",
            )
        ax.set_title(f"measured at the {side}", fontsize=8)
        ax.set_xlabel("response time (ms), study time")
        ax.set_ylabel("density (1/ms)")
        ax.legend(fontsize=6, loc="upper right", frameon=True)
    if len(axes[0]) > 1:
        axes[0][1].sharex(axes[0][0])
        axes[0][1].sharey(axes[0][0])
    fg.save(fig, path)
    return fits


def sides_figure(side_pct: pd.DataFrame, means: pd.DataFrame, path: str) -> None:
    """At the chosen pool size: percentiles (left) and means (right) of the response time as
    the clients and as the middleware measure it, and the middleware's mean plus the
    network's round trip between clients and middleware."""
    fig, axes = fg.figure(ncols=2)
    ax = axes[0][0]
    long = []
    for q, name in (("p50", "median"), ("p90", "90th pct."), ("mean", "mean")):
        d = side_pct if q != "mean" else means
        if q not in {c.removesuffix("_mean") for c in d.columns if c.endswith("_mean")}:
            continue
        long.append(
            d.rename(
                columns={
                    f"{q}_mean": "v_mean",
                    f"{q}_ci_low": "v_ci_low",
                    f"{q}_ci_high": "v_ci_high",
                }
            )
            .assign(series=lambda f, n=name: n + ", " + f["side"])
            .loc[:, ["clients_total", "side", "series", "v_mean", "v_ci_low", "v_ci_high"]]
        )
    data = pd.concat(long, ignore_index=True)
    pct = data[~data["series"].str.startswith("mean")]
    sp.series_lines(ax, pct, "clients_total", "v", "series", scale=1e-3, side_in_label=False)
    ax.set_xlabel("total clients")
    ax.set_ylabel("response time (ms), study time")
    ax.set_title("percentiles", fontsize=8)
    ax2 = axes[0][1]
    mean = data[data["series"].str.startswith("mean")]
    offset = len(fg.levels_sorted(pct["series"]))
    for i, (side, g) in enumerate(mean.groupby("side", sort=True)):
        g = g.sort_values("clients_total")
        ax2.plot(
            g["clients_total"],
            g["v_mean"] / 1e3,
            linestyle=sp.SIDE_LINESTYLE.get(str(side), ":"),
            markersize=3.5,
            linewidth=1,
            label=f"mean, {side}",
            **sp.style(offset + i),
        )
    mw = means[means["side"] == "middleware"].sort_values("clients_total")
    if len(mw):
        ax2.plot(
            mw["clients_total"],
            mw["mean_mean"] / 1e3 + mw["round_trip_ms"],
            linestyle=":",
            markersize=3.5,
            linewidth=1,
            label="mean, middleware + round trip",
            **sp.style(offset + 2),
        )
    ax2.set_xlabel("total clients")
    ax2.set_ylabel("response time (ms), study time")
    ax2.set_title("means", fontsize=8)
    ax2.sharey(ax)
    handles, labels = [], []
    for a in (ax, ax2):
        h, lab = a.get_legend_handles_labels()
        handles += h
        labels += lab
    fig.legend(handles, labels, loc="outside right upper", fontsize=6)
    fg.save(fig, path)


def ms(us: object) -> str:
    """Microseconds as milliseconds; None (no such value) as a dash."""
    return fg.num(float(us) / 1e3 if us is not None else float("nan"), 3)  # type: ignore[arg-type]


def grid_table(client: pd.DataFrame, load: pd.DataFrame, mx: dict) -> str:
    """Throughput (clients) and the busiest read pool's busy fraction per total clients and
    pool size, the highest throughput per pool size, and the original's value per pool size
    (a plateau or a peak, as its text states) with its kind."""
    nan = float("nan")
    plateau = mx["plateau_ops"]
    kinds = mx.get("plateau_kind", {})
    # Pool sizes these runs did not measure keep only the original's value, in a line of
    # their own below, instead of columns of dashes.
    sizes = sorted({int(w) for w in client["workers"]}) or sorted(int(w) for w in plateau)
    unmeasured = [int(t) for t in sorted(plateau) if int(t) not in sizes]
    clients = sorted({int(c) for c in client["clients_total"]})
    x = client.set_index(["clients_total", "workers"])["throughput_ops_mean"]
    busy = client.merge(load, on="point", how="left").set_index(["clients_total", "workers"])[
        "busy_read"
    ]
    sub = [""] + ["$X$ (ops/s)", "busy"] * len(sizes)
    rows: list[list[str] | str] = []
    for c in clients:
        row = [str(c)]
        for t in sizes:
            row += [fg.num(x.get((c, t), nan)), fg.pct(busy.get((c, t), nan), 0)]
        rows.append(row)
    best = client.groupby("workers")["throughput_ops_mean"].max()
    rows.append(r"\midrule")
    rows.append(["Highest"] + [_span(fg.num(best.get(t, nan))) for t in sizes])
    rows.append(
        [f"Original ({fg.escape(mx['section'])})"]
        + [_span(fg.num(plateau[t]) if t in plateau else fg.MISSING) for t in sizes]
    )
    rows.append(["its kind"] + [_span(_kind(kinds.get(t)) if t in plateau else "") for t in sizes])
    # One row per pool size not run here, its value across the measured columns: a single
    # row naming them all is wider than the table and stretches its last column.
    for t in unmeasured:
        value = f"{fg.num(plateau[t])} ({_kind(kinds.get(t))}; not run here)"
        rows.append([f"Original, $T={t}$", rf"\multicolumn{{{2 * len(sizes)}}}{{l}}{{{value}}}"])
    groups = [f"$T={t}$" for t in sizes]
    return fg.grouped_tabular(["Clients"], groups, 2, sub, rows, f"r{'rr' * len(sizes)}")


def _kind(kind: dict | None) -> str:
    """`plateau`, or `peak at N` with the clients of a peak."""
    if not kind:
        return "plateau"
    return f"{kind['kind']} at {kind['clients']}" if "clients" in kind else str(kind["kind"])


def _span(cell: str) -> str:
    """A cell across both columns of a pool size."""
    return rf"\multicolumn{{2}}{{c}}{{{cell}}}"


def read_load(pool_table: pd.DataFrame, ok: set[str]) -> pd.DataFrame:
    """Per point: the busiest read pool's busy fraction, mean over its ok runs."""
    busiest = pools.busiest_pools(pool_table[pool_table["run"].isin(ok)])
    if busiest.empty:
        return pd.DataFrame(columns=["point", "busy_read"])
    return busiest.groupby("point", as_index=False)["busy_read"].mean()


def percentiles(hist: pd.DataFrame, windows: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per point: the middleware's GET response-time p50 and p90 (µs) over repetitions."""
    per_run = run_percentiles(hist, windows, qs=(0.5, 0.9), types=["get"])
    pct = point_statistics(per_run, ["p50", "p90"])
    info = points.drop_duplicates("point")[["point", "clients_total", W]]
    return pct.merge(info, on="point", how="left").assign(side="middleware")


def part_times(pool_requests: pd.DataFrame, ok: set[str], point: str) -> dict[str, pd.Series]:
    """Queue and server time percentiles of the GET parts at one point."""
    part = {}
    for metric in ("queue", "server"):
        t = point_times(pool_requests, ok, metric)
        t = t[(t["point"] == point) & (t["type"] == "get")]
        part[metric] = t.iloc[0] if len(t) else pd.Series(dtype=float)
    return part


def side_statistics(hist: pd.DataFrame, windows: pd.DataFrame, ok: set[str]) -> pd.DataFrame:
    """Per point and side: the GET response-time p50 and p90 (µs) over the ok runs."""
    per_run = side_percentiles(hist, windows, (0.5, 0.9), ["get"])
    per_run = per_run[per_run["run"].isin(ok)]
    parts = [
        point_statistics(g, ["p50", "p90"]).assign(side=side)
        for side, g in per_run.groupby("side", sort=True)
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def client_and_middleware(
    points: pd.DataFrame,
    hist: pd.DataFrame,
    windows: pd.DataFrame,
    ok: set[str],
    chosen: pd.Series,
    output,  # noqa: ANN001
) -> tuple[dict[str, GammaFit | None], dict[str, str]]:
    """The original's Figures 1 and 2 on our runs: the chosen point's distributions with
    fitted gammas, and both sides' response times at the chosen pool size."""
    runs = {r for r in ok if chosen["point"] in r.split("/")}
    hists = {
        side: point_histogram(hist, windows, chosen["point"], side, sorted(runs), ["get"])
        for side in ("client", "middleware")
    }
    widths = {"client": 0.0, "middleware": bucket_width(hists["middleware"])}
    fits = gamma_figure(hists, widths, output.gamma)

    at = points[points[W] == chosen["workers"]]
    info = at.drop_duplicates("point")[["point", "clients_total"]]
    pct = side_statistics(hist, windows, ok)
    pct = pct.merge(info, on="point", how="inner") if len(pct) else pct
    means = at.rename(
        columns={
            "response_us_mean_mean": "mean_mean",
            "response_us_mean_ci_low": "mean_ci_low",
            "response_us_mean_ci_high": "mean_ci_high",
        }
    ).assign(
        # One-way delays are set per run (already divided by s); back in the study's time.
        round_trip_ms=lambda f: 2 * f["delays_ms.client_middleware"].astype(float) * f["scale"]
    )
    sides_figure(pct, means, output.sides)

    here = means[means["point"] == chosen["point"]].set_index("side")
    gap = (here["mean_mean"].get("client", nan) - here["mean_mean"].get("middleware", nan)) / 1e3
    rtt = float(here["round_trip_ms"].iloc[0]) if len(here) else nan
    rest = gap - rtt
    by_side = means.pivot_table(index="clients_total", columns="side", values="mean_mean")
    per_clients = (
        (by_side.get("client") - by_side.get("middleware")) / 1e3
        if len(by_side.columns) == 2
        else pd.Series(dtype=float)
    )
    below = int((per_clients < means["round_trip_ms"].max()).sum())
    if not (math.isfinite(gap) and math.isfinite(rtt)):
        sentence = "Without both sides' means at this point there is no gap to compare."
    elif rest >= 0:
        sentence = (
            f"The round trip accounts for {fg.pct(rtt / gap, 0)} of the gap; the remaining "
            f"{fg.num(rest, 3)}\\,ms is time outside the middleware's clock: a request "
            "waiting in the socket buffers before the net-thread reads it, a reply on its way "
            "out of the middleware's socket, and the load generator's own processing."
        )
    else:
        sentence = (
            f"Here the gap is {fg.num(-rest, 3)}\\,ms smaller than the round trip, which no "
            "request can beat: the emulated delay did not act on every request of this run."
        )
    if below:
        sentence += (
            f" At {below} of {len(per_clients)} client counts with $T = {int(chosen['workers'])}$"
            " the clients' mean exceeds the middleware's by less than the configured round trip"
            " (Figure~\\ref{fig:sixteen-max-sides}, right: the dotted line lies above the"
            " clients' line), so these runs' delays need checking before their absolute times"
            " are compared with the original's."
        )
    q = pct[pct["point"] == chosen["point"]].set_index("side") if len(pct) else pd.DataFrame()

    def p(side: str, name: str) -> float:
        return float(q[f"{name}_mean"].get(side, nan)) / 1e3 if len(q) else nan

    sides = {
        "SixteenSidesGap": fg.num(gap, 3),
        "SixteenSidesRoundTrip": fg.num(rtt, 3),
        "SixteenSidesSentence": sentence,
        "SixteenSidesClientMedian": fg.num(p("client", "p50"), 3),
        "SixteenSidesClientNinety": fg.num(p("client", "p90"), 3),
        "SixteenSidesMiddlewareMedian": fg.num(p("middleware", "p50"), 3),
        "SixteenSidesMiddlewareNinety": fg.num(p("middleware", "p90"), 3),
    }
    return fits, sides


def gamma_numbers(fits: dict[str, GammaFit | None], ref: dict) -> dict[str, str]:
    """Fitted shape and scale per side; the original's, or a dash, beside (it plots its fits
    but prints no parameters)."""
    out = {}
    for side, name in (("client", "Client"), ("middleware", "Middleware")):
        fit = fits.get(side)
        out[f"SixteenGamma{name}Shape"] = fg.num(fit.shape if fit else nan, 2)
        out[f"SixteenGamma{name}Scale"] = fg.num(fit.scale if fit else nan, 3)
        out[f"SixteenGamma{name}Mean"] = fg.num(fit.mean if fit else nan, 3)
    g = ref["gamma"]
    printed = g.get("parameters")
    out["SixteenOrigGammaFigure"] = g["figure"]
    out["SixteenOrigGammaSentence"] = (
        f"The original's {g['figure']} fits shape {printed['shape']} and scale "
        f"{printed['scale']}\\,ms."
        if printed
        else f"The original's {g['figure']} draws its fits but prints no parameters."
    )
    return out


def highest_per_pool(client: pd.DataFrame) -> pd.DataFrame:
    """Per pool size: the point with the highest mean client throughput (workers,
    clients_total, throughput_ops_mean), by pool size."""
    top = client.loc[client.groupby("workers")["throughput_ops_mean"].idxmax()]
    return top.set_index("workers")[["clients_total", "throughput_ops_mean", "point"]]


def at_original(best: pd.DataFrame, mx: dict) -> pd.Series | None:
    """Our highest throughput with the original's pool size (None where we did not run it)."""
    t = mx["threads_per_pool"]
    return best.loc[t] if t in best.index else None


def like_sentence(best: pd.DataFrame, mx: dict) -> str:
    """Our highest throughput at the original's pool size against its maximum there."""
    at = at_original(best, mx)
    orig = (
        f"the original's maximum of {fg.num(mx['throughput_ops'])} ops/s at"
        f" {fg.num(mx['clients'])} clients and {mx['threads_per_pool']} threads per pool"
    )
    if at is None:
        return (
            f"We did not run the original's $T = {mx['threads_per_pool']}$ to compare with {orig}."
        )
    return (
        f"Like with like, at the original's $T = {mx['threads_per_pool']}$ ours reaches at most"
        f" {fg.num(at['throughput_ops_mean'])} ops/s (at {fg.num(at['clients_total'])}"
        f" clients), {fg.pct(at['throughput_ops_mean'] / mx['throughput_ops'])} of {orig}."
    )


def threads_sentence(best: pd.DataFrame, mx: dict, tolerance: float) -> str:
    """Whether the original's finding that fewer threads per pool are slower holds in ours:
    each smaller pool size's highest throughput against the one at the original's size,
    ours and the original's (its text's values), within `tolerance` counting as equal."""
    ref_t, ref = mx["threads_per_pool"], at_original(best, mx)
    plateau = {int(k): float(v) for k, v in mx["plateau_ops"].items()}
    smaller = [int(t) for t in best.index if int(t) < ref_t]
    if ref is None or not smaller or ref_t not in plateau:
        return (
            f"Our grid does not hold both $T = {mx['threads_per_pool']}$ and a smaller pool, "
            "so the original's finding on the number of threads is not tested here."
        )
    x_ref = float(ref["throughput_ops_mean"])
    parts, verdicts = [], []
    for t in smaller:
        x = float(best.loc[t, "throughput_ops_mean"])
        verdicts.append(x < (1 - tolerance) * x_ref)
        part = f"{fg.num(x)} ops/s with $T = {t}$ ({fg.pct(x / x_ref, 0)} of that"
        if t in plateau:
            part += (
                f"; the original's {fg.num(plateau[t])} is"
                f" {fg.pct(plateau[t] / plateau[ref_t], 0)} of its {fg.num(plateau[ref_t])}"
            )
        parts.append(part + ")")
    below = [t for t in sorted(plateau) if t < ref_t]
    claim = (
        f"The original found fewer threads per pool slower (its {mx['section']}: about"
        f" {' and '.join(fg.num(plateau[t]) for t in below)} ops/s with"
        f" {' and '.join(str(t) for t in below)} threads against {fg.num(plateau[ref_t])}"
        f" with {ref_t}) and concluded that above {ref_t} threads the number of threads is no"
        f" longer the bottleneck. Ours reaches at most {fg.num(x_ref)} ops/s with $T = {ref_t}$"
        f" (at {fg.num(ref['clients_total'])} clients) and"
    )
    if all(verdicts):
        verdict = " " + "; ".join(parts) + ": this agrees with the original."
    elif not any(verdicts):
        verdict = (
            " " + "; ".join(parts) + ". The original's finding does not reproduce: here"
            f" fewer threads per pool are not slower, and our highest throughput of all is"
            f" with $T = {int(best['throughput_ops_mean'].idxmax())}$."
        )
    else:
        verdict = " " + "; ".join(parts) + ": the original's finding holds only in part."
    return claim + verdict


def cpu_sentence(points: pd.DataFrame) -> str:
    """What the scale model gives the middleware (its CPU budget in cores of this machine
    and the time dilation) and how much of it the middleware used over the family."""
    per_point = points.drop_duplicates("point")
    used = per_point["cpu_util_middleware_mean"].astype(float)
    servers = per_point["cpu_util_server_mean"].astype(float)
    throttled = per_point["throttled_share_middleware_mean"].astype(float)
    budget = float(pd.to_numeric(per_point["budgets_cores.middleware"], errors="coerce").iloc[0])
    scale = float(per_point["scale"].iloc[0])
    threads = sorted(
        int(r["servers"]) * (int(r[W]) + 1) + 1 for _, r in per_point.iterrows()
    )  # T read threads and a write thread per server, and the net-thread
    if used.isna().all() or not math.isfinite(budget):
        return "The middleware ran without a CPU budget in this family, so no use of one is shown."
    return (
        f"The scale model gives the 2016 middleware a CPU budget of {fg.num(budget, 3)} cores"
        f" of this machine, its study vCPUs times $s = {fg.num(scale, 2)}$ times its speed"
        f" factor (Section~\\ref{{sec:scale-model}}), and runs the whole system $1/s ="
        f" {fg.num(1 / scale)}$ times slower: in the study's time that budget stands for the"
        f" study's middleware machine, but it is {fg.pct(budget, 0)} of one core, shared by"
        f" {_range(threads[0], threads[-1], str)} threads ($S(T+1)$ pool threads and the"
        f" net-thread). The middleware used {_range(used.min(), used.max(), fg.pct, 0)} of"
        f" that budget at the points of this family, and its quota ran out in"
        f" {_range(throttled.min(), throttled.max(), fg.pct, 0)} of the scheduler's periods,"
        f" while its memcached servers used {_range(servers.min(), servers.max(), fg.pct, 0)}"
        " of theirs"
        + (
            ": the resource at its limit is the middleware's CPU, not memcached, and more"
            " threads per pool add no capacity, only more threads sharing the same budget."
            if used.max() >= SATURATED > servers.max()
            else "."
        )
    )


def _range(lo: object, hi: object, fmt, *args: object) -> str:  # noqa: ANN001
    """`lo` to `hi` formatted, or one value where they print alike."""
    a, b = fmt(lo, *args), fmt(hi, *args)
    return a if a == b else f"{a} to {b}"


def wait_sentence(
    pct: pd.DataFrame, pool_requests: pd.DataFrame, ok: set[str], client: pd.DataFrame, mx: dict,
    b: dict,
) -> str:  # fmt: skip
    """Where a GET's time goes at our point nearest the original's configuration (its pool
    size, the nearest client count), medians against the original's Table 1: in the queue or
    waiting for memcached."""
    t = mx["threads_per_pool"]
    same = client[client["workers"] == t]
    if same.empty:
        return f"We ran no point with $T = {t}$ to set beside the original's breakdown."
    row = same.loc[
        (same["clients_total"] - mx["clients"]).abs().sort_values(kind="stable").index[0]
    ]
    part = part_times(pool_requests, ok, row["point"])
    queue, server = float(part["queue"].get("p50", nan)), float(part["server"].get("p50", nan))
    response = float(pct.set_index("point")["p50_mean"].get(row["point"], nan))
    oq, os_, orr = b["queue"][0], b["server"][0], b["response"][0]
    where = f"$T = {t}$ and {fg.num(row['clients_total'])} clients"
    if int(row["clients_total"]) != int(mx["clients"]):
        where += f", our client count nearest to its {fg.num(mx['clients'])}"
    text = (
        f"At the original's pool size ({where}) a \\texttt{{get}} waits {ms(queue)}\\,ms in its"
        f" read queue and {ms(server)}\\,ms for memcached at the median, of a median middleware"
        f" response time of {ms(response)}\\,ms; the original's were {fg.num(oq, 3)},"
        f" {fg.num(os_, 3)} and {fg.num(orr, 3)}\\,ms ({b['table']})."
    )
    cpu = float(row.get("cpu_util_middleware_mean", nan))
    if oq < os_ and queue > server and cpu >= SATURATED:
        text += (
            " The breakdown is inverted: the study's middleware waited on its servers, ours"
            f" waits on its CPU ({fg.pct(cpu, 0)} of its budget used at this point), its"
            " requests queueing for read threads that themselves wait for a share of it."
        )
    elif oq < os_ and queue > server:
        text += (
            " The breakdown is inverted: the study's middleware waited on its servers, ours"
            " waits in its own queues."
        )
    elif queue < server:
        text += " As in the original, the wait for memcached outweighs the queue."
    return text


def main(sm) -> None:  # noqa: ANN001
    ref = yaml.safe_load(Path(sm.input.reference).read_text())
    raw_points = pd.read_parquet(sm.input.points)
    # Read-only: the middleware's side is its GETs (its SETs are memaslap's untimed pre-set).
    raw_points = read_only_points(raw_points)
    raw_windows = pd.read_parquet(sm.input.windows)
    raw_hist = pd.read_parquet(sm.input.histograms)
    raw_pool_requests = pd.read_parquet(sm.input.pool_requests)
    # The same tables in the study's time (each row by its runs' scale); raw ones beside.
    points = in_study_time(raw_points)
    windows = in_study_time(with_scale(raw_windows, raw_points, "point"))
    hist = in_study_time(with_scale(raw_hist, raw_points, "point"))
    pool_requests = in_study_time(with_scale(raw_pool_requests, raw_points, "point"))
    mx, b = ref["max_throughput"], ref["breakdown"]
    throughput_figure(points, sm.output.throughput, mx)

    pct = percentiles(hist, windows, points)
    percentile_figure(pct, sm.output.percentiles)

    client = points[points["side"] == "client"].rename(columns={W: "workers"})
    chosen = choose_max(client, MAX_TOLERANCE)
    mw = points[(points["side"] == "middleware") & (points[W] == chosen["workers"])]
    breakdown_figure(mw, sm.output.breakdown)
    ok = ok_runs(pd.read_parquet(sm.input.runs))
    fits, sides = client_and_middleware(points, hist, windows, ok, chosen, sm.output)

    mw_point = points[(points["side"] == "middleware") & (points["point"] == chosen["point"])]
    mwr = mw_point.iloc[0] if len(mw_point) else pd.Series(dtype=float)
    p = pct.set_index("point").reindex([chosen["point"]]).iloc[0]
    p_raw = (
        percentiles(raw_hist, raw_windows, raw_points)
        .set_index("point")
        .reindex([chosen["point"]])
        .iloc[0]
    )
    sec = mx["section"]
    part = part_times(pool_requests, ok, chosen["point"])
    part_raw = part_times(raw_pool_requests, ok, chosen["point"])
    raw_client = raw_points[(raw_points["side"] == "client")].set_index("point")
    x_raw = raw_client["throughput_ops_mean"].get(chosen["point"], float("nan"))
    load = read_load(in_get_windows(pd.read_parquet(sm.input.pools), windows), ok)
    fg.write(sm.output.grid, grid_table(client, load, mx))
    best = highest_per_pool(client)
    at_ref = at_original(best, mx)
    peak = best.loc[best["throughput_ops_mean"].idxmax()]
    peak_t = int(best["throughput_ops_mean"].idxmax())
    rows = [
        [
            "Throughput (ops/s)",
            fg.num(chosen["throughput_ops_mean"]),
            fg.num(x_raw),
            fg.num(mx["throughput_ops"]),
            sec,
        ],
        [
            "Total clients",
            fg.num(chosen["clients_total"]),
            "",
            fg.num(mx["clients"]),
            sec,
        ],
        [
            "Threads per read pool",
            fg.num(chosen["workers"]),
            "",
            fg.num(mx["threads_per_pool"]),
            sec,
        ],
    ]
    for name, ours, raw, orig in (
        ("$t_\\mathrm{MW}$, middleware response", p, p_raw, b["response"]),
        (
            "$t_\\mathrm{Queue}$, time in the read queue",
            part["queue"],
            part_raw["queue"],
            b["queue"],
        ),
        (
            "$t_\\mathrm{Server}$, time waiting for memcached",
            part["server"],
            part_raw["server"],
            b["server"],
        ),
    ):
        for i, q in enumerate(("p50", "p90")):
            value = ours.get(f"{q}_mean", ours.get(q))
            value_raw = raw.get(f"{q}_mean", raw.get(q))
            rows.append(
                [f"{name}, {q} (ms)", ms(value), ms(value_raw), fg.num(orig[i], 3), b["table"]]
            )
    fg.write(
        sm.output.table,
        fg.tabular(["Metric", "Ours", "Ours raw", "Original", "Seed"], rows, "p{5.4cm}rrrl"),
    )
    resp = float(mwr.get("response_us_mean_mean", float("nan")))
    numbers = {
        "SixteenMaxThroughput": fg.num(chosen["throughput_ops_mean"]),
        "SixteenMaxThroughputRaw": fg.num(x_raw),
        "SixteenMaxClients": fg.num(chosen["clients_total"]),
        "SixteenMaxWorkers": fg.num(chosen["workers"]),
        "SixteenMaxTolerance": fg.num(100 * MAX_TOLERANCE),
        "SixteenMaxResponseMedian": ms(p.get("p50_mean")),
        "SixteenMaxResponseNinety": ms(p.get("p90_mean")),
        "SixteenMaxQueueShare": fg.pct(float(mwr.get("queue_us_mean_mean", "nan")) / resp),
        "SixteenMaxServerShare": fg.pct(float(mwr.get("server_us_mean_mean", "nan")) / resp),
        # Like with like: our highest at the original's pool size against its maximum there.
        "SixteenMaxRatio": fg.pct(
            float(at_ref["throughput_ops_mean"]) / mx["throughput_ops"]
            if at_ref is not None
            else nan
        ),
        "SixteenMaxLikeSentence": like_sentence(best, mx),
        "SixteenMaxPeakWorkers": fg.num(peak_t),
        "SixteenMaxPeakThroughput": fg.num(peak["throughput_ops_mean"]),
        "SixteenMaxPeakClients": fg.num(peak["clients_total"]),
        "SixteenMaxPeakRatio": fg.pct(peak["throughput_ops_mean"] / mx["throughput_ops"]),
        "SixteenMaxThreadsSentence": threads_sentence(best, mx, MAX_TOLERANCE),
        "SixteenMaxCpuSentence": cpu_sentence(raw_points),
        "SixteenMaxWaitSentence": wait_sentence(pct, pool_requests, ok, client, mx, b),
        "SixteenOrigMaxThroughput": fg.num(mx["throughput_ops"]),
        "SixteenOrigMaxClients": fg.num(mx["clients"]),
        "SixteenOrigMaxThreads": fg.num(mx["threads_per_pool"]),
        "SixteenOrigServers": fg.num(mx["servers"]),
        "SixteenOrigReadThreads": fg.num(mx["servers"] * mx["threads_per_pool"]),
        "SixteenMaxQueueMedian": ms(part["queue"].get("p50")),
        "SixteenMaxQueueNinety": ms(part["queue"].get("p90")),
        "SixteenMaxServerMedian": ms(part["server"].get("p50")),
        "SixteenMaxServerNinety": ms(part["server"].get("p90")),
        "SixteenMaxGrid": (
            f"{fg.counted(client['workers'].nunique(), 'pool size')} and"
            f" {fg.counted(client['clients_total'].nunique(), 'client count')},"
            f" {fg.counted(client['point'].nunique(), 'point')} in all"
        ),
        **gamma_numbers(fits, ref["figures"]),
        **sides,
    }
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
