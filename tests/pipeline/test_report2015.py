"""The 2015 section's scripts as Snakemake calls them, for a profile that measures none of
the 2015 families (a dataset archived before them): every output is written, each part says
it was not measured, and the macro file defines every number macro the section's prose uses.
The parts themselves are tested on hand-made tables in tests/analysis/studies/s2015."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake.io.container import Namedlist

from .scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SECTION = ROOT / "paper" / "sections" / "study2015.tex"
OUTPUTS = {
    "r2015_baseline": ("figure:baseline.pdf",),
    "r2015_throughput": ("table:table2.tex", "drop_table:drop.tex", "why_table:why.tex"),
    "r2015_scaling": ("figure:scaling.pdf",),
    "r2015_factorial": ("table:factorial.tex", "distributions:distributions.tex"),
    "r2015_pop": ("figure:pop.pdf", "table:pop.tex"),
    "r2015_stability": ("figure:stability.pdf",),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("paper2015")
    numbers = []
    for script, files in OUTPUTS.items():
        outputs = {k: str(out / f) for k, f in (s.split(":") for s in files)}
        outputs["numbers"] = str(out / f"{script}.json")
        inputs = {"reference": str(ROOT / "workflows" / "reference2015.yaml")}
        call = SimpleNamespace(input=Namedlist(fromdict=inputs),
                               output=Namedlist(fromdict=outputs))  # fmt: skip
        load_script(script).main(call)
        numbers.append(outputs["numbers"])
    tex = out / "numbers2015.tex"
    call = SimpleNamespace(input=Namedlist(fromdict={"numbers": numbers}),
                           output=Namedlist(fromdict={"tex": str(tex)}))  # fmt: skip
    load_script("r2015_numbers").main(call)
    return out


def test_every_output_is_written(built: Path) -> None:
    for files in OUTPUTS.values():
        for f in files:
            assert (built / f.split(":")[1]).stat().st_size > 0, f


def test_each_part_says_it_was_not_measured(built: Path) -> None:
    text = (built / "numbers2015.tex").read_text()
    measured = dict(re.findall(r"\\newcommand\{\\(Mq\w*Measured)\}\{(\d)\}", text))
    assert measured and set(measured.values()) == {"0"}
    # The seed's side stays: its cells and its numbers.
    assert "1{,}845.4" in (built / "table2.tex").read_text()
    assert r"\newcommand{\MqBaselineSeedSmall}{1{,}950}" in text


def test_the_macro_file_defines_every_macro_the_section_uses(built: Path) -> None:
    defined = set(
        re.findall(r"\\newcommand\{\\(Mq[A-Za-z]+)\}", (built / "numbers2015.tex").read_text())
    )
    used = set(re.findall(r"\\(Mq[A-Za-z]+)", SECTION.read_text()))
    assert used, "the section uses no number macro"
    assert used <= defined, sorted(used - defined)
