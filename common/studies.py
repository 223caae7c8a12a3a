"""The three studies this project reproduces, by id (their year), with the word each year
takes in LaTeX macro names, which take no digits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Study:
    id: str
    word: str  # the year in macro names: FindingsEighteen, ScaleSpeedServerFifteen


STUDIES: dict[str, Study] = {
    s.id: s
    for s in (
        Study("2015", "Fifteen"),
        Study("2016", "Sixteen"),
        Study("2018", "Eighteen"),
    )
}
# Year -> macro word, in year order.
STUDY_WORDS: dict[str, str] = {s.id: s.word for s in STUDIES.values()}
