"""What the 2018 study's report scripts read: a family's points (only those the validation
kept), the reference file of the two 2018 reports, and the log a script writes to."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml

from analysis.validate import usable_points


def log_to(path: str) -> None:
    """Send the script's warnings and errors to its rule's log."""
    sys.stderr = Path(path).open("w")  # noqa: SIM115 - the script's lifetime


def reference(path: str) -> dict:
    """The reference file (workflows/reference2018.yaml) as a mapping."""
    return yaml.safe_load(Path(path).read_text())


def points(path: str, kind: str = "all", validation: str | None = None) -> pd.DataFrame:
    """Per-point rows of one request type (`all` = every type together); with the
    validation table, only the points it keeps (analysis.validate.usable_points)."""
    df = usable(pd.read_parquet(path), path, validation)
    return df[df["type"] == kind].copy()


def usable(table: pd.DataFrame, path: str, validation: str | None) -> pd.DataFrame:
    """The rows of a family's table (data/<family>/<table>.parquet at `path`) whose point
    has a run the validation kept; all rows without a validation table."""
    if validation is None:
        return table
    family = Path(path).parent.name
    return usable_points(table, pd.read_parquet(validation), family)
