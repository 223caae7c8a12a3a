"""Where the repository's parts are: each path defined once, for every package and rule file."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build"
WORKFLOWS = REPO / "workflows"
PROFILES = WORKFLOWS / "profiles"
CATALOGUE = WORKFLOWS / "catalogue.yaml"
MACHINES = WORKFLOWS / "machines.yaml"
# SimpleMQ's SQL: the schema, the procedures, one pop strategy each and the modes beyond the study.
SIMPLEMQ_SQL = REPO / "middleware" / "simplemq" / "sql"
