"""`mwlab run` under SIGINT, SIGTERM and SIGHUP, at every stage of a run.

The run is held at a stage with the `--pause-at` hook and signalled once it says so, so
the signal arrives at that stage on a loaded machine too. Every run starts with SIGINT
inherited as ignored, as from a background job or a script, unless a test says otherwise.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from testbed.point import Point
from testbed.run import RunOptions, run_point
from testbed.services.ports import port_free

from .conftest import assert_interrupted, processes_in, processes_matching

pytestmark = pytest.mark.timeout(300)


def run_args(out: Path, base_port: int, *extra: str) -> list[str]:
    """One server, one middleware, one client: every stage has processes of its own."""
    return [
        "--out", str(out), "--hosts", "local", "--driver", "builtin", "--middlewares", "1",
        "--duration", "60", "--ratio", "1:1", "--data-size", "64", "--key-maximum", "200",
        "--base-port", str(base_port), *extra,
    ]  # fmt: skip


def assert_nothing_left(out: Path, base_port: int) -> None:
    assert processes_in(out) == []
    assert processes_matching(f"-p {base_port} ") == []
    assert processes_matching(f"-p {base_port + 100} ") == []
    assert port_free("127.0.0.1", base_port)
    assert port_free("127.0.0.1", base_port + 100)


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("stage", ["servers", "populate", "middlewares", "clients"])
def test_a_signal_at_any_stage_stops_the_run_and_tears_down(
    tmp_path, base_port, mwlab_run, loadgen_jar, stage, name
):
    out = tmp_path / "run"
    run = mwlab_run(run_args(out, base_port, "--pause-at", stage))
    run.wait_for(f"paused at {stage}")
    # What the stage started is running when the signal comes.
    assert processes_in(out) != []
    run.send(name)
    code = run.finish()
    manifest = assert_interrupted(out, code, "\n".join(run.lines), [(name, stage)])
    started = {p["role"] for p in manifest["processes"]}
    assert {"server", "populate", "middleware", "client"} & started
    assert_nothing_left(out, base_port)


@pytest.mark.parametrize(
    ("first", "second"), [("SIGINT", "SIGTERM"), ("SIGTERM", "SIGINT"), ("SIGHUP", "SIGHUP")]
)
def test_a_second_signal_during_teardown_is_recorded_and_teardown_finishes(
    tmp_path, base_port, mwlab_run, loadgen_jar, first, second
):
    out = tmp_path / "run"
    run = mwlab_run(run_args(out, base_port, "--pause-at", "clients", "--pause-at", "teardown"))
    run.wait_for("paused at clients")
    run.send(first)
    # Held before anything is stopped: the second signal finds the whole run still up.
    run.wait_for("paused at teardown")
    assert processes_in(out) != []
    run.send(second)
    code = run.finish()
    assert_interrupted(out, code, "\n".join(run.lines), [(first, "clients"), (second, "teardown")])
    assert_nothing_left(out, base_port)


def test_sigint_with_its_default_disposition(tmp_path, base_port, mwlab_run, loadgen_jar):
    out = tmp_path / "run"
    run = mwlab_run(run_args(out, base_port, "--pause-at", "clients"), sigint=signal.SIG_DFL)
    run.wait_for("paused at clients")
    run.send("SIGINT")
    code = run.finish()
    assert_interrupted(out, code, "\n".join(run.lines), [("SIGINT", "clients")])
    assert_nothing_left(out, base_port)


def test_sigint_ignored_by_the_caller_still_stops_a_running_point(
    tmp_path, base_port, mwlab_run, loadgen_jar
):
    """No hook: a plain 60 s run, signalled once its clients run."""
    out = tmp_path / "run"
    run = mwlab_run(run_args(out, base_port))
    run.wait_for("virtual clients for")
    run.send("SIGINT")
    code = run.finish()
    manifest = assert_interrupted(out, code, "\n".join(run.lines), [("SIGINT", "clients")])
    # Teardown stopped the clients: they did not run their 60 s to the end.
    clients = [p for p in manifest["processes"] if p["role"] == "client"]
    assert clients and all(p["exit_code"] != 0 for p in clients)
    assert_nothing_left(out, base_port)


def test_an_unexpected_exception_still_tears_down_and_writes_run_json(
    tmp_path, base_port, loadgen_jar, monkeypatch
):
    def broken(self, ctx) -> None:
        raise LookupError("no such table")

    # Servers are up when the failure comes.
    monkeypatch.setattr("testbed.stages.services.PopulateStage.setup", broken)
    out = tmp_path / "run"
    point = Point.model_validate({"name": "broken", "hosts": "local", "driver": "builtin"})
    opts = RunOptions(out=out, base_port=base_port, progress=False, linkcap_cache=None)
    manifest = run_point(point, opts)
    assert manifest["status"] == "failed"
    assert manifest["error"] == "LookupError: no such table"
    assert json.loads((out / "run.json").read_text()) == manifest
    assert [p["role"] for p in manifest["processes"]] == ["server"]
    assert manifest["processes"][0]["exit_code"] is not None
    assert processes_in(out) == []
    assert port_free("127.0.0.1", base_port)
