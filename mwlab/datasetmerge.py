"""`mwlab dataset merge`: one reference dataset from two that measured different studies of one
profile, each with its own measurement code.

Pieces of one measurement share their code (`mwlab measure --onto` refuses other code), so a
study added to the catalogue after a dataset was measured would otherwise mean measuring every
study again. The studies share no run, budget or calibration target, so each may be measured on
its own: the second dataset's plan (its catalogue and profile) must plan the first's families
exactly as the first's own plan did, and the calibrations must be one scale model (same scale,
bounds and settings; no target serving studies of both). The merged dataset takes every study's
tables and speed factors from the dataset that measured it, the second's plan and host (every
study of the second stays, while `replace` may drop every study the first's host ran), the
first's delay check and tools (with those only the second used), and a provenance computed
again from all tables that names each study's commit, code fingerprint, machine and
measurement dates.

With `replace`, the second may hold studies the first holds too: it replaces them. That is how
studies measured again on newer code (the memcached studies after a change to the middleware)
enter a dataset without measuring its other studies again. The first keeps only its other
studies: their families, runs, speed factors and pieces.

With `families`, the second holds only those families, of studies the first keeps, measured
again in a later session (the scale check at more scales): they replace the first's. A family
that reads nothing of its study's calibration (the scale check compares its own points at
several scales, each with the budgets its runs record) can be measured on its own this way.
The first's calibration stays the dataset's; the second's fits of the same targets become
refits, a further session of the calibration's repeatability. The provenance names the
replaced families' own commit, code, machine and dates (`family_commits`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from analysis import calibration, dataset, provenance
from common.environment import HOST_RECORD, TOOLS_RECORD
from mwlab.catalogue import expand, load_catalogue, load_profile

CAL = "calibration.json"


class MergeError(Exception):
    """Two datasets that cannot be merged, with the reason."""


def _plan(folder: Path, families: list[str]) -> list[tuple[str, str, str]]:
    """How a dataset's own plan runs these families: path, spec and scale model of each run."""
    # A dataset's profile names no results folder: the report's build gives it one.
    config = {"results": str(folder), **yaml.safe_load((folder / dataset.STUDY).read_text())}
    runs = expand(
        load_catalogue(folder / dataset.CATALOGUE), load_profile(config, source=str(folder))
    )
    return sorted(
        (r.path, json.dumps(r.spec, sort_keys=True), json.dumps(r.scale_model, sort_keys=True))
        for r in runs
        if r.family in families
    )


def studies(folder: Path) -> dict[str, list[str]]:
    """The studies a dataset holds, each with its families (from its own catalogue)."""
    catalogue = load_catalogue(folder / dataset.CATALOGUE)
    out: dict[str, list[str]] = {}
    for family in dataset.families(folder):
        out.setdefault(str(catalogue[family].study), []).append(family)
    return out


def fingerprints(doc: dict[str, Any], held: dict[str, list[str]]) -> dict[str, str | None]:
    """Each study's measurement-code fingerprint: a merged dataset names them per study, a
    measurement's one holds for all its studies."""
    return {s: (doc.get("fingerprints") or {}).get(s, doc.get("fingerprint")) for s in held}


def _verified(first: Path, second: Path) -> None:
    for folder in (first, second):
        try:
            dataset.verify(folder)
        except dataset.DatasetError as e:
            raise MergeError(str(e)) from None
    docs = [dataset.provenance(first), dataset.provenance(second)]
    if docs[0].get("profile") != docs[1].get("profile"):
        raise MergeError(
            f"{first} holds profile {docs[0].get('profile')!r}, {second} "
            f"{docs[1].get('profile')!r}: a dataset holds one profile"
        )


def _same_plan(first: Path, second: Path, mine: list[str]) -> None:
    """Refuse a second plan that plans the first's kept families otherwise than the first's."""
    try:
        planned = _plan(second, mine)
    except (KeyError, ValueError) as e:
        raise MergeError(f"{second}'s plan cannot plan {first}'s families: {e}") from None
    own = _plan(first, mine)
    if planned != own:
        paths = sorted({p for p, *_ in set(planned) ^ set(own)})
        raise MergeError(
            f"{second}'s catalogue and profile plan {first}'s families otherwise than its own "
            f"did ({len(paths)} run(s) differ, e.g. {', '.join(paths[:3])}): merge only "
            "measurements whose plans agree on the earlier studies"
        )


def check(
    first: Path, second: Path, replace: bool = False
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The studies each dataset gives the merge (with `replace`, the first's without those the
    second holds), after refusing a pair that cannot be merged."""
    _verified(first, second)
    held = (studies(first), studies(second))
    shared = sorted(set(held[0]) & set(held[1]))
    if shared and not replace:
        raise MergeError(
            f"both datasets hold study {', '.join(shared)}: a study is measured with one code "
            "(measure its other families with `mwlab measure --onto`, or pass --replace to take "
            "it from the second)"
        )
    held = ({s: f for s, f in held[0].items() if s not in shared}, held[1])
    if not held[0]:
        raise MergeError(
            f"{second} holds every study of {first} ({', '.join(shared)}): nothing of the first "
            "is left to merge"
        )
    _same_plan(first, second, sorted(f for fams in held[0].values() for f in fams))
    return held


def check_families(
    first: Path, second: Path, families: list[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The families each dataset gives a merge in which the second's `families` replace the
    first's (`mwlab dataset merge --families`), after refusing a pair that cannot be merged:
    the second must hold exactly those families, of studies the first keeps."""
    _verified(first, second)
    theirs = sorted(dataset.families(second))
    if sorted(families) != theirs:
        raise MergeError(
            f"{second} holds families {', '.join(theirs) or 'none'}, not "
            f"{', '.join(sorted(families))}: --families names every family it holds"
        )
    ours = studies(first)
    held_first = {s: [f for f in fs if f not in families] for s, fs in ours.items()}
    missing = sorted(set(studies(second)) - {s for s, fs in held_first.items() if fs})
    if missing:
        raise MergeError(
            f"{second} measured families of study {', '.join(missing)}, which {first} does not "
            "keep: measure a whole study with its calibration and merge it with --replace"
        )
    _same_plan(first, second, sorted(f for fs in held_first.values() for f in fs))
    return {s: fs for s, fs in held_first.items() if fs}, studies(second)


def _tools(first: Path, second: Path, staging: Path) -> None:
    """The first's tools, with those only the second used (PostgreSQL for its study)."""
    name = TOOLS_RECORD
    tools = json.loads((second / name).read_text()) | json.loads((first / name).read_text())
    (staging / name).write_text(json.dumps(dict(sorted(tools.items())), indent=2) + "\n")


HOST = HOST_RECORD


def stage(
    first: Path, second: Path, out: Path, held: tuple[dict, dict], families: bool = False
) -> Path:
    """The merged files in `out`'s staging folder (without provenance and manifest); with
    `families`, the second's families replace the first's within studies the first keeps."""
    if out.exists():
        raise MergeError(f"{out}: exists already; a dataset is never overwritten")
    staging = out.with_name(out.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    skip = {dataset.PROVENANCE, dataset.VERDICTS, dataset.MANIFEST}
    kept = {f for fams in held[0].values() for f in fams}
    # The first's files (its machine, delay check, environment) and the families it keeps, then
    # the second's families.
    for name in dataset.read_manifest(first):
        parts = Path(name).parts
        family = parts[1] if len(parts) > 2 and parts[0] == "data" else None
        if name not in skip and (family is None or family in kept):
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(first / name, staging / name)
    for family in dataset.families(second):
        shutil.copytree(second / "data" / family, staging / "data" / family)
    for table in dataset.RUN_TABLES:
        name = f"data/{table}.parquet"
        mine = pd.read_parquet(first / name)
        # Every run table names its run as <family>/<point>/<rep>.
        mine = mine[mine["run"].str.split("/").str[0].isin(kept)]
        merged = pd.concat([mine, pd.read_parquet(second / name)])
        merged.to_parquet(staging / f"{name}.tmp", index=False)
        dataset.compact(staging / f"{name}.tmp", staging / name)
        (staging / f"{name}.tmp").unlink()
    _tools(first, second, staging)
    # The second's host: the first's may have run only studies the second replaces.
    shutil.copy2(second / HOST, staging / HOST)
    # Without the scale model a measurement has no calibration; with it, both studies' do.
    cal = [json.loads(p.read_text()) for p in (first / CAL, second / CAL) if p.is_file()]
    if families and cal:
        if len(cal) == 2:
            cal = [calibration.add_session(cal[0], cal[1])]
        (staging / CAL).write_text(json.dumps(cal[0], indent=2, sort_keys=True) + "\n")
    elif len(cal) == 2:
        try:
            merged_cal = calibration.merge(cal[0], cal[1], held[0])
        except calibration.CalibrationError as e:
            raise MergeError(str(e)) from None
        (staging / CAL).write_text(json.dumps(merged_cal, indent=2, sort_keys=True) + "\n")
    elif (second / CAL).is_file():
        shutil.copy2(second / CAL, staging / CAL)
    # The second's plan plans both (checked), and carries the second study's settings.
    for name in (dataset.STUDY, dataset.CATALOGUE):
        shutil.copy2(second / name, staging / name)
    return staging


def study_dates(folder: Path, held: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """When each study's runs were measured (`provenance.dates`), from the dataset's tables."""
    out = {}
    for study, families in held.items():
        tables = [pd.read_parquet(folder / "data" / f / "manifests.parquet") for f in families]
        # A family without runs adds no date (and no column types to the others).
        tables = [t.dropna(axis=1, how="all") for t in tables if not t.empty]
        if tables:
            out[study] = provenance.dates(pd.concat(tables, ignore_index=True))
    return out


def provenance_of(
    staging: Path, first: Path, second: Path, held: tuple[dict, dict], families: bool = False
) -> dict:
    """The merged dataset's provenance, computed again from its tables: every piece of both
    (each with its studies' fingerprint), and per study the commit and code it was measured
    with, its machine and its dates (the report states each study's where they differ). With
    `families`, the studies stay the first's, and the second's families are named apart with
    their own commit, code, machine and dates (`family_commits`)."""
    docs = [dataset.provenance(first), dataset.provenance(second)]
    pieces, by_study = [], {}
    kept = {f for fs in held[0].values() for f in fs}
    by_family = {f: v for f, v in (docs[0].get("family_commits") or {}).items() if f in kept}
    for k, (doc, mine) in enumerate(zip(docs, held, strict=True)):
        codes = fingerprints(doc, mine)
        for piece in doc.get("pieces") or []:
            fams = piece.get("families") or [f for fs in mine.values() for f in fs]
            own = sorted({s for s, fs in mine.items() if set(fs) & set(fams)})
            if not own:
                continue  # a piece of a study the second replaces
            pieces.append({**piece, "studies": own, "fingerprint": codes[own[0]]})
        commits = doc.get("study_commits") or {}
        for study in mine:
            earlier = commits.get(study, {})
            if families and k == 1:
                for family in mine[study]:
                    by_family[family] = {
                        "study": study,
                        "commit": earlier.get("commit", doc.get("commit")),
                        "fingerprint": codes[study],
                        "machine": earlier.get("machine", doc.get("machine")),
                    } | study_dates(staging, {family: [family]})[family]
                continue
            by_study[study] = {
                "commit": earlier.get("commit", doc.get("commit")),
                "fingerprint": codes[study],
                # The machine may differ between the two measurements (another VM host).
                "machine": earlier.get("machine", doc.get("machine")),
            }
    profile = str(docs[1]["profile"])
    doc = provenance.of_dataset(
        staging,
        profile,
        {"pieces": pieces, "fingerprint": None},
        {
            "study_sha256": dataset.sha256(staging / dataset.STUDY),
            "catalogue_sha256": dataset.sha256(staging / dataset.CATALOGUE),
        },
    )
    # A study's dates are its own families' (a family measured again has its own).
    for study, when in study_dates(
        staging, held[0] if families else {s: f for h in held for s, f in h.items()}
    ).items():
        by_study[study] |= when
    held_families = sorted(f for h in held for fs in h.values() for f in fs)
    return doc | {
        "commits": list(dict.fromkeys(p["commit"] for p in pieces if p.get("commit"))),
        "families": held_families,
        "fingerprints": {s: v["fingerprint"] for s, v in sorted(by_study.items())},
        "study_commits": dict(sorted(by_study.items())),
        **({"family_commits": dict(sorted(by_family.items()))} if by_family else {}),
        "merged_from": [str(first), str(second)],
    }
