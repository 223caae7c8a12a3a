"""Snakemake script of rule validation: checks every run and writes the appendix table.

Per run (client side, every request type together, stable window): the coefficient of
variation of the window throughputs, the interactive response time law's relative error
(X against N/R with no think time, as the clients are closed-loop), and how close the
throughput came to the bandwidth bound of the measured link capacities. Runs that fail a
check are flagged, never dropped.
"""

import math
from pathlib import Path

import pandas as pd

from analysis.latex import escape
from analysis.validate import bandwidth_bound, interactive_law, message_sizes, set_share

CV_LIMIT = 0.10  # stable window: throughput varies by at most 10 % between windows
LAW_LIMIT = 0.10  # interactive law: predicted and measured throughput within 10 %
NEAR_BOUND = 0.90  # a run above 90 % of its bandwidth bound is link-limited
MEMTIER_KEY_BYTES = 12  # "memtier-" and the key index


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
        int(key) if pd.notna(key) else MEMTIER_KEY_BYTES,
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


def check(runs: pd.DataFrame, manifests: pd.DataFrame, family: str) -> pd.DataFrame:
    client = runs[(runs["side"] == "client") & (runs["type"] == "all")] if "side" in runs else runs
    rows = []
    for _, manifest in manifests.iterrows():
        measured = client[client["run"] == manifest["run"]]
        row = {
            "family": family,
            "run": manifest["run"],
            "status": manifest["status"],
            "error": manifest.get("error"),
            "throughput_ops": math.nan,
            "throughput_cv": math.nan,
            "law_error": math.nan,
            "bound_ops": math.nan,
        }
        if manifest["status"] == "ok" and not measured.empty:
            m = measured.iloc[0]
            row["throughput_ops"] = float(m["throughput_ops"])
            row["throughput_cv"] = float(m["throughput_cv"])
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
        if pd.notna(r["throughput_cv"]) and r["throughput_cv"] > CV_LIMIT:
            f.append("unstable")
        if pd.notna(r["law_error"]) and abs(r["law_error"]) > LAW_LIMIT:
            f.append("law")
        if pd.notna(r["bound_fraction"]) and r["bound_fraction"] > NEAR_BOUND:
            f.append("at bound")
        flags.append(", ".join(f))
    out["flags"] = flags
    out["flagged"] = out["flags"].str.contains("failed|unstable|law")
    return out


def _short(run: str) -> str:
    """family/point/repN as the point's level values and the repetition."""
    _, point, rep = run.split("/")
    values = [part.split("=", 1)[1] for part in point.split(",")]
    return escape(" ".join(values)) + f" r{rep.removeprefix('rep')}"


def _num(value: float, fmt: str) -> str:
    return "--" if pd.isna(value) else format(value, fmt)


def render(table: pd.DataFrame) -> str:
    """One block per family; the point column wraps, so long level names never overflow."""
    lines = [
        r"\begin{longtable}{@{}p{0.44\textwidth}rrrrp{0.15\textwidth}@{}}",
        r"\caption{Validation of every run: client throughput over the stable window, its "
        r"coefficient of variation between windows, the relative error of the interactive "
        r"law, and the share of the bandwidth bound reached. Flagged runs stay in the "
        r"analysis.}\label{tab:validation}\\",
        r"\toprule",
        r"Point and repetition & X [ops/s] & CV & Law err. & Bound & Flags \\",
        r"\midrule",
        r"\endfirsthead",
        # Pages after the first repeat the header, not the caption (nor its label).
        r"\caption[]{Validation of every run (continued).}\\",
        r"\toprule",
        r"Point and repetition & X [ops/s] & CV & Law err. & Bound & Flags \\",
        r"\midrule",
        r"\endhead",
    ]
    for family, rows in table.groupby("family", sort=True):
        lines.append(rf"\multicolumn{{6}}{{@{{}}l}}{{\texttt{{{escape(str(family))}}}}} \\")
        for _, r in rows.iterrows():
            lines.append(
                rf"\quad {_short(r['run'])} & "
                rf"{_num(r['throughput_ops'], '.0f')} & {_num(r['throughput_cv'], '.3f')} & "
                rf"{_num(r['law_error'], '+.3f')} & {_num(r['bound_fraction'], '.2f')} & "
                rf"{escape(r['flags'])} \\"
            )
    lines += [r"\bottomrule", r"\end{longtable}", ""]
    return "\n".join(lines)


def numbers(table: pd.DataFrame) -> str:
    ok = table[table["status"] == "ok"]
    macros = {
        "ValidationRuns": len(table),
        "ValidationFailed": int((table["status"] != "ok").sum()),
        "ValidationUnstable": int(table["flags"].str.contains("unstable").sum()),
        "ValidationLawViolations": int(table["flags"].str.contains("law").sum()),
        "ValidationAtBound": int(table["flags"].str.contains("at bound").sum()),
        "ValidationMedianCV": _num(ok["throughput_cv"].median(), ".3f"),
        "ValidationMaxLawError": _num(ok["law_error"].abs().max(), ".3f"),
        "ValidationCVLimit": f"{CV_LIMIT:g}",
        "ValidationLawLimit": f"{LAW_LIMIT:g}",
        "ValidationNearBound": f"{NEAR_BOUND:g}",
    }
    return "".join(rf"\newcommand{{\{k}}}{{{v}}}" + "\n" for k, v in macros.items())


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    parts = []
    for runs_path, manifests_path in zip(sm.input.runs, sm.input.manifests, strict=True):
        family = Path(runs_path).parent.name
        parts.append(check(pd.read_parquet(runs_path), pd.read_parquet(manifests_path), family))
    table = pd.concat(parts, ignore_index=True)
    table.to_parquet(sm.output.table, index=False)
    Path(sm.output.tex).write_text(render(table))
    Path(sm.output.numbers).write_text(numbers(table))
