"""The 2016 design's queueing models set beside the measurements and seed 001 (Tables 1-3):
an M/M/1 of the system as one unit and an M/M/m with one server per read and write thread
at the maximum-throughput configuration; the M/M/m per number of servers of the replication
family without replication; the MVA network of read pools, write threads and memcached
servers over the maximum-throughput family's client counts and at one replication point.

Every model takes one family's tables already in the study's time (throughputs / s,
times * s by its runs' scale), so models are fitted, predict and are compared in one time
base, and returns the tabular body (captions are in the paper's source) and its numbers as
macro values; utilisations, queue lengths and relative errors do not depend on s. `report`
brings both families' raw tables into that time, runs every model and draws the MVA's
figure."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis import estimate, pools
from analysis.histograms import run_percentiles
from analysis.models import busy_period, queueing
from analysis.models import validity as vd
from analysis.report import figures as fg
from analysis.studies.s2016 import mmm as mmm2016
from analysis.studies.s2016 import mva as mva2016
from analysis.studies.s2016.study_time import family_tables
from analysis.studies.s2016.tables import (
    MAX_TOLERANCE,
    WORKERS,
    choose_max,
    in_get_windows,
    read_only_points,
)
from analysis.studies.s2016.times import averaged_runs

CURVE_POINTS = 25  # populations at which the MVA curves are drawn
BUSY_PERIODS = 200_000  # simulated busy periods of the seed's M/M/1 (about a second)
BUSY_SEED = 2016

Frames = dict[str, pd.DataFrame]

ROWS = [  # key, label, scale of our value (s to ms), digits
    ("servers", "Servers $m$", 1, 0),
    ("arrival_rate", "Arrival rate $\\lambda$ (ops/s)", 1, 0),
    ("service_rate", "Service rate $\\mu$ (ops/s, per server)", 1, 0),
    ("utilization", "Utilisation $\\rho$", 1, 3),
    ("mean_response_time", "Response time, mean (ms)", 1e3, 3),
    ("std_response_time", "Response time, std (ms)", 1e3, 3),
    ("response_time_q50", "Response time, 50\\,\\% quantile (ms)", 1e3, 3),
    ("response_time_q95", "Response time, 95\\,\\% quantile (ms)", 1e3, 3),
    ("mean_waiting_time", "Waiting time, mean (ms)", 1e3, 3),
    ("std_waiting_time", "Waiting time, std (ms)", 1e3, 3),
    ("mean_jobs_in_system", "Jobs in system, mean", 1, 2),
    ("std_jobs_in_system", "Jobs in system, std", 1, 2),
    ("mean_jobs_in_queue", "Jobs in queue, mean", 1, 2),
    ("std_jobs_in_queue", "Jobs in queue, std", 1, 2),
    ("prob_queueing", "Share of jobs that queue", 1, 3),
    ("mean_busy_period", "Busy period, mean (ms)", 1e3, 3),
    ("std_busy_period", "Busy period, std (ms)", 1e3, 3),
    ("mean_jobs_per_busy_period", "Jobs per busy period, mean", 1, 1),
    ("std_jobs_per_busy_period", "Jobs per busy period, std", 1, 1),
]

# The rows of seed 001's Table 2, with the inputs and the utilisation.
MMM_ROWS = {
    "servers",
    "arrival_rate",
    "service_rate",
    "utilization",
    "mean_response_time",
    "std_response_time",
    "mean_waiting_time",
    "std_waiting_time",
    "mean_jobs_in_system",
    "std_jobs_in_system",
    "mean_jobs_in_queue",
    "std_jobs_in_queue",
}

SEED_MVA_ROWS = [  # key, label, digits
    ("throughput", "Throughput (ops/s)", 0),
    ("throughput_get", "Throughput, GETs (ops/s)", 0),
    ("throughput_set", "Throughput, SETs (ops/s)", 0),
    ("response", "Response time at the clients (ms)", 2),
    ("response_get", "Response time, GETs (ms)", 2),
    ("response_set", "Response time, SETs (ms)", 2),
    ("read_response", "Read pool: queue and thread time per GET (ms)", 2),
    ("write_response", "Write thread: queue and thread time per SET (ms)", 2),
    ("util_read", "Read thread busy (holding included)", 2),
    ("util_write", "Write thread busy", 2),
]


@dataclass(frozen=True)
class Part:
    """One generated table: its tabular body and its numbers (macro name to LaTeX)."""

    tabular: str
    numbers: dict[str, str]
    # A model's prediction and the measurement beside it, at its point, for the findings:
    # name -> {point, model, measured, metric, side, label} (or a list of such).
    models: dict[str, Any] = field(default_factory=dict)


def _model_entry(
    point: str,
    model: float,
    measured: float,
    label: str,
    *,
    metric: str = "response_us_mean",
    side: str = "middleware",
) -> dict[str, Any]:
    """A model's value and the measurement it is compared with, in the same units."""
    return {"point": point, "model": float(model), "measured": float(measured),
            "metric": metric, "side": side, "label": label}  # fmt: skip


def timed_reads(d: Frames) -> Frames:
    """The read-only family's timed load: memaslap first sets keys through the middleware
    without timing them, so the middleware's side keeps its GETs and the windows that
    have some."""
    out = dict(d)
    if "windows" in d:
        w = d["windows"]
        for name in ("pools", "queue"):
            if name in d:
                out[name] = in_get_windows(d[name], w)
        out["windows"] = w[(w["side"] == "client") | (w["type"] == "get")]
    if "points" in d:
        out["points"] = read_only_points(d["points"]).assign(type="all")
    for name in ("pool_requests", "histograms"):
        if name in d:
            out[name] = d[name][d[name]["type"] == "get"]
    return out


def of_point(frame: pd.DataFrame, point: str, ok: set[str]) -> pd.DataFrame:
    return frame[(frame["point"] == point) & frame["run"].isin(ok)]


def stable_queue(queue: pd.DataFrame, windows: pd.DataFrame, point: str) -> pd.DataFrame:
    """The queue records of a point's stable middleware windows."""
    mw = windows[(windows["side"] == "middleware") & (windows["point"] == point)]
    return queue[queue["point"] == point].merge(
        mw[["run", "window"]].drop_duplicates(), on=["run", "window"]
    )


def _ms(value: float) -> str:
    """Milliseconds to three decimals; a wait that rounds to zero says how small it is."""
    if 0 < value < 0.0005:
        return "under 0.001"
    return fg.num(value, 3)


def _error(model: dict, measured: dict) -> float:
    m = measured.get("mean_response_time", math.nan)
    return (model.get("mean_response_time", math.nan) - m) / m if m else math.nan


def read_threads(pool_table: pd.DataFrame, point: str, ok: set[str]) -> int | None:
    """The read threads the middlewares of a point ran (its pool records: every read pool's
    threads, summed over servers and middlewares; the mean over runs); None without any."""
    f = of_point(pool_table, point, ok)
    f = f[f["pool"] == "read"]
    if f.empty:
        return None
    per_run = f.groupby(["run", "source", "server"])["threads"].max().groupby("run").sum()
    return round(float(per_run.mean()))


def valid_case(v: vd.Validity | None) -> str:
    """A model's validity for the prose: `valid`, `invalid` or `unjudged` (no model)."""
    return "unjudged" if v is None else "valid" if v.valid else "invalid"


@dataclass(frozen=True)
class OpenAt:
    """M/M/1 and M/M/m response times at one point of the read-only family, and the
    measured one (s)."""

    point: str
    mm1: float
    mmm: float
    measured: float
    rho: float  # the M/M/1's


def open_at(
    d: Frames, point: str, mu1: float, servers: int, workers: int, middlewares: int
) -> OpenAt:
    """The open models fitted as at the maximum-throughput point (μ of the M/M/1 the
    family's highest window) at another `point` of the family."""
    ok = averaged_runs(d["runs"])
    windows = d["windows"]
    at = of_point(windows, point, ok)
    mw = at[(at["side"] == "middleware") & (at["type"] != "all")]
    lam = estimate.arrival_rate(mw)
    requests = of_point(d["pool_requests"], point, ok)
    meas = mmm2016.measured(at, requests, stable_queue(d["queue"], at, point), lam)
    r1 = r2 = math.nan
    with contextlib.suppress(queueing.UnstableQueueError):
        r1 = queueing.mm1(lam, mu1).mean_response_time
    with contextlib.suppress(queueing.UnstableQueueError, ValueError):
        i = mmm2016.inputs(at, requests, servers, workers, middlewares)
        r2 = mmm2016.solve(i).mean_response_time
    return OpenAt(point, r1, r2, meas["mean_response_time"], lam / mu1)


def open_models(d: Frames, seed: dict) -> Part:
    """M/M/1 and M/M/m at the maximum-throughput configuration of the read-only family
    (`d`: its tables through `timed_reads`) beside seed 001's M/M/1 (`seed`)."""
    o = _open_point(d)
    results, unstable = _solve_open(o)
    mm1_valid, mmm_valid = _open_validity(d, o, results)
    mm1r, mmmr = results["mm1"], results["mmm"]
    measured, lam, mu1, inputs = o.measured, o.lam, o.mu1, o.inputs
    mm1_error, mmm_error = _error(mm1r, measured), _error(mmmr, measured)
    clients_n = float(o.chosen["clients_total"])
    rho1 = mm1r.get("utilization", lam / mu1)
    models = {}
    if "mean_response_time" in mm1r and measured.get("mean_response_time", 0) > 0:
        models["mm1"] = _model_entry(
            o.chosen["point"], mm1r["mean_response_time"], measured["mean_response_time"], "M/M/1"
        )
        models["mm1"]["validity"] = mm1_valid.to_dict()
        # The error the recipe's identity alone gives, beside the model's.
        models["mm1"]["identity_error"] = vd.identity_error(clients_n, rho1)
    numbers = {
        "SixteenMMOneLambda": fg.num(lam),
        # The same point's throughput as the clients measure it (the grid's and Table 1's).
        "SixteenMMOneClientThroughput": fg.num(o.chosen["throughput_ops_mean"]),
        "SixteenMMOneMu": fg.num(mu1),
        "SixteenMMOneRho": fg.num(mm1r.get("utilization", math.nan), 3),
        "SixteenMMOneResponse": fg.num(mm1r.get("mean_response_time", math.nan) * 1e3, 3),
        "SixteenMMOneResponseError": fg.pct(mm1_error),
        "SixteenMMOneLightestError": fg.pct(mm1_valid.lightest_error),
        "SixteenMMOneLightestClients": fg.num(o.lightest["clients_total"]),
        "SixteenMMOneValidCase": valid_case(mm1_valid),
        "SixteenMMOneIdentityError": fg.pct(vd.identity_error(clients_n, rho1)),
        "SixteenMMOneClients": fg.num(clients_n),
        # `restates`: the M/M/1's error at the point is N(1-rho)/rho, the recipe's algebra.
        "SixteenMMOneRecipeCase": "differs"
        if all(c.ok for c in mm1_valid.checks if c.name == "recipe_identity")
        else "restates",
        "SixteenMMmServers": fg.num(inputs.servers),
        "SixteenMMmMu": fg.num(inputs.service_rate),
        "SixteenMMmServiceTime": fg.num(inputs.service_time_us / 1e3, 3),
        "SixteenMMmRho": fg.num(mmmr.get("utilization", math.nan), 3),
        "SixteenMMmResponse": fg.num(mmmr.get("mean_response_time", math.nan) * 1e3, 3),
        "SixteenMMmResponseError": fg.pct(mmm_error),
        "SixteenMMmLightestError": fg.pct(mmm_valid.lightest_error),
        "SixteenMMmValidCase": valid_case(mmm_valid),
        **mmm_validity_numbers(mmm_valid, mmmr, measured),
        "SixteenMMmQueueing": fg.num(mmmr.get("prob_queueing", math.nan), 3),
        "SixteenMeasuredResponse": fg.num(measured["mean_response_time"] * 1e3, 3),
        "SixteenMeasuredWaiting": fg.num(measured["mean_waiting_time"] * 1e3, 3),
        "SixteenOpenUnstable": fg.num(len(unstable)),
        # For the caption: which model has no steady state, if any, and why.
        "SixteenOpenCase": "unstable" if unstable else "stable",
        "SixteenOpenUnstableModels": fg.escape("; ".join(unstable)),
        "SixteenSeedMMOneTable": fg.escape(seed["table"]),
        "SixteenSeedMMOneRatio": fg.num(
            seed["actual"]["mean_response_time"] / seed["predicted"]["mean_response_time"], 0
        ),
        "SixteenMMOneRatio": fg.num(
            measured["mean_response_time"] / mm1r.get("mean_response_time", math.nan), 0
        ),
        "SixteenSeedMMOneRho": fg.num(seed["arrival_rate"] / seed["service_rate"], 3),
        "SixteenSeedMMOneMeasuredRho": fg.num(seed["actual"]["utilization"], 2),
        **seed_busy_period(seed),
    }
    return Part(_open_table(results, measured, seed, inputs.servers), numbers, models)


@dataclass(frozen=True)
class _OpenPoint:
    """The open models' point: the chosen maximum (`chosen`, a client row), the fewest
    clients of its pool size (`lightest`), the arrival and one thread's service rate, the
    M/M/m's inputs and what was measured there, over the runs it averages (`ok`)."""

    chosen: pd.Series
    lightest: pd.Series
    ok: Any
    lam: float
    mu1: float
    inputs: Any
    measured: dict[str, float]


def _open_point(d: Frames) -> _OpenPoint:
    ok = averaged_runs(d["runs"])
    points, windows = d["points"], d["windows"]
    client = points[(points["side"] == "client") & (points["type"] == "all")]
    chosen = choose_max(client.rename(columns={WORKERS: "workers"}), MAX_TOLERANCE)
    point = chosen["point"]
    mw_win = windows[(windows["side"] == "middleware") & (windows["type"] != "all")]
    # λ from the runs the point's throughput averages, so both sides give the same load.
    lam = estimate.arrival_rate(of_point(mw_win, point, ok))
    mu1 = estimate.service_rate_max_window(mw_win)
    at = of_point(windows, point, ok)
    requests = of_point(d["pool_requests"], point, ok)
    inputs = mmm2016.inputs(
        at, requests, int(chosen["servers"]), int(chosen["workers"]), int(chosen["middlewares"])
    )
    measured = mmm2016.measured(at, requests, stable_queue(d["queue"], at, point), lam)
    pct = run_percentiles(of_point(d["histograms"], point, ok), windows, (0.5, 0.95))
    measured.update(
        arrival_rate=lam,
        response_time_q50=float(pct["p50"].mean()) / 1e6 if len(pct) else math.nan,
        response_time_q95=float(pct["p95"].mean()) / 1e6 if len(pct) else math.nan,
    )
    level = client[client[WORKERS] == chosen["workers"]].sort_values("clients_total")
    return _OpenPoint(chosen, level.iloc[0], ok, lam, mu1, inputs, measured)


def _solve_open(o: _OpenPoint) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Both models' results by name (empty where a model has no steady state, then named in
    the list with why)."""
    results: dict[str, dict[str, float]] = {}
    unstable = []
    for name, solve in (
        ("mm1", lambda: queueing.mm1(o.lam, o.mu1)),
        ("mmm", lambda: mmm2016.solve(o.inputs)),
    ):
        try:
            results[name] = mmm2016.flat(solve())
        except queueing.UnstableQueueError as err:
            results[name] = {}
            unstable.append(f"{'M/M/1' if name == 'mm1' else f'M/M/{o.inputs.servers}'}: {err}")
    results["mm1"]["servers"] = 1
    results["mmm"]["servers"] = o.inputs.servers
    return results, unstable


def _open_validity(
    d: Frames, o: _OpenPoint, results: dict[str, dict[str, float]]
) -> tuple[vd.Validity, vd.Validity]:
    """Both models' validity: each at the fewest clients of the chosen pool size, fitted the
    same way, with its inputs' checks."""
    servers, workers = int(o.chosen["servers"]), int(o.chosen["workers"])
    light = open_at(d, o.lightest["point"], o.mu1, servers, workers, int(o.chosen["middlewares"]))
    clients_n = float(o.chosen["clients_total"])
    rho1 = results["mm1"].get("utilization", o.lam / o.mu1)
    mm1_valid = vd.judge(
        "M/M/1",
        vd.relative_error(light.mm1, light.measured),
        light.point,
        (
            vd.servers(1, o.inputs.servers, "read threads that serve the GETs"),
            vd.utilisation("server", rho1),
            vd.recipe(_error(results["mm1"], o.measured), clients_n, rho1),
        ),
    )
    threads = read_threads(d["pools"], o.chosen["point"], o.ok)
    mmm_valid = vd.judge(
        f"M/M/{o.inputs.servers}",
        vd.relative_error(light.mmm, light.measured),
        light.point,
        (
            vd.servers(
                o.inputs.servers,
                threads if threads is not None else o.inputs.servers,
                "read threads the pools ran",
            ),
            vd.utilisation("read_thread", results["mmm"].get("utilization", math.nan)),
            _idle(results["mmm"], o.measured),
        ),
    )
    return mm1_valid, mmm_valid


def _open_table(
    results: dict[str, dict[str, float]], measured: dict[str, float], seed: dict, servers: int
) -> str:
    """Both models beside what was measured and beside seed 001's M/M/1 and its measurement."""
    seed_pred = {**seed["predicted"], "arrival_rate": seed["arrival_rate"], "servers": 1,
                 "service_rate": seed["service_rate"]}  # fmt: skip
    rows = []
    for key, label, scale, digits in ROWS:
        cells = [label]
        for name in ("mm1", "mmm"):
            cells.append(fg.num(results[name].get(key, math.nan) * scale, digits))
        cells.append(fg.num(measured.get(key, math.nan) * scale, digits))
        cells.append(fg.num(seed_pred.get(key, math.nan), digits))
        if key in seed.get("printed_errors", []):
            cells[-1] += "$^\\dagger$"
        cells.append(fg.num(seed["actual"].get(key, math.nan), digits))
        rows.append(cells)
    return fg.tabular(
        ["Metric", "M/M/1", f"M/M/{servers}", "Measured", "Seed M/M/1", "Seed meas."],
        rows,
        "p{5.6cm}rrrrr",
    )


OPEN_WHY = {  # a failed input check of the open M/M/m, as a clause of the prose
    "servers": "its servers are not the read threads the pools ran",
    "utilisation_read_thread": "its read threads' utilisation is not below 1",
}


def mmm_validity_numbers(
    v: vd.Validity, model: Mapping[str, float], measured: Mapping[str, float]
) -> dict[str, str]:
    """Which of the maximum-throughput M/M/m's checks fail, for the prose:
    `SixteenMMmLightestCase` (`within` or `beyond` the tolerance at the lightest load),
    `SixteenMMmIdleCheckCase` (`restates`: it barely queues, so its error is about minus the
    measured wait share; `differs` otherwise), the model's and the measured wait shares of
    the response time at the point, and `SixteenMMmOtherWhy`, the other failed checks in
    words (empty when none fails)."""
    failed = {c.name for c in v.checks if not c.ok}
    wait, response = (model.get(k, math.nan) for k in ("mean_waiting_time", "mean_response_time"))
    measured_response = measured.get("mean_response_time", math.nan)
    return {
        "SixteenMMmLightestCase": "beyond" if "lightest_load" in failed else "within",
        "SixteenMMmIdleCheckCase": "restates" if "recipe_idle" in failed else "differs",
        "SixteenMMmModelWaitShare": fg.pct(wait / response if response > 0 else math.nan),
        "SixteenMMmPointWaitShare": fg.pct(
            measured.get("mean_waiting_time", math.nan) / measured_response
            if measured_response > 0
            else math.nan
        ),
        "SixteenMMmOtherWhy": fg.listed(
            [
                OPEN_WHY.get(c.name, fg.escape(c.name.replace("_", " ")))
                for c in v.checks
                if not c.ok and c.name not in ("lightest_load", "recipe_idle")
            ]
        ),
    }


def seed_busy_period(seed: dict) -> dict[str, str]:
    """The busy period of seed 001's M/M/1 (its λ and μ per s, times in ms): the value it
    printed, the formula's and a simulation's."""
    lam, mu = seed["arrival_rate"] / 1e3, seed["service_rate"] / 1e3  # per ms
    formula = busy_period.mm1(lam, mu)
    sim = busy_period.simulate(lam, mu, BUSY_PERIODS, BUSY_SEED).summary()
    printed = seed["predicted"]
    return {
        "SixteenSeedBusyStdPrinted": fg.num(printed["std_busy_period"], 2),
        "SixteenSeedBusyStdFormula": fg.num(formula.std_length, 3),
        "SixteenSeedBusyStdSimulated": fg.num(sim.std_length, 3),
        "SixteenSeedBusyMeanPrinted": fg.num(printed["mean_busy_period"], 2),
        "SixteenSeedBusyMeanFormula": fg.num(formula.mean_length, 3),
        "SixteenSeedBusyMeanSimulated": fg.num(sim.mean_length, 3),
        "SixteenSeedBusyJobsStdPrinted": fg.num(printed["std_jobs_per_busy_period"], 2),
        "SixteenSeedBusyJobsStdFormula": fg.num(formula.std_jobs, 2),
        "SixteenSeedBusyJobsStdSimulated": fg.num(sim.std_jobs, 2),
        "SixteenSeedBusyPeriods": fg.num(BUSY_PERIODS),
        "SixteenSeedBusyStdRatio": fg.num(formula.std_length / printed["std_busy_period"], 2),
    }


def _idle(model: Mapping[str, float], measured: Mapping[str, float]) -> vd.Check:
    """The M/M/m's recipe check (c): whether it queues at all, beside the measured wait."""
    response = measured.get("mean_response_time", math.nan)
    share = measured.get("mean_waiting_time", math.nan) / response if response > 0 else math.nan
    return vd.idle(
        model.get("mean_waiting_time", math.nan), model.get("mean_response_time", math.nan), share
    )


def mmm_per_servers(d: Frames) -> dict[int, tuple[dict, dict]]:
    """Per number of servers of the replication family without replication: the M/M/m's
    inputs and solution (model) and the measured counterparts."""
    ok = averaged_runs(d["runs"])
    points, windows = d["points"], d["windows"]
    mine = points[(points["level_replication"] == "none") & (points["side"] == "middleware")]
    ours: dict[int, tuple[dict, dict]] = {}
    for _, p in mine.drop_duplicates("point").iterrows():
        s, point = int(p["servers"]), p["point"]
        w = of_point(windows, point, ok)
        req = of_point(d["pool_requests"], point, ok)
        try:
            i = mmm2016.inputs(w, req, s, int(p[WORKERS]), int(p["middlewares"]))
        except ValueError:
            continue
        model: dict = {"servers": i.servers, "arrival_rate": i.arrival_rate,
                       "service_rate": i.service_rate}  # fmt: skip
        with contextlib.suppress(queueing.UnstableQueueError):  # the table shows dashes
            model.update(mmm2016.flat(mmm2016.solve(i)))
        meas = mmm2016.measured(w, req, stable_queue(d["queue"], w, point), i.arrival_rate)
        meas.update(servers=i.servers, arrival_rate=i.arrival_rate, point=point)
        # The family runs each S at one client count, so that point is its lightest load.
        threads = read_threads(d["pools"], point, ok)
        meas["validity"] = vd.judge(
            f"M/M/{i.servers}",
            _error(model, meas),
            point,
            (
                vd.servers(
                    i.servers,
                    threads if threads is not None else i.servers,
                    "read threads the pools ran",
                ),
                vd.utilisation("read_thread", model.get("utilization", math.nan)),
                _idle(model, meas),
            ),
        )
        ours[s] = (model, meas)
    return ours


def mmm_rows(ours: dict[int, tuple[dict, dict]], seed: dict) -> dict[str, str]:
    """Which of the M/M/m's rows barely queue (its waiting time at most `vd.IDLE_WAIT` of its
    response time), so that its error is about minus the measured wait share, and which
    queue too; the prose explains each kind only for the rows of that kind.

    `SixteenMMmIdleCase`: `all`, `some` or `none` of our solved rows barely queue, or
    `unsolved` (no row has a steady state); `SixteenMMmIdleRows` and `SixteenMMmBusyRows` list
    them as `\\SixteenMMmRow{S}{m}{ρ}{model wait}{model response}{error}{measured wait
    share}` items. `SixteenSeedMMmIdleCase`: the same of the seed's model rows.
    `SixteenMMmUnderCase`: `under` where the model waits less than the requests did in every
    solved row of ours, else `mixed`."""
    solved = {
        s: (m, meas)
        for s, (m, meas) in sorted(ours.items())
        if m.get("mean_response_time", 0) > 0 and meas.get("mean_response_time", 0) > 0
    }

    def idle(model: Mapping[str, float]) -> bool:
        wait = model.get("mean_waiting_time", math.nan)
        return wait <= vd.IDLE_WAIT * model["mean_response_time"]

    def item(s: int, m: dict, meas: dict) -> str:
        cells = [
            str(s),
            fg.num(m.get("servers", math.nan)),
            fg.num(m.get("utilization", math.nan), 3),
            _ms(m.get("mean_waiting_time", math.nan) * 1e3),
            fg.num(m["mean_response_time"] * 1e3, 3),
            fg.pct(_error(m, meas)),
            fg.pct(meas.get("mean_waiting_time", math.nan) / meas["mean_response_time"]),
        ]
        return r"\SixteenMMmRow" + "".join(f"{{{c}}}" for c in cells)

    def case(flags: list[bool]) -> str:
        if not flags:
            return "unsolved"
        return "all" if all(flags) else "some" if any(flags) else "none"

    flags = [idle(m) for m, _ in solved.values()]
    items: dict[str, list[str]] = {"idle": [], "busy": []}
    for (s, (m, meas)), f in zip(solved.items(), flags, strict=True):
        items["idle" if f else "busy"].append(item(s, m, meas))
    seed_flags = [idle(v["predicted"]) for v in seed["servers"].values()]
    under = all(
        m.get("mean_waiting_time", math.nan) < meas.get("mean_waiting_time", math.nan)
        for m, meas in solved.values()
    )
    return {
        "SixteenMMmIdleCase": case(flags),
        "SixteenMMmIdleLimit": fg.pct(vd.IDLE_WAIT, 0),
        "SixteenMMmIdleRows": fg.listed(items["idle"]),
        "SixteenMMmBusyRows": fg.listed(items["busy"]),
        "SixteenSeedMMmIdleCase": case(seed_flags),
        "SixteenMMmUnderCase": "under" if solved and under else "mixed",
    }


def mmm_table(ours: dict[int, tuple[dict, dict]], seed: dict) -> Part:
    """M/M/m per number of servers (`mmm_per_servers`) beside seed 001's Table 2 (its own
    experiment, without replication): model, measured, seed model, seed measured."""
    seeded = {int(s) for s in seed["servers"]}
    servers = sorted(set(ours) | seeded)
    # A number of servers only one side has keeps only that side's columns, not dashes.
    sides = {
        s: (["model", "meas."] if s in ours else [])
        + (["seed", "s.\\ meas."] if s in seeded else [])
        for s in servers
    }
    sub = [""] + [c for s in servers for c in sides[s]]
    rows = []
    for key, label, scale, digits in ROWS:
        if key not in MMM_ROWS:
            continue
        cells = [label]
        for s in servers:
            model, meas = ours.get(s, ({}, {}))
            sd = seed["servers"].get(s, {})
            seed_model = {**sd.get("predicted", {}), "servers": sd.get("m", math.nan),
                          "arrival_rate": sd.get("arrival_rate", math.nan),
                          "service_rate": sd.get("service_rate", math.nan)}  # fmt: skip
            if sd:
                seed_model["utilization"] = sd["arrival_rate"] / (sd["m"] * sd["service_rate"])
            if s in ours:
                cells += [
                    fg.num(model.get(key, math.nan) * scale, digits),
                    fg.num(meas.get(key, math.nan) * scale, digits),
                ]
            if s in seeded:
                cells += [
                    fg.num(seed_model.get(key, math.nan), digits),
                    fg.num(sd.get("actual", {}).get(key, math.nan), digits),
                ]
        rows.append(cells)
    groups = [f"$S={s}$" for s in servers]
    widths = [len(sides[s]) for s in servers]
    tabular = fg.grouped_tabular(["Metric"], groups, widths, sub, rows, "l" + "r" * sum(widths))
    errors = [
        (m["mean_response_time"] - meas["mean_response_time"]) / meas["mean_response_time"]
        for m, meas in ours.values()
        if "mean_response_time" in m and meas.get("mean_response_time", 0) > 0
    ]
    shares = [
        meas["mean_waiting_time"] / meas["mean_response_time"]
        for _, meas in ours.values()
        if meas.get("mean_response_time", 0) > 0
    ]
    seed_runs = seed["servers"].values()
    seed_shares = [
        v["actual"]["mean_waiting_time"] / v["actual"]["mean_response_time"] for v in seed_runs
    ]
    seed_errors = [
        (v["predicted"]["mean_response_time"] - v["actual"]["mean_response_time"])
        / v["actual"]["mean_response_time"]
        for v in seed_runs
    ]
    cfg = seed["config"]
    numbers = {
        "SixteenMMmWaitShare": fg.pct(float(np.mean(shares)) if shares else math.nan),
        "SixteenSeedMMmWaitShare": fg.pct(float(np.mean(seed_shares))),
        "SixteenMMmServerLevels": ", ".join(str(s) for s in sorted(ours)) or fg.MISSING,
        "SixteenMMmMeanError": fg.pct(float(np.mean(errors)) if errors else math.nan),
        "SixteenSeedMMmError": fg.pct(float(np.mean(seed_errors))),
        "SixteenSeedMMmTable": fg.escape(seed["table"]),
        "SixteenSeedMMmClients": fg.num(cfg["clients"]),
        "SixteenSeedMMmThreads": fg.num(cfg["threads_per_pool"]),
        "SixteenMMmServersValidCase": _cases(
            [meas["validity"] for _, meas in ours.values() if "validity" in meas]
        ),
        "SixteenSeedMMmWrites": fg.num(cfg["writes_percent"]),
        **mmm_rows(ours, seed),
    }
    models = {
        "mmm": [
            _model_entry(
                meas["point"], m["mean_response_time"], meas["mean_response_time"], f"S = {s}"
            )
            | ({"validity": meas["validity"].to_dict()} if "validity" in meas else {})
            for s, (m, meas) in sorted(ours.items())
            # A prediction the findings can check: at a measured point, with a response time.
            if "point" in meas
            and "mean_response_time" in m
            and meas.get("mean_response_time", 0) > 0
        ]
    }
    return Part(tabular, numbers, models)


def _cases(validities: list[vd.Validity]) -> str:
    """`all`, `some` or `none` of the models valid; `unjudged` without any."""
    if not validities:
        return "unjudged"
    flags = [v.valid for v in validities]
    return "all" if all(flags) else "some" if any(flags) else "none"


def times_at(d: Frames, point: str, ok: set[str]) -> mva2016.ServiceTimes:
    """The MVA's service times measured at one point (its ok runs), the emulated round trip
    to memcached taken out of memcached's time into its own delay centre."""
    w = d["windows"]
    rows = d["points"][d["points"]["point"] == point]
    rtt = mva2016.round_trip_of(rows.iloc[0]) if len(rows) else 0.0
    return mva2016.service_times(
        w[(w["point"] == point) & w["run"].isin(ok)],
        of_point(d["pools"], point, ok),
        of_point(d["pool_requests"], point, ok),
        rtt,
    )


def mva_checks(
    p: mva2016.Prediction, times: mva2016.ServiceTimes, design: mva2016.Design, threads: int | None
) -> tuple[vd.Check, ...]:
    """The MVA's inputs in range (the round trip a delay centre, each read station with the
    read threads a pool ran) and what its prediction implies: a read pool that its parts do
    not hold beyond its threads (a busy fraction below 1, holding at memcached included),
    which the network does not model as a station."""
    return (
        vd.delay_centre(False, times.round_trip, "memcached"),
        vd.servers(
            design.workers,
            threads // design.servers if threads else design.workers,
            "read threads per pool",
        ),
        vd.predicted_utilisation("read_thread_holding", p.read_busy),
    )


def measured_busy(pool_table: pd.DataFrame, point: str, ok: set[str]) -> dict[str, float]:
    """Mean busy fraction per pool kind at a point."""
    load = pools.pool_load(of_point(pool_table, point, ok))
    return {k: float(load.loc[load["pool"] == k, "busy_fraction"].mean()) for k in pools.KINDS}


@dataclass(frozen=True)
class MVACurve:
    """One pool size's MVA curve and its measured client points."""

    workers: int
    clients: list[int]
    throughput: list[float]  # ops/s
    response_ms: list[float]
    measured: pd.DataFrame  # the client points of this pool size


@dataclass(frozen=True)
class Lightest:
    """The MVA of one pool size at its lightest load: its validity and service times."""

    validity: vd.Validity
    times: mva2016.ServiceTimes


def mva_models(d: Frames) -> tuple[list[MVACurve], Part, dict[int, Lightest]]:
    """The MVA over the maximum-throughput family's client counts, service times from the
    lightest load of each pool size: curves to draw, the table of predicted against
    measured throughput, response time and read-pool busy fraction, and per pool size the
    MVA's validity (judged at its lightest load)."""
    ok = averaged_runs(d["runs"])
    pts = d["points"][d["points"]["type"] == "all"]
    curves, rows, errs, bottlenecks = [], [], [], set()
    lightest: dict[int, Lightest] = {}
    round_trips: set[float] = set()
    entries = []
    beyond = 0  # points whose predicted read-pool busy fraction exceeds 100 %
    for workers, level in pts.groupby(WORKERS, sort=True):
        client = level[level["side"] == "client"].sort_values("clients_total")
        low = client.iloc[0]
        design = mva2016.design_of(low)
        times = times_at(d, low["point"], ok)
        n_max = int(client["clients_total"].max())
        ns = sorted({int(n) for n in np.linspace(1, n_max, CURVE_POINTS)})
        curve = [mva2016.predict(design, times, n) for n in ns]
        curves.append(
            MVACurve(
                int(workers),
                ns,
                [c.throughput for c in curve],
                [c.response_time * 1e3 for c in curve],
                client,
            )
        )
        for _, c in client.iterrows():
            p = mva2016.predict(design, times, int(c["clients_total"]))
            busy = measured_busy(d["pools"], c["point"], ok)
            ex = (p.throughput - c["throughput_ops_mean"]) / c["throughput_ops_mean"]
            if c["point"] == low["point"]:
                v = vd.judge(
                    "MVA",
                    ex,
                    low["point"],
                    mva_checks(p, times, design, read_threads(d["pools"], low["point"], ok)),
                )
                lightest[int(workers)] = Lightest(v, times)
                round_trips.add(times.round_trip)
                entry = _model_entry(
                    low["point"],
                    p.throughput,
                    c["throughput_ops_mean"],
                    f"T = {int(workers)}, N = {int(c['clients_total'])}",
                    metric="throughput_ops",
                    side="client",
                )
                entries.append(entry | {"validity": v.to_dict()})
            er = (p.response_time * 1e6 - c["response_us_mean_mean"]) / c["response_us_mean_mean"]
            errs.append(abs(ex))
            bottlenecks.add(p.bottleneck)
            beyond += p.read_busy > 1
            rows.append(
                [
                    fg.num(workers),
                    fg.num(c["clients_total"]),
                    fg.num(c["throughput_ops_mean"]),
                    fg.num(p.throughput),
                    fg.pct(ex),
                    fg.num(c["response_us_mean_mean"] / 1e3, 2),
                    fg.num(p.response_time * 1e3, 2),
                    fg.pct(er),
                    fg.pct(busy["read"], 0),
                    predicted_busy(p.read_busy),
                    fg.escape(p.bottleneck),
                ]
            )
    tabular = fg.tabular(
        ["$T$", "$N$", "$X$", "$X_\\mathrm{MVA}$", "err.", "$R$ (ms)", "$R_\\mathrm{MVA}$",
         "err.", "busy", "busy$_\\mathrm{MVA}$", "Bottleneck"],
        rows,
        "rrrrrrrrrrl",
    )  # fmt: skip
    numbers = {
        "SixteenMVAMeanError": fg.pct(float(np.mean(errs)) if errs else math.nan),
        "SixteenMVAMaxError": fg.pct(float(np.max(errs)) if errs else math.nan),
        "SixteenMVABottlenecks": fg.escape(
            ", ".join(mva2016.station_words(b) for b in sorted(bottlenecks))
        )
        or fg.MISSING,
        **beyond_numbers(beyond, len(rows)),
        **lightest_numbers(lightest),
        # The emulated round trip to memcached, ms in the study's time (one value per family).
        "SixteenMVARoundTrip": ", ".join(fg.num(r * 1e3, 2) for r in sorted(round_trips))
        or fg.MISSING,
    }
    return curves, Part(tabular, numbers, {"mva": entries}), lightest


WHY = {  # a failed check of the MVA, as a clause of the prose
    "lightest_load": "it misses the lightest load beyond the tolerance",
    "delay_centre": "a round trip sits in a station's service time",
    "servers": "its read stations do not have the pools' threads",
    "predicted_read_thread_holding": "it implies read threads busy more than all of the time",
}


def invalid_why(v: vd.Validity | None) -> str:
    """Why a model is not valid, in LaTeX-safe words (empty when valid or unjudged)."""
    if v is None:
        return ""
    return fg.listed([WHY.get(c.name, fg.escape(c.name)) for c in v.checks if not c.ok])


def lightest_numbers(lightest: Mapping[int, Lightest]) -> dict[str, str]:
    """The MVA's throughput errors at each pool size's lightest load, for the prose:
    `SixteenMVALightestItems` as `$T = 8$: −5.0 %` items, their range, and
    `SixteenMVAValidCase` (`all`, `some`, `none` of the pool sizes valid)."""
    errors = [v.validity.lightest_error for v in lightest.values()]
    items = [f"$T = {t}$: {fg.pct(v.validity.lightest_error)}" for t, v in sorted(lightest.items())]
    finite = [e for e in errors if math.isfinite(e)]
    return {
        "SixteenMVALightestItems": fg.listed(items) or fg.MISSING,
        "SixteenMVALightestMin": fg.pct(min(finite)) if finite else fg.MISSING,
        "SixteenMVALightestMax": fg.pct(max(finite)) if finite else fg.MISSING,
        "SixteenMVAValidCase": _cases([v.validity for v in lightest.values()]),
        "SixteenMVATolerance": fg.pct(vd.TOLERANCE, 0),
    }


BEYOND_POOL = "$^\\ast$"  # marks a predicted busy fraction no pool of T threads can have


def predicted_busy(fraction: float) -> str:
    """The MVA's read-pool busy fraction; above 100 % marked: the model then holds more
    parts at memcached than the pool has threads, outside the validity of the network."""
    return fg.pct(fraction, 0) + (BEYOND_POOL if fraction > 1 else "")


def beyond_numbers(beyond: int, points: int) -> dict[str, str]:
    """How many of the MVA's points imply a read pool busier than all of the time
    (`SixteenMVABeyondCase`: `beyond` at some, else `within`)."""
    return {
        "SixteenMVABeyondCase": "beyond" if beyond else "within",
        "SixteenMVABeyond": str(beyond),
        "SixteenMVAPoints": str(points),
    }


def mva_seed(d: Frames, seed: dict, lightest: Mapping[int, Lightest] | None = None) -> Part:
    """The MVA at the replication family's point without replication nearest to seed 001's
    number of servers, beside its Table 3. The replication family runs one client count, so
    what needs a light load comes from the maximum-throughput family's lightest load at the
    pool size nearest the point's (`lightest`): memcached's own service time (at the point,
    under load, the server time also holds memcached's queue, which the network computes
    itself) and the MVA's lightest-load error for its validity."""
    ok = averaged_runs(d["runs"])
    pts = d["points"]
    client = pts[(pts["side"] == "client") & (pts["level_replication"] == "none")]
    model: dict[str, float] = {}
    meas: dict[str, float] = {}
    chosen_s: int | None = None
    busiest: tuple[str, float] | None = None
    if len(client):
        target = seed["config"]["servers"]
        row = client.loc[(client["servers"] - target).abs().sort_values(kind="stable").index[0]]
        point, chosen_s = row["point"], int(row["servers"])
        at = client[client["point"] == point].set_index("type")
        design = mva2016.design_of(at.loc["all"])
        times = times_at(d, point, ok)
        near = None
        if lightest:
            near = lightest[min(lightest, key=lambda k: (abs(k - design.workers), k))]
            times = dataclasses.replace(times, memcached=near.times.memcached)
        p = mva2016.predict(design, times, int(at.loc["all", "clients_total"]))
        busiest = (p.bottleneck, p.utilization[p.bottleneck])
        checks = mva_checks(p, times, design, read_threads(d["pools"], point, ok))
        if near is not None:
            seed_valid: vd.Validity | None = vd.judge(
                "MVA", near.validity.lightest_error, near.validity.lightest_point, checks
            )
        else:
            seed_valid = vd.judge("MVA", math.nan, "", checks)
        model = _seed_model(p, times, design.write_share)
        meas = _seed_measured(d, at, point, ok, times)
    cfg = seed["config"]
    tabular = _seed_mva_table(model, meas, seed)
    measured_x = meas.get("throughput", math.nan)
    if chosen_s is None:
        seed_valid = None
    numbers: dict[str, Any] = {
        "SixteenMVASeedValidCase": valid_case(seed_valid),
        "SixteenMVASeedInvalidWhy": invalid_why(seed_valid),
        "SixteenMVASeedServers": fg.num(chosen_s) if chosen_s is not None else fg.MISSING,
        "SixteenMVASeedError": fg.pct(
            (model.get("throughput", math.nan) - measured_x) / measured_x
            if measured_x
            else math.nan
        ),
        "SixteenMVASeedBottleneck": (
            fg.escape(mva2016.station_words(busiest[0])) if busiest else fg.MISSING
        ),
        "SixteenMVASeedBottleneckUtil": fg.num(busiest[1], 2) if busiest else fg.MISSING,
        "SixteenSeedMVASetShare": fg.pct(
            seed["predicted"]["throughput_set"] / seed["predicted"]["throughput"]
        ),
        "SixteenSeedMVAError": fg.pct(
            (seed["predicted"]["throughput"] - seed["actual"]["throughput"])
            / seed["actual"]["throughput"]
        ),
        "SixteenSeedMVATable": fg.escape(seed["table"]),
        "SixteenSeedMVAServers": fg.num(cfg["servers"]),
        "SixteenSeedMVAWrites": fg.num(cfg["writes_percent"]),
        "SixteenSeedMVAClients": fg.num(cfg["clients"]),
    }
    models = {}
    if chosen_s is not None and measured_x > 0:
        models["mva_seed"] = _model_entry(
            point,
            model["throughput"],
            measured_x,
            f"S = {chosen_s}, no replication",
            metric="throughput_ops",
            side="client",
        )
        if seed_valid is not None:
            models["mva_seed"]["validity"] = seed_valid.to_dict()
    return Part(tabular, numbers, models)


def _seed_model(p: Any, times: Any, write_share: float) -> dict[str, float]:
    """The MVA's prediction in the rows of seed 001's Table 3 (ops/s, ms, utilisations)."""
    st = p.result.stations
    return {
        "throughput": p.throughput,
        "throughput_get": p.throughput * (1 - write_share),
        "throughput_set": p.throughput * write_share,
        "response": p.response_time * 1e3,
        "response_get": (times.client + p.middleware_response_get) * 1e3,
        "response_set": (times.client + p.middleware_response_set) * 1e3,
        "read_response": st["read0"].response_time * 1e3 if "read0" in st else math.nan,
        "write_response": st["write0"].response_time * 1e3 if "write0" in st else math.nan,
        "util_read": p.read_busy,
        "util_write": p.utilization["write"],
    }


def _seed_measured(
    d: Frames, at: pd.DataFrame, point: str, ok: Any, times: Any
) -> dict[str, float]:
    """What the point measured, in the same rows (`at`: its client rows by request type)."""
    req = of_point(d["pool_requests"], point, ok)
    queue = pools.part_times(req, "queue", by=("pool",))
    q = {k: float(np.average(g["mean"], weights=g["count"])) for k, g in queue.groupby("pool")}
    busy = measured_busy(d["pools"], point, ok)

    def typed(kind: str, col: str) -> float:
        return float(at.loc[kind, col]) if kind in at.index else math.nan

    return {
        "throughput": typed("all", "throughput_ops_mean"),
        "throughput_get": typed("get", "throughput_ops_mean"),
        "throughput_set": typed("set", "throughput_ops_mean"),
        "response": typed("all", "response_us_mean_mean") / 1e3,
        "response_get": typed("get", "response_us_mean_mean") / 1e3,
        "response_set": typed("set", "response_us_mean_mean") / 1e3,
        "read_response": (q.get("read", math.nan) / 1e6 + times.read) * 1e3,
        "write_response": (q.get("write", math.nan) / 1e6 + times.write) * 1e3,
        "util_read": busy["read"],
        "util_write": busy["write"],
    }


def _seed_mva_table(model: dict[str, float], meas: dict[str, float], seed: dict) -> str:
    """The MVA and the measurement beside seed 001's Table 3, row by row."""
    rows = [
        [
            label,
            fg.num(model.get(key, math.nan), digits),
            fg.num(meas.get(key, math.nan), digits),
            fg.num(seed["predicted"].get(key, math.nan), digits),
            fg.num(seed["actual"].get(key, math.nan), digits),
        ]
        for key, label, digits in SEED_MVA_ROWS
    ]
    return fg.tabular(["Metric", "MVA", "Measured", "Seed MVA", "Seed meas."], rows, "p{6.2cm}rrrr")


# The maximum-throughput family's tables the open models and the MVA read, and the
# replication family's.
OPEN_TABLES = ("points", "windows", "histograms", "queue", "pools", "pool_requests", "runs")
MVA_TABLES = ("points", "windows", "pools", "pool_requests", "runs")
MAX_TABLES = ("points", "windows", "histograms", "queue", "pools", "pool_requests", "runs")
REPLICATION_TABLES = ("points", "windows", "queue", "pools", "pool_requests", "runs")


def mva_figure(curves: list[MVACurve], path: str) -> None:
    """Measured points and MVA curve of each pool size, both in the pool size's colour
    (fg.worker_colour); measured solid with its marker, the model dotted with crosses."""
    fig, axes = fg.figure(ncols=2)
    for c in curves:
        measured = fg.worker_style(c.workers)
        model = {"color": measured["color"], "marker": "x"}
        for ax, pred, metric, scale in (
            (axes[0][0], c.throughput, "throughput_ops", 1.0),
            (axes[0][1], c.response_ms, "response_us_mean", 1e-3),
        ):
            ax.plot(c.clients, pred, lw=1, ls=":", markersize=3, markevery=3,
                    label=f"$T={c.workers}$, MVA", **model)  # fmt: skip
            m = c.measured
            ax.errorbar(
                m["clients_total"].to_numpy(float),
                m[f"{metric}_mean"].to_numpy(float) * scale,
                yerr=fg.ci_errors(m, metric, scale),
                capsize=2, markersize=3, lw=1, ls="-",
                label=f"$T={c.workers}$, measured", **measured,
            )  # fmt: skip
    # Two lines each: the legend's rows leave the axes shorter than a one-line label.
    labels = (
        fg.study_label("throughput at the clients", "ops/s", wrap=True),
        fg.study_label("mean response time at the clients", "ms", wrap=True),
    )
    for ax, label in zip(axes[0], labels, strict=True):
        ax.set_xlabel("clients (total)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
    fg.legend_below(fig, axes[0][0])
    fg.save(fig, path)


@dataclass(frozen=True)
class Report:
    open: Part
    mmm: Part
    mva: Part
    mva_seed: Part
    numbers: dict[str, str]
    models: dict[str, Any]  # predictions beside measurements, for the findings


def report(
    max_tables: Mapping[str, pd.DataFrame],
    repl_tables: Mapping[str, pd.DataFrame],
    seed_models: Mapping[str, Any],
    mva_figure_path: str,
) -> Report:
    """Every model of the section from the raw tables of the maximum-throughput family
    (MAX_TABLES) and of the replication family (REPLICATION_TABLES), beside seed 001's
    (`seed_models`: models of reference2016.yaml); draws the MVA figure at
    `mva_figure_path`."""

    def timed(names: tuple[str, ...]) -> Frames:
        """The read-only family's tables `names` in the study's time, its timed GETs."""
        return timed_reads(family_tables({t: max_tables[t] for t in names}))

    numbers: dict[str, str] = {}
    predictions: dict[str, Any] = {}
    open_part = open_models(timed(OPEN_TABLES), seed_models["mm1"])
    numbers |= open_part.numbers
    predictions |= open_part.models
    repl = family_tables(repl_tables)
    mmm_part = mmm_table(mmm_per_servers(repl), seed_models["mmm"])
    numbers |= mmm_part.numbers
    predictions |= mmm_part.models
    curves, mva_part, lightest = mva_models(timed(MVA_TABLES))
    mva_figure(curves, mva_figure_path)
    numbers |= mva_part.numbers
    predictions |= mva_part.models
    seed_part = mva_seed(repl, seed_models["mva"], lightest)
    numbers |= seed_part.numbers
    predictions |= seed_part.models
    return Report(open_part, mmm_part, mva_part, seed_part, numbers, predictions)
