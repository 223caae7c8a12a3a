"""Macro names of the 2018 report (analysis.studies.s2018.macros)."""

from __future__ import annotations

import pytest

from analysis.report import figures as fg
from analysis.studies.s2018.macros import camel


@pytest.mark.parametrize(
    ("parts", "name"),
    [
        (("one_server", "read-only", 8), "OneServerReadOnlyEight"),
        (("SeedsFull", 64, "mw_x"), "SeedsFullSixFourMwX"),
        (("Mget", "non-sharded", 12, "Ms"), "MgetNonShardedOneTwoMs"),
        (("Batch", "write-only"), "BatchWriteOnly"),
    ],
)
def test_camel_spells_levels_and_digits_in_letters(parts: tuple, name: str) -> None:
    assert camel(*parts) == name
    # Every name is a valid LaTeX macro name.
    assert fg.macro(name, "1").startswith(f"\\newcommand{{\\{name}}}")


def test_camel_keeps_inner_capitals_and_skips_separators() -> None:
    assert camel("ModelCompClients", "__", 0) == "ModelCompClientsZero"
