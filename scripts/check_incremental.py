"""Checks that the pipeline is incremental on a finished profile.

1. With nothing changed, a dry run plans no job (no finished run is repeated).
2. After the prose of a section changes, it plans only the `paper` job.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOB_ROW = re.compile(r"^(\w+)\s+(\d+)$")


def planned_jobs(profile: str, target: str) -> dict[str, int]:
    proc = subprocess.run(
        ["snakemake", "--profile", f"workflows/profiles/{profile}", "--dry-run", "--quiet",
         "rules", target],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"snakemake dry run failed:\n{proc.stderr}")
    jobs = {}
    for line in (proc.stdout + proc.stderr).splitlines():
        match = JOB_ROW.match(line.strip())
        if match and match.group(1) != "total":
            jobs[match.group(1)] = int(match.group(2))
    return jobs


def main(argv: list[str]) -> int:
    profile = argv[0] if argv else "smoke"
    target = f"results/{profile}/report.pdf"
    before = planned_jobs(profile, target)
    if before:
        print(f"incremental: a finished profile still plans jobs: {before}", file=sys.stderr)
        return 1
    prose = ROOT / "paper" / "sections" / "overview.tex"
    os.utime(prose)
    after = planned_jobs(profile, target)
    if set(after) - {"paper", "all"}:
        print(f"incremental: editing prose plans more than the paper: {after}", file=sys.stderr)
        return 1
    if "paper" not in after:
        print("incremental: editing prose does not rebuild the paper", file=sys.stderr)
        return 1
    print("incremental: nothing to do when nothing changed; prose edits rebuild only the PDF")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
