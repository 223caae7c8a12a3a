"""The experimental-setup section's tables: the plan (catalogue and profile) as the report
shows it, one block per family, and per family the macros of its configuration, so prose never
types a configuration value by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from analysis.latex import escape
from analysis.report.figures import longtable_macros, macro
from common.stability import CI_LEVEL
from common.studies import STUDY_WORDS
from mwlab.catalogue import (
    Family,
    PlannedRun,
    design_of,
    expand,
    family_settings,
    load_catalogue,
    load_profile,
    selected_levels,
)
from testbed.point import Point


def _fmt(value: Any) -> str:
    if value is None:
        return "all"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _words(name: str) -> str:
    """A catalogue name in words: underscores would keep LaTeX from breaking the line."""
    return escape(name.replace("_", " "))


def _topology(spec: dict[str, Any]) -> str:
    clients = (
        f"{spec['client_machines']} clients $\\times$ {spec['instances_per_client']} inst."
        f" $\\times$ {spec['threads']} thr."
    )
    return f"{spec['servers']} srv, {spec['middlewares']} mw, {clients}"


def _workers(spec: dict[str, Any]) -> int | str:
    """The point's worker count per middleware (the point model's default where the
    catalogue sets none; SimpleMQ's its own); a dash without a middleware."""
    point = Point.model_validate(spec)
    if not point.middlewares:
        return "--"
    return point.queue.workers if point.queue is not None else point.middleware.workers


def _queue_rows(runs: list[PlannedRun]) -> list[str]:
    """A SimpleMQ family's workload and middleware rows."""
    spec = runs[0].spec

    def q(spec: dict[str, Any]) -> Any:
        return Point.model_validate(spec).queue_settings

    preload = _one(runs, lambda x: q(x).preload)
    preloaded = "" if preload == "0" else f", {preload} messages preloaded"
    workers = _one(runs, _workers)
    workers = "workers as the factors set" if workers == VARIED else f"{workers} workers"
    return [
        rf"\quad Workload & {_sized(_one(runs, lambda x: q(x).message_size), 'messages')},"
        rf" mix {_words(_one(runs, lambda x: q(x).mix))}, pop"
        rf" {_words(_one(runs, lambda x: q(x).pop))}{preloaded} \\",
        (
            rf"\quad Middleware & SimpleMQ, {workers} per middleware, one"
            r" database connection each \\"
            if spec["middlewares"]
            else r"\quad Middleware & none: each client calls the database \\"
        ),
    ]


def _data_size(spec: dict[str, Any]) -> int:
    """The bytes of a value, or of a SimpleMQ message (which has no key)."""
    point = Point.model_validate(spec)
    return point.queue.message_size if point.queue is not None else point.workload.data_size


VARIED = "as the factors set"


def _one(runs: list[PlannedRun], value: Callable[[dict[str, Any]], Any]) -> str:
    """A setting the family's runs share, or, where a factor varies it, words saying so
    (rather than the first run's value)."""
    values = {_fmt(value(r.spec)) for r in runs}
    return values.pop() if len(values) == 1 else VARIED


def _sized(size: str, noun: str) -> str:
    return f"{noun} of the sizes the factors set" if size == VARIED else f"{size}-byte {noun}"


def _threads(runs: list[PlannedRun]) -> str:
    """The middleware's threads as its design counts them."""
    workers = _one(runs, _workers)
    designs = sorted({design_of(r.spec) for r in runs})
    if designs == ["2016"]:
        threads = "read threads as the factors set" if workers == VARIED else (
            f"{workers} read threads")  # fmt: skip
        return f"design 2016: {threads} and one write thread per server"
    if designs == ["2018"]:
        return "workers as the factors set" if workers == VARIED else f"{workers} workers"
    return f"designs {' and '.join(designs)} with the same \\texttt{{-t}} {workers}"


def family_rows(family: Family, runs: list[PlannedRun], profile: dict[str, Any]) -> list[str]:
    settings = family_settings(family, profile)
    levels = selected_levels(family, profile)
    factors = "; ".join(
        f"{_words(f.name)}: {_words(', '.join(chosen))}"
        + ("" if len(chosen) == len(f.levels) else f" (of {len(f.levels)})")
        for f, chosen in zip(family.factors, levels, strict=True)
    )
    spec = runs[0].spec
    if spec.get("system") == "simplemq":
        described = _queue_rows(runs)
    else:
        workload = spec["workload"]
        values = _sized(_one(runs, lambda x: x["workload"]["data_size"]), "values")
        described = [
            rf"\quad Workload & {values}"
            rf", keys 1..{workload['key_maximum']}, driver {escape(spec['driver'])} \\",
            (
                rf"\quad Middleware & {_threads(runs)}, replication "
                rf"{_one(runs, lambda x: x['middleware']['replication'])}, sharded "
                rf"{_one(runs, lambda x: x['middleware']['sharded'])} \\"
                if spec["middlewares"]
                else r"\quad Middleware & none: clients talk to the servers \\"
            ),
        ]
    return [
        # A paragraph column: a long title wraps instead of running into the margin.
        # The family's identifier, where its data lie, is in the reproduction appendix.
        rf"\multicolumn{{2}}{{@{{}}p{{\linewidth}}@{{}}}}{{\textbf{{{escape(family.title)}}} "
        rf"({family.study} study)}} \\",
        rf"\quad Machines & {_topology(spec)} \\",
        *described,
        rf"\quad Factors & {factors} \\",
        rf"\quad Protocol & {len(runs)} runs: {settings['repetitions']} "
        rf"repetition{'' if settings['repetitions'] == 1 else 's'} of "
        rf"{settings['duration_s']:g}\,s, first {settings['warmup_s']:g}\,s and last "
        rf"{settings['cooldown_s']:g}\,s cut \\",
        r"\addlinespace",
    ]


def render(families: dict[str, Family], plan: list[PlannedRun], profile: dict[str, Any]) -> str:
    """`\\SetupHead` and `\\SetupRows` for the section's longtable (two columns)."""
    rows = []
    for name, family in families.items():
        runs = [r for r in plan if r.family == name]
        if runs:
            rows += family_rows(family, runs, profile)
    return longtable_macros("Setup", r"\toprule", rows)


def macro_stem(name: str) -> str:
    """`factorial_2018` -> `FactorialEighteen`: LaTeX macro names are letters only."""
    words = [STUDY_WORDS.get(part, part) for part in name.split("_")]
    if any(not w.isalpha() for w in words):
        raise ValueError(f"cannot make a macro name of {name!r}")
    return "".join(w[:1].upper() + w[1:] for w in words)


def _join(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def catalogue_macros(
    families: dict[str, Family], plan: list[PlannedRun], profile: dict[str, Any]
) -> str:
    """Per family: its fixed parameters and the levels of each factor, as macros
    `\\Cat<Family><What>`, so prose never types a configuration value by hand."""
    # The report's one confidence level (analysis/aggregate.py), for every caption and text.
    lines = [
        rf"\newcommand{{\CILevel}}{{{100 * CI_LEVEL:g}\,\%}}",
        # The profile's name, for the setup table's caption.
        macro("SetupProfile", rf"\texttt{{{escape(profile['profile'])}}}").rstrip("\n"),
    ]
    for name, family in families.items():
        runs = [r for r in plan if r.family == name]
        if not runs:
            continue
        stem = "Cat" + macro_stem(name)
        spec = runs[0].spec
        settings = family_settings(family, profile)
        values = {
            "Servers": spec["servers"],
            "Middlewares": spec["middlewares"],
            "ClientMachines": spec["client_machines"],
            "Instances": spec["instances_per_client"],
            "Threads": spec["threads"],
            "VirtualClients": spec["virtual_clients"],
            "Workers": _workers(spec),
            "DataSize": _data_size(spec),
            "KeySize": spec.get("workload", {}).get("key_size") or "--",
            "Repetitions": settings["repetitions"],
            "Duration": f"{settings['duration_s']:g}",
        }
        for factor, chosen in zip(family.factors, selected_levels(family, profile), strict=True):
            values["Levels" + macro_stem(factor.name)] = escape(_join(list(chosen)))
        lines += [rf"\newcommand{{\{stem}{key}}}{{{value}}}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


def planned(profile: Path, catalogue: Path) -> pd.DataFrame:
    """One row per planned point of a profile: family, series (the point's own path when
    it runs alone) and step length."""
    config = yaml.safe_load(profile.read_text())
    plan = expand(load_catalogue(catalogue), load_profile(config, source=str(profile)))
    rows = [
        {"family": r.family, "series": r.series or r.path, "duration_s": r.spec["duration_s"]}
        for r in plan
    ]
    return pd.DataFrame(rows, columns=["family", "series", "duration_s"])
