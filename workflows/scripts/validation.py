"""Snakemake script of rule validation: checks every run and writes the appendix table.

Per run (client side, every request type together, measured windows): the stability check
of analysis.stability (windows, trend, precision of the mean), the interactive response
time law's relative error (X against N/R with no think time, as the clients are
closed-loop: a check of the bookkeeping of N, X and R, not of stability), and how close the
throughput came to the bandwidth bound of the measured link capacities. Flagged runs are
listed; failed and unstable runs are marked `excluded` (from model fits).
"""

import math
from pathlib import Path

import pandas as pd

from analysis import stability
from analysis.bottleneck import SATURATED
from analysis.latex import escape
from analysis.linkload import DEFAULT_KEY_BYTES
from analysis.validate import (
    LAW_TOLERANCE,
    bandwidth_bound,
    interactive_law,
    message_sizes,
    set_share,
)

LAW_LIMIT = LAW_TOLERANCE  # interactive law: predicted and measured throughput within it
NEAR_BOUND = SATURATED  # a run at this share of its bandwidth bound or more is link-limited


def _bound(row: pd.Series) -> float:
    capacity = {
        role: float(row[f"link_{role}_mbit"])
        for role in ("client", "middleware", "server")
        if f"link_{role}_mbit" in row and pd.notna(row[f"link_{role}_mbit"])
    }
    if not capacity:
        return math.nan
    key = row.get("workload.key_size")
    multiget = int(row.get("workload.multiget") or 0)
    multiget = multiget if multiget > 1 else 0
    servers = int(row["servers"])
    middlewares = int(row["middlewares"])
    # A sharded multi-get asks every server for its share of the keys, one part each.
    flag = row.get("middleware.sharded")
    sharded = middlewares > 0 and multiget > 0 and pd.notna(flag) and bool(flag)
    sizes = message_sizes(
        int(row["workload.data_size"]),
        int(key) if pd.notna(key) else DEFAULT_KEY_BYTES,
        multiget,
        parts=min(multiget, servers) if sharded else 1,
    )
    replication = row.get("middleware.replication")
    machines = {"client": int(row["client_machines"]), "server": servers}
    if middlewares:
        machines["middleware"] = middlewares
    return bandwidth_bound(
        capacity,
        machines,
        sizes,
        set_share(row["workload.ratio"], multiget),
        replication=int(replication) if pd.notna(replication) else servers,
        servers=servers,
        via_middleware=middlewares > 0,
    ).bound


def check(
    runs: pd.DataFrame, manifests: pd.DataFrame, family: str, windows: pd.DataFrame
) -> pd.DataFrame:
    """One row per run of a family: `runs` and `manifests` as family_data writes them,
    `windows` its measured (trimmed) tidy windows."""
    client = runs[(runs["side"] == "client") & (runs["type"] == "all")] if "side" in runs else runs
    checked = stability.stability_table(windows).set_index("run")
    rows = []
    for _, manifest in manifests.iterrows():
        measured = client[client["run"] == manifest["run"]]
        row = {
            "family": family,
            "run": manifest["run"],
            "status": manifest["status"],
            "error": manifest.get("error"),
            "throughput_ops": math.nan,
            "stable": False,
            "stability": "",
            "windows": 0,
            "trend_p": math.nan,
            "rel_half_width": math.nan,
            "law_error": math.nan,
            "bound_ops": math.nan,
        }
        if manifest["status"] == "ok" and not measured.empty:
            m = measured.iloc[0]
            row["throughput_ops"] = float(m["throughput_ops"])
            if manifest["run"] in checked.index:
                verdict = checked.loc[manifest["run"]]
                row["stable"] = bool(verdict["stable"])
                row["stability"] = str(verdict["reason"])
                row["windows"] = int(verdict["windows"])
                row["trend_p"] = float(verdict["trend_p"])
                row["rel_half_width"] = float(verdict["rel_half_width"])
            else:
                row["stability"] = "no complete client windows"
            if m["throughput_ops"] > 0 and pd.notna(m["response_us_mean"]):
                law = interactive_law(
                    int(manifest["clients_total"]),
                    float(m["throughput_ops"]),
                    float(m["response_us_mean"]) / 1e6,
                )
                row["law_error"] = law.relative_error
            row["bound_ops"] = _bound(manifest)
        rows.append(row)
    out = pd.DataFrame(rows)
    out["bound_fraction"] = out["throughput_ops"] / out["bound_ops"]
    flags = []
    for _, r in out.iterrows():
        f = []
        if r["status"] != "ok":
            f.append("failed")
        if r["status"] == "ok" and not r["stable"]:
            f.append("unstable")
        if pd.notna(r["law_error"]) and abs(r["law_error"]) > LAW_LIMIT:
            f.append("law")
        if pd.notna(r["bound_fraction"]) and r["bound_fraction"] >= NEAR_BOUND:
            f.append("at bound")
        flags.append(", ".join(f))
    out["flags"] = flags
    out["flagged"] = out["flags"].str.contains("failed|unstable|law")
    # The stated rule: what is still failed or unstable after the reruns stays out of fits.
    out["excluded"] = (out["status"] != "ok") | ~out["stable"]
    return out


def _short(run: str) -> str:
    """family/point/repN as the point's level values and the repetition."""
    _, point, rep = run.split("/")
    values = [part.split("=", 1)[1] for part in point.split(",")]
    return escape(" ".join(values)) + f" r{rep.removeprefix('rep')}"


def _num(value: float, fmt: str) -> str:
    return "--" if pd.isna(value) else format(value, fmt)


def _percent(value: float) -> str:
    return "--" if pd.isna(value) else rf"{100 * value:.1f}\,\%"


_HEADER = (
    r"Point and repetition & X [ops/s] & Win. & Trend $p$ & CI $\pm$ & Law err. & Bound & "
    r"Flags \\"
)


def render(table: pd.DataFrame) -> str:
    """One block per family; the point column wraps, so long level names never overflow."""
    lines = [
        r"\setlength{\tabcolsep}{4pt}",
        r"\begin{longtable}{@{}p{0.32\textwidth}rrrrrrp{0.12\textwidth}@{}}",
        r"\caption{Validation of every run: client throughput over the measured windows, "
        r"their number, the $p$-value of the trend test, the half-width of the "
        r"\CILevel{} confidence interval of the mean over the mean, the relative "
        r"error of the interactive law, and the share of the bandwidth bound reached. "
        r"Unstable and failed runs are left out of their point's statistics.}"
        r"\label{tab:validation}\\",
        r"\toprule",
        _HEADER,
        r"\midrule",
        r"\endfirsthead",
        # Pages after the first repeat the header, not the caption (nor its label).
        r"\caption[]{Validation of every run (continued).}\\",
        r"\toprule",
        _HEADER,
        r"\midrule",
        r"\endhead",
    ]
    for family, rows in table.groupby("family", sort=True):
        lines.append(rf"\multicolumn{{8}}{{@{{}}l}}{{\texttt{{{escape(str(family))}}}}} \\")
        for _, r in rows.iterrows():
            lines.append(
                rf"\quad {_short(r['run'])} & "
                rf"{_num(r['throughput_ops'], '.0f')} & {r['windows']} & "
                rf"{_num(r['trend_p'], '.2f')} & {_percent(r['rel_half_width'])} & "
                rf"{_num(r['law_error'], '+.3f')} & {_num(r['bound_fraction'], '.2f')} & "
                rf"{escape(r['flags'])} \\"
            )
    lines += [r"\bottomrule", r"\end{longtable}", ""]
    return "\n".join(lines)


def _whole_percent(value: float) -> str:
    return rf"{100 * value:g}\,\%"


def numbers(table: pd.DataFrame) -> str:
    ok = table[table["status"] == "ok"]
    stable_share = ok["stable"].mean() if len(ok) else math.nan
    macros = {
        "ValidationRuns": len(table),
        "ValidationFailed": int((table["status"] != "ok").sum()),
        "ValidationUnstable": int(table["flags"].str.contains("unstable").sum()),
        "ValidationExcluded": int(table["excluded"].sum()),
        "ValidationStableShare": _percent(stable_share),
        "ValidationLawViolations": int(table["flags"].str.contains("law").sum()),
        "ValidationAtBound": int(table["flags"].str.contains("at bound").sum()),
        "ValidationMedianWindows": _num(ok["windows"].median(), ".0f"),
        "ValidationMedianHalfWidth": _percent(ok["rel_half_width"].median()),
        "ValidationMaxLawError": _num(ok["law_error"].abs().max(), ".3f"),
        "ValidationMinWindows": str(stability.MIN_WINDOWS),
        "ValidationMinBatches": str(stability.MIN_BATCHES),
        "ValidationTrendAlpha": f"{stability.TREND_ALPHA:g}",
        "ValidationMaxHalfWidth": _whole_percent(stability.MAX_REL_HALF_WIDTH),
        "ValidationLawLimit": f"{LAW_LIMIT:g}",
        "ValidationNearBound": f"{NEAR_BOUND:g}",
    }
    return "".join(rf"\newcommand{{\{k}}}{{{v}}}" + "\n" for k, v in macros.items())


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    parts = []
    inputs = zip(sm.input.runs, sm.input.manifests, sm.input.windows, strict=True)
    for runs_path, manifests_path, windows_path in inputs:
        runs, manifests, windows = (
            pd.read_parquet(p) for p in (runs_path, manifests_path, windows_path)
        )
        parts.append(check(runs, manifests, Path(runs_path).parent.name, windows))
    table = pd.concat(parts, ignore_index=True)
    table.to_parquet(sm.output.table, index=False)
    Path(sm.output.tex).write_text(render(table))
    Path(sm.output.numbers).write_text(numbers(table))
