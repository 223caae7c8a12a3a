"""The stability check of a run's windows: synthetic series, and real runs read back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import stability
from analysis.report.validation import numbers, run_rows
from analysis.stability import check_run_dir, stability_table, stable_runs
from analysis.validate import check_runs
from common import stability as criteria
from common.stability import MIN_WINDOWS, assess
from testbed.point import Point
from testbed.run import RunOptions, run_point

pytestmark = pytest.mark.timeout(240)

# Local points listen on base+i (one server): inside this suite's range 24000-24099.
BUILTIN_PORT = 24090
MEMASLAP_PORT = 24092


def windows(series: dict[str, list[float]], sources: int = 2) -> pd.DataFrame:
    """Tidy client windows: each run's throughput split over a get and a set row per window,
    as if from `sources` load generators, one second apart."""
    rows = []
    for run, xs in series.items():
        for i, x in enumerate(xs):
            for kind, share in (("get", 0.75), ("set", 0.25)):
                rows.append(
                    {"run": run, "side": "client", "window": i, "start_ms": 1000.0 * i,
                     "end_ms": 1000.0 * (i + 1), "type": kind, "keys": 1, "sources": sources,
                     "throughput_ops": x * share, "count": x * share}
                )  # fmt: skip
    return pd.DataFrame(rows)


def noisy(n: int, sd: float, seed: int, mean: float = 1000.0) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, sd, n))


def test_flat_noisy_series_is_stable() -> None:
    verdict = assess(noisy(30, 40.0, seed=1))
    assert verdict.stable, verdict.reason
    assert verdict.windows == 30 and verdict.batch_windows == 1
    assert verdict.trend_p > criteria.TREND_ALPHA
    assert verdict.rel_half_width <= criteria.MAX_REL_HALF_WIDTH
    assert verdict.reason.startswith("stable")


def test_a_ramp_is_flagged_as_a_trend() -> None:
    ramp = [600 + 20 * i + e for i, e in enumerate(noisy(20, 10.0, seed=2, mean=0.0))]
    verdict = assess(ramp)
    assert not verdict.stable
    assert "trend" in verdict.reason and "too few" not in verdict.reason
    assert verdict.trend_tau > 0 and verdict.trend_p < criteria.TREND_ALPHA


def test_too_few_windows_are_flagged() -> None:
    verdict = assess(noisy(MIN_WINDOWS - 1, 10.0, seed=3))
    assert not verdict.stable
    assert f"too few windows: {MIN_WINDOWS - 1} < {MIN_WINDOWS}" in verdict.reason
    # The same series, long enough, passes: the count alone failed it.
    assert assess(noisy(MIN_WINDOWS, 10.0, seed=3)).stable


def test_a_very_noisy_series_is_imprecise() -> None:
    verdict = assess(noisy(15, 400.0, seed=4))
    assert not verdict.stable
    assert "imprecise" in verdict.reason and "trend" not in verdict.reason
    assert verdict.rel_half_width > criteria.MAX_REL_HALF_WIDTH


def test_correlated_windows_are_merged_into_batches() -> None:
    # Slow oscillation: neighbouring windows alike, so single windows understate the error.
    x = [1000 + 100 * np.sin(2 * np.pi * i / 16) for i in range(64)]
    verdict = assess(x)
    assert verdict.batch_windows > 1
    assert verdict.batches == 64 // verdict.batch_windows
    assert verdict.batches >= criteria.MIN_BATCHES


def test_a_run_without_throughput_is_not_stable() -> None:
    assert not assess([0.0] * 12).stable
    assert assess([]).reason == "no complete windows"
    with pytest.raises(ValueError, match="NaN"):
        assess([1.0, float("nan")])


def test_table_sums_types_and_sources_and_drops_incomplete_windows() -> None:
    flat, ramp = noisy(12, 20.0, seed=5), [500.0 + 50 * i for i in range(12)]
    w = windows({"a": flat, "b": ramp})
    # Run a: its last window lacks one source and the first is partial; both are left out.
    w.loc[(w["run"] == "a") & (w["window"] == 11), "sources"] = 1
    w.loc[(w["run"] == "a") & (w["window"] == 0), "end_ms"] = 300.0
    # Middleware windows and rows of type `all` never add to the client's throughput.
    w = pd.concat(
        [w, w.assign(side="middleware", throughput_ops=1e6), w.assign(type="all")],
        ignore_index=True,
    )
    table = stability_table(w).set_index("run")
    assert table.loc["a", "windows"] == 10
    assert table.loc["a", "mean_ops"] == pytest.approx(np.mean(flat[1:11]))
    assert table.loc["b", "windows"] == 12 and not table.loc["b", "stable"]
    assert table.loc["a", "stable"], table.loc["a", "reason"]
    runs = pd.DataFrame({"run": ["a", "b", "c"], "status": ["ok", "ok", "failed"]})
    assert list(stable_runs(runs, w)["run"]) == ["a"]


def test_windows_needed_grows_with_the_variation() -> None:
    assert criteria.windows_needed(0.0) == MIN_WINDOWS
    n = criteria.windows_needed(0.3)
    # At that count the bound holds; one window fewer it does not.
    for k, holds in ((n, True), (n - 1, False)):
        x = np.array([1.0 + 0.3, 1.0 - 0.3] * k)[:k]
        x = (x - x.mean()) / x.std(ddof=1) * 0.3 + 1.0  # sample CV exactly 0.3
        assert (assess(x).rel_half_width <= criteria.MAX_REL_HALF_WIDTH) is holds
    with pytest.raises(ValueError):
        criteria.windows_needed(float("nan"))


def test_the_length_factor_is_the_squared_ratio_of_half_width_to_bound() -> None:
    # Twice the bound needs four times the length; a run at the bound needs no more.
    assert criteria.length_factor(2 * criteria.MAX_REL_HALF_WIDTH) == pytest.approx(4.0)
    assert criteria.length_factor(criteria.MAX_REL_HALF_WIDTH) == pytest.approx(1.0)
    assert criteria.length_factor(0.05, bound=0.05) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        criteria.length_factor(float("nan"))


def _run(tmp_path: Path, port: int, **spec: object) -> Path:
    point = Point.model_validate(
        {"name": "stability", "hosts": "local", "servers": 1, "virtual_clients": 2,
         "workload": {"ratio": "1:3", "data_size": 64, "key_maximum": 500},
         "duration_s": MIN_WINDOWS + 3, "warmup_s": 1.0, "cooldown_s": 1.0, **spec}
    )  # fmt: skip
    out = tmp_path / str(spec["driver"])
    opts = RunOptions(out=out, base_port=port, progress=False, linkcap_cache=None)
    manifest = run_point(point, opts)
    assert manifest["status"] == "ok", manifest["error"]
    return out


def test_check_run_dir_on_a_real_builtin_run(tmp_path: Path) -> None:
    out = _run(tmp_path, BUILTIN_PORT, driver="builtin", instances_per_client=2)
    verdict = check_run_dir(out, 1.0, 1.0)
    # The expected mean, read straight from the generators' JSON: per second of the run, the
    # operations of both types and both generators together (they start together).
    results = [json.loads(p.read_text()) for p in sorted(out.glob("clients/*/result.json"))]
    assert len(results) == 2
    per_window: dict[int, int] = {}
    for r in results:
        for block in ("Sets", "Gets"):
            for sec, entry in r["ALL STATS"][block]["Time-Serie"].items():
                per_window[int(sec)] = per_window.get(int(sec), 0) + int(entry["Count"])
    assert verdict.windows >= MIN_WINDOWS - 1, verdict.reason
    measured = sorted(per_window)[1 : 1 + verdict.windows]
    assert verdict.mean_ops == pytest.approx(np.mean([per_window[w] for w in measured]))
    assert verdict.reason.startswith("stable:") == verdict.stable, verdict.reason
    assert 0 <= verdict.trend_p <= 1 and verdict.rel_half_width > 0


def test_check_run_dir_on_a_real_memaslap_run(tmp_path: Path) -> None:
    out = _run(tmp_path, MEMASLAP_PORT, driver="memaslap")
    assert list(out.glob("clients/*/memaslap.txt"))
    verdict = check_run_dir(out, 1.0, 1.0)
    assert verdict.windows >= MIN_WINDOWS - 2, verdict.reason
    assert verdict.mean_ops > 0 and 0 <= verdict.trend_p <= 1
    # A longer cut leaves fewer windows, and the count criterion then names them.
    short = check_run_dir(out, 4.0, 4.0)
    assert short.windows == verdict.windows - 6
    assert not short.stable and "too few windows" in short.reason


def test_validation_flags_and_excludes_unstable_runs() -> None:
    ramp = [500.0 + 50 * i for i in range(12)]
    series = {"f/x=p/rep1": noisy(12, 20.0, seed=6), "f/x=p/rep2": ramp}
    w = windows(series)
    # N = 10 clients, R = N/X: the law holds exactly for both runs.
    runs = pd.DataFrame(
        [{"run": r, "side": "client", "type": "all", "throughput_ops": np.mean(x),
          "response_us_mean": 10 / np.mean(x) * 1e6} for r, x in series.items()]
    )  # fmt: skip
    manifests = pd.DataFrame(
        [{"run": r, "status": "ok", "error": None, "clients_total": 10} for r in series]
        + [{"run": "f/x=p/rep3", "status": "failed", "error": "boom", "clients_total": 10}]
    )
    table = check_runs(runs, manifests, "f", w).set_index("run")
    flags = {"f/x=p/rep1": "", "f/x=p/rep2": "unstable", "f/x=p/rep3": "failed"}
    assert table["flags"].to_dict() == flags
    excluded = {"f/x=p/rep1": False, "f/x=p/rep2": True, "f/x=p/rep3": True}
    assert table["excluded"].to_dict() == excluded
    assert "trend" in table.loc["f/x=p/rep2", "stability"]
    assert table.loc["f/x=p/rep1", "windows"] == 12
    macros = numbers(table.reset_index())
    assert r"\newcommand{\ValidationStableShare}{50.0\,\%}" in macros
    assert r"\newcommand{\ValidationExcluded}{2}" in macros
    assert r"\newcommand{\ValidationMaxHalfWidth}{10\,\%}" in macros
    assert rf"\newcommand{{\ValidationMinWindows}}{{{MIN_WINDOWS}}}" in macros
    assert " & 12 & " in run_rows(table.reset_index())


def test_middleware_windows_stand_in_where_the_clients_report_too_few() -> None:
    # memaslap prints once a second: 3 client windows, 12 finer middleware windows.
    client = windows({"r": noisy(3, 10, 1)}, sources=1).assign(side="client")
    mw = windows({"r": noisy(12, 10, 2, mean=4000.0)}, sources=1).assign(side="middleware")
    series = stability.window_series(pd.concat([client, mw], ignore_index=True))
    assert len(series["r"]) == 12 and series["r"].mean() > 3000
    # With enough client windows the clients' own stand.
    client = windows({"r": noisy(12, 10, 3)}, sources=1).assign(side="client")
    series = stability.window_series(pd.concat([client, mw], ignore_index=True))
    assert series["r"].mean() < 2000
