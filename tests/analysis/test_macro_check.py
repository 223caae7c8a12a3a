"""The report's number macros are read back and implausible values are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.report import macro_check as mc
from analysis.report.figures import MISSING, macro, num, pct


def names(violations: list[mc.Violation]) -> list[str]:
    return [v.name for v in violations]


def test_definitions_are_read_with_nested_braces_and_comments() -> None:
    text = (
        "% Generated.\n"
        r"\newcommand{\SixteenLawRuns}{2{,}311}"
        "\n"
        r"\newcommand{\Sentence}{busy {\em 12}\,\% of the time}  % trailing"
        "\n"
        r"\renewcommand*{\Redone}{1}\providecommand\Bare{2}"
        "\n"
        r"\newcommand{\WithArg}[1]{#1\,\%}"
        "\n"
        r"\def\Defined{0.5}"
        "\n"
        "% \\newcommand{\\Commented}{9}\n"
    )
    assert mc.parse_macros(text) == {
        "SixteenLawRuns": "2{,}311",
        "Sentence": r"busy {\em 12}\,\% of the time",
        "Redone": "1",
        "Bare": "2",
        "WithArg": r"#1\,\%",
        "Defined": "0.5",
    }


def test_an_unbalanced_value_is_an_error_naming_the_macro() -> None:
    with pytest.raises(mc.MacroError, match=r"x.tex: \\Broken: unbalanced"):
        mc.parse_macros(r"\newcommand{\Broken}{1{2}", "x.tex")


def test_numbers_as_the_formatters_write_them() -> None:
    assert mc.number(num(2311)) == 2311
    assert mc.number(pct(0.565)) == pytest.approx(0.565)
    assert mc.number(pct(-0.729)) == pytest.approx(-0.729)
    assert mc.number("0.638") == 0.638
    assert mc.number(MISSING) is None
    assert mc.number("3, 5, 7") is None


def test_names_classify_by_their_last_word() -> None:
    assert mc.kind_of("SixteenFactErrorShare") == "share"
    assert mc.kind_of("ValidationStableShare") == "share"
    assert mc.kind_of("SixteenMMOneRho") == "utilisation"
    assert mc.kind_of("MiddlewareUtilisation") == "utilisation"
    # A count of busy workers, a ratio, an error and a setting are not fractions.
    for name in ("WritesEightBusy", "SixteenSeedMMOneRatio", "ScaleCheckWorstThroughputPercent",
                 "SixteenMMmResponseError", "BottleneckThreshold", "SharedWorkers"):  # fmt: skip
        assert mc.kind_of(name) is None, name


def test_plausible_numbers_pass() -> None:
    text = "".join(
        [
            macro("SixteenFactTopShare", pct(0.565)),
            macro("ValidationStableShare", pct(0.0)),
            macro("SixteenMaxServerShare", pct(1.0)),
            macro("SixteenMMOneRho", num(0.638, 3)),
            macro("SixteenMMmRho", MISSING),
            macro("WritesEightBusy", num(27.2, 1)),
            macro("SixteenMMOneResponseError", pct(-0.729)),
            macro("SixteenSeedMMOneRatio", "38"),
        ]
    )
    assert mc.check(mc.parse_macros(text)) == []


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("SixteenFactTopShare", r"-0.1\,\%", "negative share"),
        ("SixteenFactTopShare", r"100.1\,\%", "share over 1"),
        ("ValidationStableShare", "1.5", "share over 1"),
        ("SixteenMMOneRho", "1.02", "utilisation over 1"),
        ("SixteenMMmRho", "-0.2", "negative utilisation"),
        ("SixteenMMmRho", "n/a", "must be one number"),
        ("SixteenLawRuns", "nan", "not a finite number"),
        ("SixteenMMOneResponse", "-inf", "not a finite number"),
        ("SixteenMaxRatio", r"NaN\,\%", "not a finite number"),
        ("Sentence", r"busy nan\,\% of the time", "not a finite number"),
        ("Scale", "Infinity", "not a finite number"),
    ],
)
def test_implausible_numbers_are_named(name: str, value: str, why: str) -> None:
    found = mc.check(mc.parse_macros(rf"\newcommand{{\{name}}}{{{value}}}"), "n.tex")
    assert names(found) == [name]
    assert why in found[0].why
    assert str(found[0]).startswith(f"n.tex: \\{name} = ")


def test_words_that_contain_inf_are_not_infinities() -> None:
    text = r"\newcommand{\Note}{information, \inf of the set, Infiniband}"
    assert mc.check(mc.parse_macros(text)) == []


def test_the_command_line_lists_violations_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "r2018").mkdir()
    (tmp_path / "ok.tex").write_text(macro("TopShare", pct(0.3)))
    (tmp_path / "r2018" / "bad.tex").write_text(macro("MMOneRho", "1.2"))
    assert mc.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "bad.tex: \\MMOneRho = '1.2': a utilisation over 1" in out
    (tmp_path / "r2018" / "bad.tex").write_text(macro("MMOneRho", "0.2"))
    assert mc.main([str(tmp_path)]) == 0
    assert mc.main([str(tmp_path / "absent")]) == 2
