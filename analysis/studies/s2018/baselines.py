"""The baselines section (without and with middlewares): figures, the maximum-throughput
tables beside the study's, the per-machine bounds from the measured link capacities (seed
004's Table 1), the middlewares' statistics per worker count (its Figs 4-5), the
interactive-law checks (with Z = 0, and with N counted inside the middleware as in its
Fig. 6) and numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import pandas as pd

from analysis.report import figures as fg
from analysis.scale_model import in_study_time
from analysis.studies.s2018 import baseline_maxima, mw_statistics
from analysis.studies.s2018 import seed as seed2018
from analysis.studies.s2018.baseline_links import bandwidth_bound, link_bounds_table
from analysis.studies.s2018.interactive_law import interactive_law, modified_interactive_law


class Figures(NamedTuple):
    """Where the section's figures go."""

    direct: str
    mw_one: str
    mw_two: str
    law: str
    mw_stats: str
    law_modified: str


class Baselines(NamedTuple):
    """The section's LaTeX outputs, by the names of the rule's outputs."""

    tab_direct: str
    tab_mw: str
    tab_seeds_mw: str
    tab_seeds_law: str
    tab_linkcap: str
    numbers: str


def sources(ref: Mapping) -> list[str]:
    """The sources the tables' captions (in the section) name."""
    return [
        fg.macro("BaseDirectSourceSeedFour", fg.escape(ref["baselines_direct"]["source"])),
        fg.macro(
            "BaseDirectSourceSeedTwo", fg.escape(ref["seed002"]["baselines_direct"]["source"])
        ),
        fg.macro("BaseMwSource", fg.escape(ref["baselines_middleware"]["source"])),
    ]


def report(
    direct: pd.DataFrame,
    mw: pd.DataFrame,
    queue: pd.DataFrame,
    windows: pd.DataFrame,
    ref: Mapping,
    figures: Figures,
) -> Baselines:
    """The section from both families' points as measured, the middleware family's queue
    table and trimmed windows, and the reference file; figures are saved at `figures`."""
    # The same points in the study's time, for the tables beside seeds 002 and 004.
    mw_study = in_study_time(mw)
    numbers = sources(ref)
    baseline_maxima.figures(
        in_study_time(direct), mw_study, ref, figures.direct, (figures.mw_one, figures.mw_two)
    )
    direct_tex, macros = baseline_maxima.direct_table(direct, ref)
    numbers += macros
    mw_tex, macros = baseline_maxima.middleware_table(mw, ref)
    numbers += macros
    seeds_mw, seeds_law, macros = baseline_maxima.seeds_tables(mw_study, ref)
    numbers += macros
    numbers += interactive_law(direct, mw, figures.law)
    numbers += bandwidth_bound(direct, mw)
    linkcap, macros = link_bounds_table(direct, mw, ref)
    numbers += macros
    stats = mw_statistics.statistics_points(mw_study, queue, windows)
    seeds_queue = seed2018.baseline_queue_points(ref)
    numbers += mw_statistics.middleware_statistics(stats, figures.mw_stats, seeds_queue)
    numbers += modified_interactive_law(stats, figures.law_modified)
    return Baselines(direct_tex, mw_tex, seeds_mw, seeds_law, linkcap, "".join(numbers))
