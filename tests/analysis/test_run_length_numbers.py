"""The run lengths per study the report cites (analysis.report.validation.run_length_numbers),
on a small hand-made validation table."""

from __future__ import annotations

import pandas as pd

from analysis.report.validation import numbers, run_length_numbers


def run(
    family: str,
    measured_s: float,
    throughput: float,
    scale: float,
    reruns: int = 0,
    status: str = "ok",
    excluded: bool = False,
) -> dict[str, object]:
    return {"family": family, "run": f"{family}/x/rep1", "status": status, "reruns": reruns,
            "measured_s": measured_s, "throughput_ops": throughput, "scale": scale,
            "excluded": excluded}  # fmt: skip


def test_lengths_per_study_in_wall_and_study_time_and_the_requests_a_p99_rests_on() -> None:
    table = pd.DataFrame(
        [
            # 2018 at s = 0.05: runs of 4 and 8 s measured once; a rerun of 20 s.
            run("reads", 4, 250, 0.05),
            run("writes", 8, 250, 0.05),
            run("writes", 20, 100, 0.05, reruns=1),
            # The scale check's runs at another factor stand apart.
            run("check", 40, 5000, 0.1),
            # Excluded and failed runs hold no requests the tables read.
            run("reads", 4, 99_999, 0.05, excluded=True),
            run("reads", 400, 1, 0.05, status="failed"),
            # 2015 at its own s = 0.2.
            run("mq", 19, 400, 0.2),
            run("mq", 19, 400, 0.2),
        ]
    )
    studies = {"reads": "2018", "writes": "2018", "check": "2018", "mq": "2015"}
    out = run_length_numbers(table, studies)
    assert out["ValidationLengthWallEighteen"] == "4 to 8"
    assert out["ValidationLengthStudyEighteen"] == "0.2 to 0.4"
    # Kept runs at s: 1,000, 2,000 and 2,000 requests.
    assert out["ValidationRequestsEighteen"] == "2{,}000"
    assert out["ValidationRequestsLowEighteen"] == "1{,}200"
    assert out["ValidationTailEighteen"] == "20"
    assert out["ValidationTailLowEighteen"] == "12"
    # One length only: no range.
    assert out["ValidationLengthWallFifteen"] == "19"
    assert out["ValidationLengthStudyFifteen"] == "3.8"
    assert out["ValidationRequestsFifteen"] == "7{,}600"
    assert out["ValidationTailFifteen"] == "76"
    # A study without runs has dashes.
    assert out["ValidationLengthWallSixteen"] == "--"
    assert out["ValidationRequestsSixteen"] == "--"


def test_numbers_define_the_run_lengths_also_without_studies_or_scales() -> None:
    table = pd.DataFrame([run("reads", 4, 250, 0.05)]).drop(columns="scale")
    assert run_length_numbers(table, {"reads": "2018"})["ValidationLengthWallEighteen"] == "--"
    table = table.assign(
        windows=16, rel_half_width=0.01, law_error=0.0, bound_fraction=0.5, flags="",
        stable=True,
    )  # fmt: skip
    text = numbers(table)
    assert r"\newcommand{\ValidationLengthStudyEighteen}{--}" in text
    assert r"\newcommand{\ValidationTailLowFifteen}{--}" in text
