"""Snakemake script: the 2016 grid (servers × replication × writes) on both middleware
designs. Throughput and response time side by side, the busiest pool of each configuration,
and the sentences that say where each design's bottleneck sits."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.report import figures as fg
from analysis.scaling import in_study_time
from analysis.studies.s2016.designs import CONFIG, DESIGNS, SATURATED, comparison, sentences, wide
from analysis.studies.s2016.times import ok_runs

LABEL = {"2016": "2016 (per-server pools)", "2018": "2018 (one shared pool)"}


def figure(cmp: pd.DataFrame, path: str) -> None:
    configs = cmp.drop_duplicates(CONFIG)[CONFIG]
    names = [
        f"S={int(r.servers)}\n{r.level_replication}\n{r.level_writes}%"
        for r in configs.itertuples()
    ]
    fig, axes = fg.figure(ncols=2, height=3.0)
    x = np.arange(len(configs))
    colours = fg.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, metric, scale, label in (
        (axes[0][0], "throughput_ops_mean", 1.0, "throughput at the clients (ops/s), study time"),
        (
            axes[0][1],
            "response_us_mean_mean",
            1e-3,
            "response time at the clients (ms), study time",
        ),
    ):
        for j, design in enumerate(DESIGNS):
            d = configs.merge(cmp[cmp["level_design"] == design], on=CONFIG, how="left")
            ax.bar(x + (j - 0.5) * 0.4, d[metric].to_numpy(float) * scale, width=0.4,
                   color=colours[j], label=LABEL[design])  # fmt: skip
        ax.set_xticks(x, names, fontsize=6)
        ax.set_ylabel(label)
        ax.legend(fontsize=6)
    fg.save(fig, path)


def table(w: pd.DataFrame) -> str:
    rows = []
    for _, r in w.iterrows():
        rows.append(
            [
                str(int(r["servers"])),
                fg.escape(str(r["level_replication"])),
                fg.escape(str(r["level_writes"])),
                fg.num(r.get("throughput_ops_mean_2016")),
                fg.num(r.get("throughput_ops_mean_2018")),
                fg.pct(r.get("ratio"), 0),
                fg.num(r.get("response_us_mean_mean_2016", np.nan) / 1e3, 2),
                fg.num(r.get("response_us_mean_mean_2018", np.nan) / 1e3, 2),
                fg.escape(str(r.get("busiest_2016")))
                if isinstance(r.get("busiest_2016"), str)
                else fg.MISSING,
                fg.pct(r.get("busiest_fraction_2016"), 0),
                fg.pct(r.get("busy_read_2016"), 0),
                fg.pct(r.get("busy_write_2016"), 0),
                fg.pct(r.get("busy_shared_2018"), 0),
            ]
        )
    return fg.tabular(
        ["$S$", "Replication", "$w$ (\\%)", "$X_{2016}$", "$X_{2018}$", "ratio", "$R_{2016}$",
         "$R_{2018}$", "busiest", "busy", "read", "write", "shared"],
        rows,
        "rllrrrrrlrrrr",
    )  # fmt: skip


def main(sm) -> None:  # noqa: ANN001
    # Throughputs and times in the study's time, each row by its runs' scale.
    points = in_study_time(pd.read_parquet(sm.input.points))
    ok = ok_runs(pd.read_parquet(sm.input.runs))
    cmp = comparison(points, pd.read_parquet(sm.input.pools), ok)
    figure(cmp, sm.output.figure)
    w = wide(cmp)
    fg.write(sm.output.table, table(w))
    mw = pd.read_parquet(sm.input.middlewares)
    threads = mw[mw["run"].isin(ok)].drop_duplicates("design").set_index("design")
    text = sentences(w)
    numbers = {
        "SixteenDesignsConfigs": fg.num(len(w)),
        "SixteenDesignsThroughputSentence": text["Throughput"],
        "SixteenDesignsBottleneckSixteen": text["BottleneckSixteen"],
        "SixteenDesignsBottleneckEighteen": text["BottleneckEighteen"],
        "SixteenDesignsSaturated": fg.pct(SATURATED, 0),
        "SixteenDesignsWorkers": fg.num(points["middleware.workers"].iloc[0])
        if len(points)
        else fg.MISSING,
        "SixteenDesignsReadThreads": fg.num(threads["threads_read"].get("2016", np.nan)),
        "SixteenDesignsWriteThreads": fg.num(threads["threads_write"].get("2016", np.nan)),
    }
    Path(sm.output.numbers).write_text(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
