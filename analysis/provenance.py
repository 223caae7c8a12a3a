"""Where, when and from which code a profile's data was measured: the provenance a reference
dataset carries (analysis/dataset.py) and the report's title page and testbed section state.

It is computed once, from the measurement (rule provenance): the run manifests give the dates
and the machine's load, the validation gives the stable, unstable and failed counts and the
steal, and `results/<profile>/measurement.json`, which `mwlab measure` keeps, gives the
commit, the code fingerprint and the pieces the measurement ran in. A measurement run by
Snakemake directly has no such record: its commit is the checkout's at analysis time, marked
so.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import dataset
from analysis.latex import escape
from analysis.validate import check_runs


def git_commit(root: Path = Path()) -> str:
    """The checkout's commit, with `-dirty` when tracked files differ from it; `unknown`
    outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def _share(series: pd.Series) -> dict[str, float | None]:
    values = pd.to_numeric(series, errors="coerce").dropna()
    if values.empty:
        return {"median": None, "max": None}
    return {"median": round(float(values.median()), 4), "max": round(float(values.max()), 4)}


def dates(manifests: pd.DataFrame) -> dict[str, Any]:
    """When the runs of `manifests` were measured: the first start, the last end and the days
    any run started on."""
    started = pd.to_datetime(manifests["started_at"], errors="coerce", utc=True).dropna()
    finished = pd.to_datetime(manifests["finished_at"], errors="coerce", utc=True).dropna()
    return {
        "measured_from": started.min().isoformat() if len(started) else None,
        "measured_to": finished.max().isoformat() if len(finished) else None,
        "days": sorted({t.date().isoformat() for t in started}),
    }


def compute(
    profile: str,
    validation: pd.DataFrame,
    manifests: pd.DataFrame,
    machine: Mapping[str, Any],
    measurement: Mapping[str, Any] | None,
    hashes: Mapping[str, str],
) -> dict[str, Any]:
    """The provenance of one profile's measurement (see the module's docstring)."""
    ok = validation[validation["status"] == "ok"]
    pieces = list((measurement or {}).get("pieces") or [])
    commits = list(dict.fromkeys(p["commit"] for p in pieces if p.get("commit")))
    return {
        "profile": profile,
        # Every piece ran the same measurement code (mwlab measure refuses other code); the
        # commits may still differ where only the analysis or the report changed between.
        "commit": commits[-1] if commits else git_commit(),
        "commits": commits,
        "commit_source": "mwlab measure" if commits else "checkout at analysis",
        "fingerprint": (measurement or {}).get("fingerprint"),
        **dict(hashes),
        "machine": {
            k: machine.get(k) for k in ("cores", "kernel", "cpu_model", "memory_gib", "machine")
        },
        **dates(manifests),
        "pieces": pieces,
        "runs": {
            "total": len(validation),
            "completed": len(ok),
            "stable": int(ok["stable"].sum()),
            "unstable": int((~ok["stable"].astype(bool)).sum()),
            "failed": int((validation["status"] != "ok").sum()),
        },
        "steal_share": _share(validation.get("steal", pd.Series(dtype=float))),
        "busy_share": _share(manifests.get("host_busy", pd.Series(dtype=float))),
    }


def of_dataset(
    folder: Path,
    profile: str,
    measurement: Mapping[str, Any],
    hashes: Mapping[str, str],
) -> dict[str, Any]:
    """The provenance of a dataset merged from pieces, computed again from its tables (every
    family's runs checked as rule validation checks them) and its first piece's machine."""
    checked, manifests = [], []
    for family in dataset.families(folder):
        tables = {
            t: pd.read_parquet(folder / "data" / family / f"{t}.parquet")
            for t in ("runs", "manifests", "windows")
        }
        checked.append(check_runs(tables["runs"], tables["manifests"], family, tables["windows"]))
        if not tables["manifests"].empty:
            # A column no run of this family filled takes its type from the families that did.
            manifests.append(tables["manifests"].dropna(axis=1, how="all"))
    machine = json.loads((folder / "environment" / "host.json").read_text())
    return compute(
        profile,
        pd.concat(checked, ignore_index=True),
        pd.concat(manifests, ignore_index=True),
        machine,
        measurement,
        hashes,
    )


def _macro(name: str, value: object) -> str:
    return rf"\newcommand{{\{name}}}{{{value}}}" + "\n"


def _percent(value: float | None) -> str:
    """A share as a percentage of one decimal; one that rounds to zero says how small it is
    ("0 %", "under 0.1 %") rather than print 0.0 %."""
    if value is None:
        return "--"
    if value <= 0:
        return r"0\,\%"
    if value < 0.0005:
        return r"under 0.1\,\%"
    return rf"{100 * value:.1f}\,\%"


def _short(commit: str) -> str:
    return commit[:12] + ("-dirty" if commit.endswith("-dirty") else "")


def _machine(machine: Mapping[str, Any]) -> str:
    return (
        f"{machine.get('cores', '?')} cores, {machine.get('cpu_model') or 'unknown CPU'}, "
        f"Linux {machine.get('kernel', '?')}"
    )


def _by_study(
    doc: Mapping[str, Any], what: Callable[[Mapping[str, Any]], str]
) -> dict[str, list[str]]:
    """The studies sharing each value of `what` (a commit, a machine), where a merged dataset
    names each study's (`study_commits`)."""
    out: dict[str, list[str]] = {}
    for study, where in sorted((doc.get("study_commits") or {}).items()):
        out.setdefault(what(where), []).append(study)
    return out


def _per_study(groups: dict[str, list[str]], whole: str) -> str:
    """The value every study shares (`whole` where no study names its own); otherwise each
    value with its studies."""
    if not groups:
        return whole
    if len(groups) == 1:
        # A merged dataset's top-level machine is one measurement's, not its studies'.
        return next(iter(groups))
    items = [
        f"{value} (the {' and '.join(studies)}" + (" studies)" if len(studies) > 1 else " study)")
        for value, studies in groups.items()
    ]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _commits(doc: Mapping[str, Any]) -> dict[str, list[str]]:
    return _by_study(doc, lambda where: rf"\texttt{{{escape(_short(str(where.get('commit'))))}}}")


def _machines(doc: Mapping[str, Any]) -> dict[str, list[str]]:
    return _by_study(doc, lambda where: escape(_machine(where.get("machine") or {})))


def _when(days: list[str]) -> str:
    return "--" if not days else days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def _dates(doc: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each study's measurement days, where every study names its own (a merged dataset's
    from before they did names none, and the report then gives the whole span)."""
    studies = doc.get("study_commits") or {}
    if not studies or any("days" not in where for where in studies.values()):
        return {}
    return _by_study(doc, lambda where: _when(list(where["days"])))


def _measured_again(doc: Mapping[str, Any]) -> str:
    """The days no study's dates hold (a family measured again alone, merged in later), with
    the commits of the pieces measured on them: ``, and 2026-12-02 (...)'' or nothing."""
    studies = doc.get("study_commits") or {}
    listed = {d for where in studies.values() for d in where.get("days", [])}
    extra = sorted(set(doc.get("days") or []) - listed) if _dates(doc) else []
    if not extra:
        return ""
    commits = sorted(
        {_short(str(piece["commit"])) for piece in doc.get("pieces") or []
         if str(piece.get("started_at", ""))[:10] in extra and piece.get("commit")}
    )  # fmt: skip
    typed = ", ".join(rf"\texttt{{{c}}}" for c in commits)
    code = f", commit {typed}" if commits else ""
    return f", and {_when(extra)} (a family measured again alone{code})"


def kernels(doc: Mapping[str, Any], host: Mapping[str, Any]) -> str:
    """The kernel the runs ran on, per study where a merged dataset's studies differ;
    `host` (the dataset's environment) where the provenance names no study's machine."""
    groups = _by_study(doc, lambda where: escape(str((where.get("machine") or {}).get("kernel"))))
    groups.pop("None", None)
    return _per_study(groups, escape(str(host.get("kernel", "?"))))


def macros(doc: Mapping[str, Any], source: str) -> str:
    """The report's `\\Data...` macros; `source` says where the report read the data from."""
    days = doc.get("days") or []
    machine = doc.get("machine") or {}
    runs = doc.get("runs") or {}
    commit = str(doc.get("commit") or "unknown")
    commits = _commits(doc)
    return "".join(
        [
            _macro("DataSource", escape(source)),
            _macro("DataProfile", escape(str(doc.get("profile", "?")))),
            _macro("DataCommit", _per_study(commits, rf"\texttt{{{escape(_short(commit))}}}")),
            _macro("DataCommitWord", "commits" if len(commits) > 1 else "commit"),
            _macro("DataDates", _per_study(_dates(doc), _when(days)) + _measured_again(doc)),
            # The first and last day alone, for the title (no commit, no dataset path).
            _macro("DataSpan", _when(sorted(days))),
            _macro("DataDays", len(days)),
            _macro("DataPieces", len(doc.get("pieces") or []) or 1),
            _macro("DataMachine", _per_study(_machines(doc), escape(_machine(machine)))),
            _macro("DataRuns", runs.get("total", 0)),
            _macro("DataStable", runs.get("stable", 0)),
            _macro("DataUnstable", runs.get("unstable", 0)),
            _macro("DataFailed", runs.get("failed", 0)),
            _macro("DataStealMedian", _percent((doc.get("steal_share") or {}).get("median"))),
            _macro("DataStealMax", _percent((doc.get("steal_share") or {}).get("max"))),
            _macro("DataBusyMedian", _percent((doc.get("busy_share") or {}).get("median"))),
        ]
    )
