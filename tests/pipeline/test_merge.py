"""Two studies measured on their own and merged into one dataset (`mwlab dataset merge`,
mwlab/datasetmerge.py): a 2018 family and a 2015 family of the `studies` profile, each
measured and archived alone, merge into one dataset that holds both, verifies, counts every
run and names each study's commit and code; pairs that are not one study each, or whose plans
disagree, are refused, unless the second measured a study again and replaces it (--replace)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis import calibration, dataset, provenance
from mwlab import datasetmerge
from tests.capabilities import provided

Mwlab = Callable[..., subprocess.CompletedProcess[str]]
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(900)


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def _measured(mwlab: Mwlab, tmp_path: Path, family: str, out: Path) -> Path:
    results = tmp_path / family
    _ok(mwlab("measure", "--profile", "studies", "--results", str(results), "--families", family))
    _ok(mwlab("dataset", "archive", "--profile", "studies", "--results", str(results),
              "--out", str(out)))  # fmt: skip
    return out


def test_two_studies_measured_apart_merge_into_one_dataset(tmp_path: Path, mwlab: Mwlab) -> None:
    provided((ROOT / "build" / "loadgen.jar").exists(), "build/loadgen.jar", "make build")
    data = tmp_path / "data" / "studies"
    memcached = _measured(mwlab, tmp_path, "baseline_direct", data / "2026-01-01")
    queue = _measured(mwlab, tmp_path, "mq_db_baseline", data / "2026-01-02")
    assert dataset.provenance(queue)["complete"] is False

    merged = data / "2026-01-03"
    out = _ok(mwlab("dataset", "merge", str(memcached), str(queue), "--out", str(merged)))
    assert "studies 2015 (" in out and "2018 (" in out
    dataset.verify(merged)
    doc = dataset.provenance(merged)
    assert doc["complete"] is True
    assert doc["families"] == dataset.families(merged) == ["baseline_direct", "mq_db_baseline"]
    assert sorted(doc["study_commits"]) == sorted(doc["fingerprints"]) == ["2015", "2018"]
    for study, folder in (("2018", memcached), ("2015", queue)):
        assert doc["fingerprints"][study] == dataset.provenance(folder)["fingerprint"]
    assert [p["studies"] for p in doc["pieces"]] == [["2018"], ["2015"]]
    assert doc["study_commits"]["2015"]["machine"] == dataset.provenance(queue)["machine"]
    # Every run of both, counted again from the merged tables.
    times = pd.read_parquet(merged / "data" / "run_times.parquet")
    parts = [pd.read_parquet(f / "data" / "run_times.parquet") for f in (memcached, queue)]
    assert len(times) == sum(len(p) for p in parts) == doc["runs"]["total"]
    assert set(times["family"]) == {"baseline_direct", "mq_db_baseline"}
    # PostgreSQL's tools come with the study that used them; the host is the second's.
    tools = json.loads((merged / "environment" / "tools.json").read_text())
    assert "initdb" in tools and "memcached" in tools
    host = (merged / "environment" / "host.json").read_text()
    assert host == (queue / "environment" / "host.json").read_text()
    # Each study's dates are its own runs'.
    for study, folder in (("2018", memcached), ("2015", queue)):
        own = dataset.provenance(folder)
        when = {k: doc["study_commits"][study][k] for k in ("measured_from", "measured_to", "days")}
        assert when == {k: own[k] for k in ("measured_from", "measured_to", "days")}
    assert dataset.latest(tmp_path / "data", prefer="studies") == merged

    # A study measured in both is refused: its families are measured with one code.
    twice = mwlab("dataset", "merge", str(memcached), str(memcached), "--out", str(tmp_path / "x"))
    assert twice.returncode != 0 and "both datasets hold study 2018" in twice.stderr
    assert not (tmp_path / "x").exists()
    # Unless the second measured it again (--replace): its runs, code and pieces replace the
    # first's, and the first keeps its other study.
    again = tmp_path / "again"
    shutil.copytree(memcached, again)
    newer = {"commit": "f" * 40, "fingerprint": "e" * 64}
    (again / dataset.PROVENANCE).write_text(json.dumps(dataset.provenance(again) | newer))
    dataset.write_manifest(again)
    redone = data / "2026-01-04"
    out = _ok(mwlab("dataset", "merge", str(merged), str(again), "--replace",
                    "--out", str(redone)))  # fmt: skip
    assert f"study 2018 taken from {again}" in out
    dataset.verify(redone)
    doc = dataset.provenance(redone)
    assert doc["families"] == ["baseline_direct", "mq_db_baseline"]
    assert doc["study_commits"]["2018"]["commit"] == newer["commit"]
    assert doc["fingerprints"] == {
        "2015": dataset.provenance(queue)["fingerprint"],
        "2018": newer["fingerprint"],
    }
    assert [p["studies"] for p in doc["pieces"]] == [["2015"], ["2018"]]
    # The kept study keeps its dates, although the first's span held the replaced study's.
    assert doc["study_commits"]["2015"]["days"] == dataset.provenance(queue)["days"]
    assert len(pd.read_parquet(redone / "data" / "run_times.parquet")) == len(times)
    assert doc["runs"]["total"] == len(times)
    # A family measured again in a later session (--families) replaces a study's only family:
    # refused, for the study would keep a calibration none of its runs was measured under.
    alone = mwlab("dataset", "merge", str(merged), str(again), "--families", "baseline_direct",
                  "--out", str(tmp_path / "w"))  # fmt: skip
    assert alone.returncode != 0 and "does not keep" in alone.stderr
    # Within a study that keeps other families (here the merged dataset's catalogue counts its
    # second family in the 2018 study too), it replaces the first's runs of that family; the
    # study keeps the first's commit and code, and the provenance names the family's own.
    two = tmp_path / "two"
    shutil.copytree(merged, two)
    catalogue = yaml.safe_load((two / dataset.CATALOGUE).read_text())
    catalogue["families"]["mq_db_baseline"]["study"] = 2018
    (two / dataset.CATALOGUE).write_text(yaml.safe_dump(catalogue, sort_keys=False))
    dataset.write_manifest(two)
    regained = data / "2026-01-05"
    out = _ok(mwlab("dataset", "merge", str(two), str(again), "--families", "baseline_direct",
                    "--out", str(regained)))  # fmt: skip
    assert f"family baseline_direct taken from {again}" in out
    dataset.verify(regained)
    doc, before = dataset.provenance(regained), dataset.provenance(two)
    assert doc["families"] == ["baseline_direct", "mq_db_baseline"]
    assert doc["study_commits"]["2018"]["commit"] == before["study_commits"]["2018"]["commit"]
    family = doc["family_commits"]["baseline_direct"]
    assert (family["study"], family["commit"], family["fingerprint"]) == (
        "2018", newer["commit"], newer["fingerprint"])  # fmt: skip
    assert doc["runs"]["total"] == len(times)
    # --families names every family the second holds.
    wrong = mwlab("dataset", "merge", str(two), str(again), "--families", "mq_db_baseline",
                  "--out", str(tmp_path / "w"))  # fmt: skip
    assert wrong.returncode != 0 and "--families names every family it holds" in wrong.stderr
    assert not (tmp_path / "w").exists()
    # A second that holds every study of the first leaves nothing of it to merge.
    whole = mwlab("dataset", "merge", str(memcached), str(again), "--replace",
                  "--out", str(tmp_path / "z"))  # fmt: skip
    assert whole.returncode != 0 and "nothing of the first is left" in whole.stderr
    assert not (tmp_path / "z").exists()
    # So is a second plan that would plan the first's families otherwise.
    other = tmp_path / "other"
    shutil.copytree(queue, other)
    study = yaml.safe_load((other / dataset.STUDY).read_text())
    study["families"]["baseline_direct"]["levels"]["virtual_clients"] = [1, 4]
    (other / dataset.STUDY).write_text(yaml.safe_dump(study))
    dataset.write_manifest(other)
    refused = mwlab("dataset", "merge", str(memcached), str(other), "--out", str(tmp_path / "y"))
    assert refused.returncode != 0 and "otherwise than its own did" in refused.stderr
    assert "virtual_clients=4/rep1" in refused.stderr


def _calibration() -> dict:
    return json.loads((ROOT / "data" / "quick" / "2026-11-26-2" / "calibration.json").read_text())


def test_a_merged_calibration_takes_each_study_from_its_own_measurement() -> None:
    first = _calibration()  # the 2016 and 2018 studies' targets
    second = copy.deepcopy(first)
    second["speed_factors"] = {s: {"server": 0.9} for s in ("2015", "2016", "2018")}
    second["settings"]["studies"] = {"2015": 0.2}  # a study's own factor may differ
    db = {"name": "database_baseline_2015", "study": "2015", "studies": ["2015"], "runs": [],
          "role": "server", "fit": {"speed": 0.4}}  # fmt: skip
    second["targets"].append(db)
    second["warnings"] = ["calibration run calibration/target=database_baseline_2015,speed=0.4"
                          "/rep1: steal 30% > 20%; its fit may not hold",
                          "calibration run calibration/target=server_write_max,speed=0.2/rep1: "
                          "steal 30% > 20%; its fit may not hold"]  # fmt: skip
    # The second fitted memcached's target again, on runs 10 % faster at the same speeds.
    (again,) = (t for t in second["targets"] if t["name"] == "server_write_max")
    again["fit"]["speed"] = 0.25
    for run in again["runs"]:
        run["throughput_study"] *= 1.1
    again["runs"][-1]["status"] = "failed"  # only the lower speed both ran to the end
    merged = calibration.merge(first, second, ["2016", "2018"])
    assert merged["speed_factors"]["2015"] == {"server": 0.9}
    refit = {r["name"]: r for r in merged["refits"]}
    assert set(refit) == {t["name"] for t in first["targets"]}  # the 2015 target is new
    memcached = refit["server_write_max"]
    kept = next(t for t in first["targets"] if t["name"] == "server_write_max")["fit"]["speed"]
    assert (memcached["kept"], memcached["other"], memcached["role"]) == (kept, 0.25, "server")
    assert memcached["speed"] == 0.1 and memcached["throughput_ratio"] == pytest.approx(1 / 1.1)
    # Merged again, a dataset keeps the refits it already held.
    assert calibration.merge(merged, second, ["2016", "2018"])["refits"][:3] == merged["refits"]
    for study in ("2016", "2018"):
        assert merged["speed_factors"][study] == first["speed_factors"][study]
    assert [t["name"] for t in merged["targets"]] == [
        *(t["name"] for t in first["targets"]),
        "database_baseline_2015",
    ]
    assert merged["targets"][:-1] == first["targets"]
    # A warning goes with its run's target: the second's memcached runs are not the data's.
    assert len(merged["warnings"]) == 1 and "database_baseline_2015" in merged["warnings"][0]
    assert merged["settings"]["studies"] == {"2015": 0.2}

    # One target serving studies of both measurements: no single fit would hold for both.
    with pytest.raises(calibration.CalibrationError, match="server_write_max serves studies"):
        calibration.merge(first, second, ["2018"])
    # Another scale or other settings: not one model.
    other = copy.deepcopy(second)
    other["settings"]["duration_s"] = 99.0
    with pytest.raises(calibration.CalibrationError, match="differ in settings"):
        calibration.merge(first, other, ["2016", "2018"])
    other = {**second, "scale": 0.1}
    with pytest.raises(calibration.CalibrationError, match="differ in scale"):
        calibration.merge(first, other, ["2016", "2018"])


def _session(first: dict, ratio: float) -> dict:
    """`first`'s calibration measured again: every fit and run `ratio` times as large."""
    later = copy.deepcopy(first)
    for target in later["targets"]:
        target["fit"]["speed"] *= ratio
        for run in target["runs"]:
            if run["throughput_study"] is not None:
                run["throughput_study"] *= ratio
    return later


def test_a_later_session_adds_refits_and_keeps_the_first_calibration() -> None:
    first = _calibration()
    later = _session(first, 1.5)
    added = calibration.add_session(first, later)
    assert added["speed_factors"] == first["speed_factors"]
    assert added["targets"] == first["targets"]
    assert [r["name"] for r in added["refits"]] == [t["name"] for t in first["targets"]]
    assert all(r["throughput_ratio"] == pytest.approx(1 / 1.5) for r in added["refits"])
    # A third session: two refits of each target, and each target's variation is the larger.
    third = _session(first, 1.1)
    both = calibration.add_session(added, third)
    assert len(both["refits"]) == 2 * len(first["targets"])
    assert len(calibration.session_ratios(both)) == len(both["refits"])
    assert calibration.target_variation(both) == calibration.target_variation(added)
    assert calibration.target_variation(both) != calibration.target_variation(
        calibration.add_session(first, third)
    )
    with pytest.raises(calibration.CalibrationError, match="differ in scale"):
        calibration.add_session(first, {**later, "scale": 0.1})


def test_the_report_names_each_studys_commit_and_machine() -> None:
    xeon = {"cores": 2, "cpu_model": "Intel Xeon", "kernel": "6.1"}
    epyc = {"cores": 2, "cpu_model": "AMD EPYC", "kernel": "6.1"}
    one = provenance.macros(
        {"commit": "60fe0f5df149db7ea9afc487c01d9eec7f439f4e", "machine": xeon}, "data"
    )
    assert r"\newcommand{\DataCommit}{\texttt{60fe0f5df149}}" in one
    assert r"\newcommand{\DataCommitWord}{commit}" in one
    assert r"\newcommand{\DataMachine}{2 cores, Intel Xeon, Linux 6.1}" in one
    by_study = {"2016": {"commit": "60fe0f5df149db7", "machine": xeon},
                "2018": {"commit": "60fe0f5df149db7", "machine": xeon},
                "2015": {"commit": "a976103a1b2c3d4e", "machine": epyc}}  # fmt: skip
    two = provenance.macros(
        {"commit": "a976103a1b2c3d4e", "machine": xeon, "study_commits": by_study}, "data"
    )
    assert (
        r"\newcommand{\DataMachine}{2 cores, AMD EPYC, Linux 6.1 (the 2015 study) and "
        r"2 cores, Intel Xeon, Linux 6.1 (the 2016 and 2018 studies)}" in two
    )
    assert (
        r"\newcommand{\DataCommit}{\texttt{a976103a1b2c} (the 2015 study) and "
        r"\texttt{60fe0f5df149} (the 2016 and 2018 studies)}" in two
    )
    assert r"\newcommand{\DataCommitWord}{commits}" in two


def test_a_merged_report_gives_each_studys_dates_and_the_machine_its_studies_share() -> None:
    # The top-level machine is one measurement's; every study here ran on another kernel.
    old = {"cores": 2, "cpu_model": "Intel Xeon", "kernel": "6.18.44-fc-v669"}
    new = {"cores": 2, "cpu_model": "Intel Xeon", "kernel": "6.18.44-fc-v657"}
    by_study = {
        "2015": {"commit": "04c7effb3a96e1ec", "machine": new, "days": ["2026-11-28"]},
        "2016": {"commit": "7d4042a84fdb9aec", "machine": new, "days": ["2026-11-29"]},
        "2018": {"commit": "7d4042a84fdb9aec", "machine": new,
                 "days": ["2026-11-28", "2026-11-29"]},
    }  # fmt: skip
    doc = {"machine": old, "days": ["2026-11-28", "2026-11-29"], "study_commits": by_study}
    text = provenance.macros(doc, "data")
    assert r"\newcommand{\DataMachine}{2 cores, Intel Xeon, Linux 6.18.44-fc-v657}" in text
    assert (
        r"\newcommand{\DataDates}{2026-11-28 (the 2015 study), 2026-11-29 (the 2016 study)"
        r" and 2026-11-28 to 2026-11-29 (the 2018 study)}" in text
    )
    assert provenance.kernels(doc, old) == "6.18.44-fc-v657"
    # A day no study lists is a family measured again alone: its day and code are named.
    again = {
        **doc,
        "days": [*doc["days"], "2026-12-02"],
        "pieces": [{"commit": "34ee446320efd3d5", "started_at": "2026-12-02T02:42:08"}],
    }
    assert (
        r" and 2026-11-28 to 2026-11-29 (the 2018 study), and 2026-12-02 (a family measured"
        r" again alone, commit \texttt{34ee446320ef})}" in provenance.macros(again, "data")
    )
    # The title's span: the first and last day, no commit.
    assert r"\newcommand{\DataSpan}{2026-11-28 to 2026-12-02}" in provenance.macros(again, "data")
    # Studies on two kernels are named with each.
    by_study["2015"]["machine"] = old
    assert provenance.kernels(doc, new) == (
        "6.18.44-fc-v669 (the 2015 study) and 6.18.44-fc-v657 (the 2016 and 2018 studies)"
    )
    # Studies measured over the same days share one span.
    for where in by_study.values():
        where["days"] = ["2026-11-28", "2026-11-29"]
    assert r"\newcommand{\DataDates}{2026-11-28 to 2026-11-29}" in provenance.macros(doc, "data")
    # A merged dataset from before studies named their dates gives the whole span; a
    # measurement's provenance names no study and gives its own machine.
    del by_study["2016"]["days"]
    assert r"\newcommand{\DataDates}{2026-11-28 to 2026-11-29}" in provenance.macros(doc, "data")
    assert provenance.kernels({"machine": old}, old) == "6.18.44-fc-v669"


def test_each_studys_dates_come_from_its_own_runs(tmp_path: Path) -> None:
    runs = {
        "mq_throughput": [("2026-11-28T06:35:07Z", "2026-11-28T06:40:00Z")],
        "baseline_direct": [("2026-11-28T21:18:36Z", "2026-11-28T21:20:00Z"),
                            ("2026-11-29T03:30:00Z", "2026-11-29T03:33:26Z")],
        "writes_2016": [],  # a family without runs adds no date
    }  # fmt: skip
    for family, times in runs.items():
        (tmp_path / "data" / family).mkdir(parents=True)
        table = pd.DataFrame(times, columns=["started_at", "finished_at"], dtype=object)
        table.to_parquet(tmp_path / "data" / family / "manifests.parquet")
    held = {"2015": ["mq_throughput"], "2018": ["baseline_direct"], "2016": ["writes_2016"]}
    dates = datasetmerge.study_dates(tmp_path, held)
    assert dates == {
        "2015": {"measured_from": "2026-11-28T06:35:07+00:00",
                 "measured_to": "2026-11-28T06:40:00+00:00", "days": ["2026-11-28"]},
        "2018": {"measured_from": "2026-11-28T21:18:36+00:00",
                 "measured_to": "2026-11-29T03:33:26+00:00",
                 "days": ["2026-11-28", "2026-11-29"]},
    }  # fmt: skip
