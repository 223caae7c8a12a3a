"""Snakemake script: the 2016 write-ratio family. Throughput against the share of writes,
and the table of throughput change relative to the base case (1 % writes), beside the
original study's Table 4."""

import json
from pathlib import Path

import pandas as pd
import yaml

from analysis.report import figures as fg
from analysis.report.tables2016 import relative_change

KEYS = ["servers", "level_replication", "level_writes"]


def figure(points: pd.DataFrame, path: str) -> None:
    d = points.copy()
    d["writes"] = d["level_writes"].astype(float)
    d["config"] = "S=" + d["servers"].astype(str) + ", R=" + d["level_replication"]
    fig, axes = fg.figure(width=6.4, height=3.0)
    ax = axes[0][0]
    fg.error_lines(ax, d, "writes", "throughput_ops", series="config")
    ax.set_xlabel("writes (%)")
    ax.set_ylabel("throughput, all requests (ops/s)")
    ax.set_xticks(sorted(d["writes"].unique()))
    ax.legend(fontsize=6, ncols=2)
    fg.save(fig, path)


def main(sm) -> None:  # noqa: ANN001
    reference = yaml.safe_load(Path(sm.input.reference).read_text())
    ref, design = reference["writes_change_percent"], reference["design"]["writes"]
    points = pd.read_parquet(sm.input.points)
    points = points[points["type"] == "all"].copy()
    figure(points, sm.output.figure)

    client = points[points["side"] == "client"].reset_index(drop=True)
    lowest = sorted(client["level_writes"].unique(), key=float)[0]
    client["same"] = relative_change(client, "throughput_ops_mean", KEYS, {"level_writes": lowest})
    base = {
        "servers": ref["base"]["servers"],
        "level_replication": ref["base"]["replication"],
        "level_writes": ref["base"]["writes"],
    }
    client["global"] = relative_change(client, "throughput_ops_mean", KEYS, base)
    writes = sorted(set(client["level_writes"]) | set(ref["values"][3]["none"]), key=float)
    # Every configuration of ours or of the original, so the original's rows always show.
    pairs = {
        (int(s), str(r))
        for s, r in zip(client["servers"], client["level_replication"], strict=True)
    }
    pairs |= {(int(s), str(r)) for s, by_r in ref["values"].items() for r in by_r}
    configs = pd.DataFrame(sorted(pairs), columns=["servers", "level_replication"])
    configs = configs.sort_values(["servers", "level_replication"], ascending=[True, False])
    header = ["", ""] + [rf"\multicolumn{{3}}{{c}}{{{w}\,\% writes}}" for w in writes]
    rules = " ".join(rf"\cmidrule(lr){{{3 + 3 * i}-{5 + 3 * i}}}" for i in range(len(writes)))
    sub = ["$S$", "$R$"] + ["same", "base", "orig."] * len(writes)
    rows = []
    for _, c in configs.iterrows():
        s, r = int(c["servers"]), c["level_replication"]
        row = [str(s), r]
        for w in writes:
            m = client[
                (client["servers"] == s)
                & (client["level_replication"] == r)
                & (client["level_writes"] == w)
            ]
            orig = ref["values"].get(s, {}).get(r, {}).get(w)
            row += [
                fg.num(m["same"].iloc[0], 1) if len(m) else fg.MISSING,
                fg.num(m["global"].iloc[0], 1) if len(m) else fg.MISSING,
                fg.num(orig, 1) if orig is not None else fg.MISSING,
            ]
        rows.append(row)
    spec = "rl" + "rrr" * len(writes)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering\small",
        r"\caption{Throughput change (\%, all requests, measured at the clients) when the "
        r"share of writes grows. \emph{same}: relative to 1\,\% writes with the same $S$ and "
        r"$R$; \emph{base}: relative to the original's single base case (3 servers, no "
        rf"replication, 1\,\% writes); \emph{{orig.}}: the original's values ({ref['table']}"
        r" of the 2016 study, relative to that base case).}\label{tab:sixteen-writes}",
        r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        rules,
        " & ".join(sub) + r" \\",
        r"\midrule",
        *[" & ".join(r) + r" \\" for r in rows],
        r"\bottomrule",
        r"\end{tabular}}",
        r"\end{table}",
        "",
    ]
    fg.write(sm.output.table, "\n".join(lines))

    changed = client[client["level_writes"] != lowest]
    if changed["same"].notna().any():
        worst = changed.loc[changed["same"].abs().idxmax()]
        sentence = (
            f"The change furthest from zero against the same configuration's base case is "
            f"{fg.num(worst['same'], 1)}\\,\\% ($S={int(worst['servers'])}$, "
            f"replication {worst['level_replication']}, {worst['level_writes']}\\,\\% writes)."
        )
    else:
        sentence = "There are not enough levels of the share of writes for a change."
    numbers = {
        "SixteenOrigWritesServers": ", ".join(str(v) for v in design["servers"]),
        "SixteenOrigWritesWrites": (
            ", ".join(str(v) for v in design["writes_percent"])
            if isinstance(design["writes_percent"], list)
            else str(design["writes_percent"])
        ),
        "SixteenOrigWritesClients": fg.num(design["clients"]),
        "SixteenOrigWritesThreads": fg.num(design["threads_per_pool"]),
        "SixteenWritesPoints": fg.num(client["point"].nunique()),
        "SixteenWritesLevels": ", ".join(fg.levels_sorted(client["level_writes"])),
        "SixteenWritesServers": ", ".join(str(v) for v in fg.levels_sorted(client["servers"])),
        "SixteenWritesBase": fg.num(float(lowest)),
        "SixteenWritesWorstSentence": sentence,
        "SixteenWritesWorkers": fg.num(client["middleware.workers"].iloc[0]),
        "SixteenWritesClients": fg.num(client["clients_total"].iloc[0]),
    }
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


main(snakemake)  # type: ignore[name-defined]  # noqa: F821
