"""The closed network of the baseline with middlewares (analysis.studies.s2018.mva_middleware)
as the report shows it: its predictions beside the measurements, its service times and
capacities, its components beside seed 004's Table 14, and the two reports' errors and
bottlenecks beside ours."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import pandas as pd

from analysis.models import mva
from analysis.models import validity as vd
from analysis.report import figures as fg
from analysis.studies.s2018 import mva_middleware as mw
from analysis.studies.s2018 import seed as seed2018
from analysis.studies.s2018.macros import camel

SETUPS = ("one_middleware", "two_middlewares")
WORKLOADS = ("read-only", "write-only")
# The model's throughput beside the measured one per client point (also written as data).
DATA_COLUMNS = [
    "setup",
    "workload",
    "point",
    "clients",
    "x_model",
    "x_measured",
    "x_measured_raw",
    "scale",
    "bottleneck",
    # Per setup and workload (analysis.models.validity): the error at the fewest clients,
    # whether the network is valid here (else it judges no claim), and why not.
    "lightest_error",
    "valid",
    "validity_reason",
    # Whether every check but the lightest load's accuracy holds (validity.in_domain).
    "in_domain",
]
MVA_HEADER = ["setup", "workload", "N", "X MVA", "X meas.", "raw"]
MVA_HEADER += ["R MVA [ms]", "R meas. [ms]", "bottleneck"]
PARAM_HEADER = ["setup", "workload", "WT", "S network", "S net-thr.", "S worker", "S memc."]
PARAM_HEADER += ["cap. net-thr.", "cap. workers", "cap. memc.", "bottleneck"]
COMP_HEADER = ["workload", "N (seed)", "component", "U", "seed", "R [ms]", "seed", "Q", "seed"]
SEEDS_HEADER = ["setup", "workload", "N", "ours: error", "bottleneck", "seed 004: error"]
SEEDS_HEADER += ["bottleneck", "seed 002: bottleneck"]


class MvaTables(NamedTuple):
    """The tables (LaTeX), the model's throughput per point and the macros."""

    mva: str
    util: str
    comp_one: str
    comp_two: str
    seeds: str
    data: pd.DataFrame
    numbers: list[str]


def component_rows(side: pd.DataFrame, workload: str) -> list[list[str]]:
    """Rows of a Table 14 beside ours (mw.beside_seed), each client count's heading once."""
    rows = []
    last = None
    for _, r in side.iterrows():
        head = (workload, r["clients"])
        shown = [workload, f"{r['clients']} ({r['seed_clients']})"] if head != last else ["", ""]
        last = head
        rows.append(
            [
                *shown,
                r["component"],
                *(fg.num(r[m + s], 2) for m in mw.METRICS for s in ("", "_seed")),
            ]
        )
    return rows


def tables(
    fitted: Mapping[tuple[str, str], mw.Fit], raw_x: pd.Series, full_ref: Mapping
) -> MvaTables:
    """The MVA tables (service times and capacities, predictions, components beside seed
    004's Table 14, the two reports' errors and bottlenecks) of the fitted networks
    (mw.fit); `raw_x`: the measured throughput by (point, side, type)."""
    ref = full_ref["models"]
    seed_comp = ref["mva_components"]
    targets = [int(c) for c in seed_comp["clients"]]
    all_clients = {int(n) for f in fitted.values() for n in f.client["clients_total"]}
    chosen = mw.nearest_clients(all_clients, targets)
    numbers = [
        fg.macro(camel("ModelCompClients", t), str(chosen[i]) if i < len(chosen) else fg.MISSING)
        for i, t in enumerate(targets)
    ]
    mva_rows, param_rows, mva_data = [], [], []
    comp_tables: dict[str, list[list[str]]] = {s: [] for s in SETUPS}
    verdicts: list[bool] = []
    macros = _unmeasured_macros()
    for (setup, workload), f in sorted(fitted.items()):
        key = camel("Model", setup, workload)
        times = f.times
        label = [setup.replace("_", " "), workload]
        solved = _solved(f, setup, workload, raw_x)
        comp = [mw.components(x.res).assign(clients=x.row["clients"]) for x in solved]
        data = [x.row for x in solved]
        mva_rows += [_mva_row(label, x) for x in solved]
        judged = judge(f, data)
        verdicts.append(judged.valid)
        macros[f"{key}LightestError"] = fg.pct(judged.lightest_error)
        macros[f"{key}LightestClients"] = str(min(r["clients"] for r in data))
        macros[f"{key}ValidCase"] = "valid" if judged.valid else "invalid"
        for row in data:
            row.update(
                lightest_error=judged.lightest_error,
                valid=judged.valid,
                validity_reason=judged.reason,
                in_domain=judged.in_domain,
            )
        mva_data += data
        # The table's bottleneck is the one at the most clients: the last point's.
        res = solved[-1].res
        cap = times.capacities(f.workers, f.middlewares)
        param_rows.append(_param_row(label, f, cap, res))
        macros[f"{key}Bottleneck"] = fg.escape(mw.bottleneck(res))
        macros[f"{key}X"] = fg.num(res.throughput)
        for part, c in CAPACITY_PARTS:
            macros[f"{key}Capacity{part}"] = fg.num(cap[c])
        side = mw.beside_seed(pd.concat(comp), seed_comp[setup][workload], targets, chosen)
        side = side[side["component"] != "clients"]  # Z = 0: it holds no job; not in Table 14
        comp_tables[setup] += component_rows(side, workload)
    for setup in SETUPS:
        read, write = (macros[f"{camel('Model', setup, w)}Bottleneck"] for w in WORKLOADS)
        macros[f"{camel('Model', setup)}BottleneckPhrase"] = mw.bottleneck_phrase(read, write)
    # `all`, `some` or `none` of the fitted networks valid (analysis.models.validity).
    case = "all" if all(verdicts) else "some" if any(verdicts) else "none"
    macros["ModelMvaValidCase"] = case if verdicts else "unjudged"
    macros["ModelMvaTolerance"] = fg.pct(vd.TOLERANCE, 0)
    numbers += [fg.macro(k, v) for k, v in macros.items()]
    comp_one, comp_two = (
        fg.tabular(COMP_HEADER, comp_tables[setup], "lll" + "r" * 6) for setup in SETUPS
    )
    seeds, seeds_numbers = seeds_beside(full_ref, mva_data)
    numbers += seeds_numbers
    numbers.append(fg.macro("ModelMvaCases", str(len(param_rows))))
    return MvaTables(
        mva=fg.tabular(MVA_HEADER, mva_rows, "llrrrrrrl"),
        util=fg.tabular(PARAM_HEADER, param_rows, "llr" + "r" * 7 + "l"),
        comp_one=comp_one,
        comp_two=comp_two,
        seeds=seeds,
        data=pd.DataFrame(mva_data, columns=DATA_COLUMNS),
        numbers=numbers,
    )


# The stations whose capacities the macros name: (macro part, station).
CAPACITY_PARTS = (("NetThread", "net-thread"), ("Workers", "workers"), ("Memcached", "memcached"))


def _param_row(label: list[str], f: mw.Fit, cap: dict[str, float], res: Any) -> list[str]:
    """One row of the service-times table: the workers, each station's service time (µs),
    the capacities (`cap`) and the bottleneck at the most clients (`res`)."""
    times = f.times
    return [
        *label,
        str(f.workers),
        *(fg.num(t * 1e6, 1) for t in (times.network, times.netthread, times.worker)),
        fg.num(times.server * 1e6, 1),
        *(fg.num(cap[c]) for c in ("net-thread", "workers", "memcached")),
        fg.escape(mw.bottleneck(res)),
    ]


def _unmeasured_macros() -> dict[str, str]:
    """Every setup's and workload's macros as they read without a fitted network."""
    macros: dict[str, str] = {}
    for setup in SETUPS:
        for workload in WORKLOADS:
            key = camel("Model", setup, workload)
            macros[f"{key}Bottleneck"] = "n/a (no points)"
            macros[f"{key}X"] = fg.MISSING
            macros[f"{key}LightestError"] = fg.MISSING
            macros[f"{key}LightestClients"] = fg.MISSING
            macros[f"{key}ValidCase"] = "unjudged"
            for part, _ in CAPACITY_PARTS:
                macros[f"{key}Capacity{part}"] = fg.MISSING
    return macros


class _Solved(NamedTuple):
    """The fitted network at one measured client count: its row of DATA_COLUMNS (before its
    validity), the MVA's result and the measured mean response time (ms)."""

    row: dict[str, Any]
    res: Any
    response_ms: float


def _solved(f: mw.Fit, setup: str, workload: str, raw_x: pd.Series) -> list[_Solved]:
    """The fitted network solved at each measured client count, by client count."""
    out = []
    for _, c in f.client.iterrows():
        n = int(c["clients_total"])
        res = mva.solve(f.network, n)
        row = {
            "setup": setup,
            "workload": workload,
            "point": c["point"],
            "clients": n,
            "x_model": res.throughput,
            "x_measured": float(c["throughput_ops_mean"]),
            "x_measured_raw": float(raw_x.get((c["point"], "client", "all"), math.nan)),
            "scale": float(c["scale"]),
            "bottleneck": mw.bottleneck(res),
        }
        out.append(_Solved(row, res, float(c["response_us_mean_mean"]) / 1e3))
    return out


def _mva_row(label: list[str], s: _Solved) -> list[str]:
    """One row of the predictions table: the model's and the measured throughput (in the
    study's time and raw) and response time, and the model's bottleneck."""
    return [
        *label,
        str(s.row["clients"]),
        fg.num(s.res.throughput),
        fg.num(s.row["x_measured"]),
        fg.num(s.row["x_measured_raw"]),
        fg.num(s.res.response_time * 1e3, 2),
        fg.num(s.response_ms, 2),
        fg.escape(mw.bottleneck(s.res)),
    ]


def judge(f: mw.Fit, rows: list[dict]) -> vd.Validity:
    """The validity of one fitted network from its rows of DATA_COLUMNS: its throughput
    error at the fewest clients, and memcached's service time free of the round trip (the
    network between clients and middleware is a delay centre by construction)."""
    if not rows:
        return vd.judge("MVA", math.nan, "")
    low = min(rows, key=lambda r: r["clients"])
    return vd.judge(
        "MVA",
        vd.relative_error(low["x_model"], low["x_measured"]),
        str(low["point"]),
        (
            vd.delay_centre(False, f.times.network, "network"),
            vd.delay_centre(not f.server_from_direct, f.times.server, "memcached"),
        ),
    )


def seeds_beside(full_ref: Mapping, mva_data: list[dict]) -> tuple[str, list[str]]:
    """Our MVA's throughput error and bottleneck at the largest N beside seed 004's (Table 14,
    §7.3) and the bottleneck seed 002 states (`mva_data`: rows of DATA_COLUMNS); the tabular
    and its macros."""
    ref = full_ref["models"]
    cols = ["setup", "workload", "clients", "x_model", "x_measured", "bottleneck"]
    seeds_mva = seed2018.mva_beside(pd.DataFrame(mva_data, columns=cols), full_ref)
    rows = [
        [
            r["setup"].replace("_", " "),
            r["workload"],
            str(r["clients"]),
            fg.pct(r["ours_error"]),
            fg.escape(r["ours_bottleneck"]),
            fg.pct(r["seed004_error"]),
            fg.escape(r["seed004_bottleneck"]),
            fg.escape(r["seed002_bottleneck"]),
        ]
        for _, r in seeds_mva.iterrows()
    ]
    table = fg.tabular(SEEDS_HEADER, rows, "llrrlrll")
    by_key = seeds_mva.set_index(["setup", "workload"])
    numbers = []
    for setup in SETUPS:
        for workload in WORKLOADS:
            key = camel("Model", setup, workload)
            r = by_key.loc[(setup, workload)] if (setup, workload) in by_key.index else {}
            t4 = ref["mva"][setup][workload]
            numbers += [
                fg.macro(f"{key}StudyX", fg.num(t4["mva_x"])),
                fg.macro(f"{key}StudyMeasX", fg.num(t4["measured_x"])),
                fg.macro(f"{key}Error", fg.pct(r.get("ours_error", math.nan))),
                fg.macro(
                    f"{key}StudyError",
                    fg.pct(seed2018.relative_error(t4["mva_x"], t4["measured_x"])),
                ),
                fg.macro(f"{key}StudyBottleneck", fg.escape(ref["mva_bottleneck"][workload])),
                fg.macro(
                    f"{key}SeedTwoBottleneck",
                    fg.escape(full_ref["seed002"]["bottleneck"][setup][workload]),
                ),
            ]
    return table, numbers
