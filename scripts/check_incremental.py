"""Checks that the pipeline is incremental on a finished profile.

1. With nothing changed, a dry run plans no job (no finished run is repeated).
2. After the prose of a section changes, it plans only the `paper` job.
3. After analysis code changes, it plans analysis jobs and no measurement.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOB_ROW = re.compile(r"^(\w+)\s+(\d+)$")


def planned_jobs(profile: str, target: str) -> dict[str, int]:
    proc = subprocess.run(
        ["snakemake", target, "--profile", f"workflows/profiles/{profile}", "--dry-run",
         "--quiet", "rules"],
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


def planned_after_edit(path: Path, edit: str, profile: str, target: str) -> dict[str, int]:
    """The plan after appending `edit` to a file; the file is restored afterwards."""
    original = path.read_text()
    try:
        # Snakemake compares checksums of small inputs, so the edit must change the content.
        path.write_text(original + edit)
        return planned_jobs(profile, target)
    finally:
        path.write_text(original)


def main(argv: list[str]) -> int:
    profile = argv[0] if argv else "smoke"
    target = f"results/{profile}/report.pdf"
    before = planned_jobs(profile, target)
    if before:
        print(f"incremental: a finished profile still plans jobs: {before}", file=sys.stderr)
        return 1
    prose = ROOT / "paper" / "sections" / "overview.tex"
    after = planned_after_edit(prose, "% an edit of the prose\n", profile, target)
    if set(after) - {"paper", "all"}:
        print(f"incremental: editing prose plans more than the paper: {after}", file=sys.stderr)
        return 1
    if "paper" not in after:
        print("incremental: editing prose does not rebuild the paper", file=sys.stderr)
        return 1
    code = ROOT / "analysis" / "latex.py"
    analysis = planned_after_edit(code, "# an edit of the analysis\n", profile, target)
    if "run_point" in analysis or "family_data" not in analysis:
        print(f"incremental: an analysis edit plans {analysis}", file=sys.stderr)
        return 1
    print(
        "incremental: nothing to do when nothing changed; prose edits rebuild only the PDF;"
        f" analysis edits rerun {sum(analysis.values())} analysis jobs and no run"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
