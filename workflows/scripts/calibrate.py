"""Snakemake script of rule calibrate: fits the scale model's speed factors to the study.

Reads each calibration run's stable-window throughput on its target's side and writes
calibration.json (analysis.calibration holds the fit)."""

import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.aggregate import per_source_totals, trim_to_clients
from analysis.calibration import calibrate, machine_shares
from analysis.parse import load_run
from analysis.parse.manifest import read_manifest
from common.scalemodel import load_machines


def measure(run_dir: Path, side: str, warmup_s: float, cooldown_s: float) -> dict[str, Any]:
    """Status, scale and stable-window throughput (every request type) of one run."""
    manifest = read_manifest(run_dir / "run.json")
    row = {"status": str(manifest["status"]), "scale": float(manifest["point"]["scale"])}
    row |= machine_shares(manifest)
    throughput = math.nan
    if row["status"] == "ok":
        totals = per_source_totals(trim_to_clients(load_run(run_dir).windows, warmup_s, cooldown_s))
        mine = totals[(totals["side"] == side) & (totals["type"] == "all")]
        if not mine.empty:
            throughput = float(mine["throughput_ops"].sum())
    return {**row, "throughput_ops": throughput}


def main(runs: list[dict[str, Any]], settings: dict[str, Any], out: Path) -> None:
    machines = load_machines()
    rows = []
    for r in runs:
        side = machines.targets[r["target"]].side
        measured = measure(Path(r["dir"]), side, settings["warmup_s"], settings["cooldown_s"])
        rows.append({"run": r["path"], "target": r["target"], "speed": r["speed"], **measured})
    result = calibrate(pd.DataFrame(rows), machines, settings["factor"])
    result["settings"] = settings
    for warning in result["warnings"]:
        print(f"calibrate: warning: {warning}", file=sys.stderr)
    out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    sm = snakemake  # type: ignore[name-defined]  # noqa: F821
    main(list(sm.params.runs), dict(sm.params.settings), Path(sm.output.calibration))
