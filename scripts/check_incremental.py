"""Checks that the pipeline is incremental on a finished profile: `check_incremental.py PROFILE
[RESULTS]`, RESULTS the profile's results folder (default results/PROFILE, relative to the
checkout).

1. With nothing changed, a dry run plans no job (no finished run is repeated).
2. After the prose of a section changes, it plans only the documents: the `paper` job and the
   `supplement` it cites (both are built from the sections).
3. After analysis code changes, it plans analysis jobs and no measurement.

Every dry run happens in a copy of the checkout in a temporary directory (its files, the
profile's results and Snakemake's records, with their times), and the edits are made there:
the checkout is never modified, however the check ends. SIGINT, SIGTERM and SIGHUP remove the
copy; after SIGKILL it stays in the temporary directory, named mwlab-incremental-*.
"""

import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
JOB_ROW = re.compile(r"^(\w+)\s+(\d+)$")
# Snakemake's records the dry runs need; logs, locks and environments are left out.
SNAKEMAKE_SKIP = ("log", "locks", "conda", "conda-archive", "singularity", "shadow")


def _stop(signum: int, _frame: FrameType | None) -> None:
    # SystemExit unwinds through the `with` blocks: the dry run is killed, the copy removed.
    raise SystemExit(128 + signum)


def working_copy(root: Path, dest: Path, results: Path) -> None:
    """Copies into `dest` what the dry runs read: the files git knows of (tracked, and
    untracked ones it does not ignore), the profile's results and Snakemake's records."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, capture_output=True, check=True,
    ).stdout  # fmt: skip
    for rel in sorted(set(listed.decode().split("\0")) - {""}):
        src = root / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel, follow_symlinks=False)
    if (root / results).is_dir():
        shutil.copytree(root / results, dest / results, symlinks=True)
    records = root / ".snakemake"
    if records.is_dir():
        shutil.copytree(
            records, dest / ".snakemake", symlinks=True,
            ignore=lambda d, names: SNAKEMAKE_SKIP if Path(d) == records else (),
        )  # fmt: skip


def planned_jobs(tree: Path, profile: str, results: Path) -> dict[str, int]:
    proc = subprocess.run(
        ["snakemake", str(results / "report.pdf"), "--profile", f"workflows/profiles/{profile}",
         "--config", f"results={results}", "--dry-run", "--quiet", "rules"],
        cwd=tree, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"snakemake dry run failed:\n{proc.stderr}")
    jobs = {}
    for line in (proc.stdout + proc.stderr).splitlines():
        match = JOB_ROW.match(line.strip())
        if match and match.group(1) != "total":
            jobs[match.group(1)] = int(match.group(2))
    return jobs


def planned_after_edit(
    tree: Path, rel: str, edit: str, profile: str, results: Path
) -> dict[str, int]:
    """The plan after appending `edit` to a file of the copy `tree`; restored afterwards."""
    path = tree / rel
    original = path.read_bytes()
    print(f"incremental: dry run after editing {rel} (in the copy)", flush=True)
    try:
        # Snakemake compares checksums of small inputs, so the edit must change the content.
        path.write_bytes(original + edit.encode())
        return planned_jobs(tree, profile, results)
    finally:
        path.write_bytes(original)


def check(tree: Path, profile: str, results: Path) -> int:
    before = planned_jobs(tree, profile, results)
    if before:
        print(f"incremental: a finished profile still plans jobs: {before}", file=sys.stderr)
        return 1
    prose = "paper/sections/overview.tex"
    after = planned_after_edit(tree, prose, "% an edit of the prose\n", profile, results)
    if set(after) - {"paper", "supplement", "all"}:
        print(f"incremental: editing prose plans more than the paper: {after}", file=sys.stderr)
        return 1
    if "paper" not in after:
        print("incremental: editing prose does not rebuild the paper", file=sys.stderr)
        return 1
    code = "analysis/latex.py"
    analysis = planned_after_edit(tree, code, "# an edit of the analysis\n", profile, results)
    if "run_point" in analysis or "family_data" not in analysis:
        print(f"incremental: an analysis edit plans {analysis}", file=sys.stderr)
        return 1
    print(
        "incremental: nothing to do when nothing changed; prose edits rebuild only the PDF;"
        f" analysis edits rerun {sum(analysis.values())} analysis jobs and no run"
    )
    return 0


def main(argv: list[str]) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop)  # also when inherited as ignored
    profile = argv[0] if argv else "smoke"
    results = Path(argv[1]) if len(argv) > 1 else Path("results", profile)
    # Snakemake keys its records by the path as the pipeline names it: relative to the checkout.
    if results.is_absolute():
        results = results.resolve().relative_to(ROOT)
    with tempfile.TemporaryDirectory(prefix="mwlab-incremental-") as tmp:
        tree = Path(tmp)
        working_copy(ROOT, tree, results)
        print(f"incremental: dry runs in a copy of the checkout at {tree}", flush=True)
        return check(tree, profile, results)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
