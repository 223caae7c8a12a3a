"""The scale model's text follows the calibration's fits: the sign of each intercept and what
a larger budget gave in the calibration's own runs."""

from __future__ import annotations

from typing import Any

from tests.pipeline.scripts import load_script

scale_model = load_script("scale_model")


def _target(role: str, intercept: float, low: float, high: float) -> dict[str, Any]:
    runs = [
        {"speed": 0.1, "status": "ok", "throughput_study": low},
        {"speed": 0.2, "status": "ok", "throughput_study": high},
    ]
    return {"role": role, "fit": {"model": "affine", "intercept": intercept}, "runs": runs}


def test_words_follow_the_sign_of_each_roles_intercepts() -> None:
    cal = {
        "targets": [
            _target("server", 148.3, 2957.0, 5766.0),
            _target("middleware", -3035.6, 3225.0, 9485.0),
            _target("middleware", -3684.0, 2281.0, 8246.0),
        ]
    }
    words = scale_model.intercept_words(cal)
    middleware, server = words.split("; ")
    assert middleware.startswith("the middleware's fits have a negative intercept")
    assert "$-$3{,}036 and $-$3{,}684" in middleware and "fixed cost" in middleware
    assert "twice the budget gave 2.94 and 3.62 times the throughput, more than" in middleware
    assert server.startswith("the server's fit has a positive intercept (+148~ops/s)")
    assert "fixed cost" not in server
    assert server.endswith("1.95 times the throughput, less than in proportion")


def test_intercepts_of_both_signs_are_named_so() -> None:
    cal = {
        "targets": [
            _target("middleware", -10.0, 100.0, 210.0),
            _target("middleware", 5.0, 100.0, 190.0),
        ]
    }
    words = scale_model.intercept_words(cal)
    assert "intercepts of both signs" in words and "fixed cost" not in words
    assert words.endswith("2.10 and 1.90 times the throughput")
