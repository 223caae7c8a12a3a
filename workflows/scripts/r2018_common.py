"""Shared pieces of the 2018 sections' scripts: reading points, naming macros."""

import re
import sys
from pathlib import Path

import pandas as pd
import yaml


def log_to(path: str) -> None:
    sys.stderr = Path(path).open("w")  # noqa: SIM115 - the script's lifetime


def reference(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text())


def points(path: str, kind: str = "all") -> pd.DataFrame:
    """Per-point rows of one request type (`all` = every type together)."""
    df = pd.read_parquet(path)
    return df[df["type"] == kind].copy()


def camel(*parts: object) -> str:
    """Letters-only macro name part: `one_server`, `read-only`, 8 -> OneServerReadOnlyEight."""
    words = []
    for p in parts:
        for w in re.split(r"[^A-Za-z0-9]+", str(p)):
            if w:
                words.append(_number_word(w) if w.isdigit() else w[0].upper() + w[1:])
    return "".join(words)


_DIGITS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]


def _number_word(digits: str) -> str:
    return "".join(_DIGITS[int(d)] for d in digits)
