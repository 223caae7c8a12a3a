"""Sentences about a 2^k r design's allocation of variation that read as prose whatever the
data: factors named in words with their letter beside, "most" only for a majority share."""

from __future__ import annotations

from collections.abc import Callable, Mapping

# A share above this is "most of" the variation; below, only "the largest share of" it.
MAJORITY = 0.5


def term_words(term: str, words: Mapping[str, str], letter: Callable[[str], str]) -> str:
    """`servers` -> `the number of servers ($q_{A}$)`; `servers:workers` -> `the interaction
    of the number of servers and the number of workers ($q_{AC}$)`."""
    factors = term.split(":")
    unknown = [f for f in factors if f not in words]
    if unknown:
        raise ValueError(f"no words for factor(s) {unknown}")
    named = [words[f] for f in factors]
    if len(named) == 1:
        text = named[0]
    else:
        listed = ", ".join(named[:-1]) + " and " + named[-1]
        text = f"the interaction of {listed}"
    return f"{text} ($q_{{{letter(term)}}}$)"


def share_phrase(share: float) -> str:
    return "most of" if share > MAJORITY else "the largest share of"


def summary(
    replications: int,
    throughput: tuple[str, float],
    response: tuple[str, float],
    error: float,
    describe: Callable[[str], str],
    pct: Callable[[float], str],
) -> str:
    """Which term explains the largest share of the throughput and of the response-time
    variation, and how much the experimental error explains."""
    (x_term, x_share), (r_term, r_share) = throughput, response
    reps = f"{replications} repetition" + ("" if replications == 1 else "s")
    first = (
        f"With {reps}, {describe(x_term)} explains {share_phrase(x_share)} the throughput "
        f"variation ({pct(x_share)})"
    )
    if r_term == x_term:
        second = f" and also {share_phrase(r_share)} the response-time variation ({pct(r_share)})"
    else:
        second = (
            f", and {describe(r_term)} {share_phrase(r_share)} the response-time variation "
            f"({pct(r_share)})"
        )
    if replications < 2:
        return (
            f"{first}{second}; with one repetition the design has no error term (its "
            "``error'' is zero by construction, not a finding), so its effects have no "
            "intervals here."
        )
    return (
        f"{first}{second}; the experimental error explains {pct(error)} of the throughput "
        "variation."
    )


def study_summary(
    term: str, share: float, describe: Callable[[str], str], pct: Callable[[float], str]
) -> str:
    return (
        f"In the study, {describe(term)} explained {share_phrase(share)} the throughput "
        f"variation ({pct(share)})."
    )
