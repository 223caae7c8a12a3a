"""LaTeX of the findings: the per-family bottleneck table, one table of verdicts per study
(reproduced, contradicted or inconclusive, with the estimate and its interval) and the macros
the abstract and the conclusions are written from."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from analysis import construction, findings, linkload
from analysis.bottleneck import SATURATED
from analysis.latex import escape
from analysis.report import factor_words as fw
from analysis.report import figures as fg
from analysis.verdicts import Verdict
from common.studies import STUDY_WORDS

NOT_MEASURED = "not measured"
_UNICODE = {"→": r"$\to$", "−": r"$-$", "≤": r"$\le$", "≥": r"$\ge$", "ρ": r"$\rho$",
            "λ": r"$\lambda$", "μ": r"$\mu$", "×": r"$\times$", "±": r"$\pm$",
            "≈": r"$\approx$"}  # fmt: skip


def tex(text: str) -> str:
    """Escaped text, with the arrows and minus signs of the catalogue in math mode."""
    out = escape(text)
    for char, formula in _UNICODE.items():
        out = out.replace(char, formula)
    return out


def _family(name: str) -> str:
    return escape(fw.family_words(name))


def _group_words(family: str, group: Mapping[str, str]) -> str:
    levels = ", ".join(group.values()) or "all"
    return f"{fw.family_words(family)} ({levels.replace('_', ' ')})"


def _percentages(values: Mapping[str, float]) -> str:
    if not values:
        return NOT_MEASURED
    return "/".join(f"{100 * values[r]:.0f}" if r in values else "--" for r in linkload.ROLES)


def _threads(threads: Mapping[str, Any] | None) -> str:
    """The busiest pool and its busy share, "--" where the family records no pools."""
    if not threads:
        return "--"
    return f"{escape(threads['pool'])}: {100 * threads['busy']:.0f}"


def _row(*cells: str) -> str:
    """A table row whose paragraph cells are set ragged right (narrow columns)."""
    return " & ".join(r"\raggedright " + c for c in cells) + r" \tabularnewline"


def _group(group: Mapping[str, str]) -> str:
    return escape(", ".join(v.replace("_", " ") for v in group.values())) or "--"


def bottleneck_table(
    loads: Sequence[Mapping[str, Any]], catalogue: Mapping[str, Any]
) -> tuple[str, list[dict[str, Any]]]:
    """The table and its rows with the study's bottleneck beside ours."""
    rows, lines = [], []
    for r in loads:
        theirs = findings.study_bottleneck(catalogue, r["family"], r["group"])
        rows.append(
            {
                **r,
                "study": theirs["bottleneck"],
                "source": theirs["source"],
                "agrees": r["bottleneck"] in theirs.get("ours", ()),
            }
        )
        lines.append(
            _row(
                _family(r["family"]),
                _group(r["group"]),
                str(r["clients"]),
                f"{r['throughput']:,.0f}",
                _percentages(r["cpu"]),
                _percentages(r["link"]),
                _threads(r.get("threads")),
                escape(r["bottleneck"]),
                tex(theirs["bottleneck"]),
                tex(theirs["source"]),
            )
        )
    head = (
        r"\toprule Family & Group & N & X [ops/s] & CPU [\%] & Link [\%] & Threads [\%] & Ours &"
        r" Study & Source \\ \midrule"
    )
    table = fg.longtable_macros("Bottleneck", head, lines)
    return table, rows


VERDICT_WORDS = {
    Verdict.REPRODUCED: r"\textbf{reproduced}",
    Verdict.CONTRADICTED: r"\textbf{contradicted}",
    Verdict.INCONCLUSIVE: r"\textbf{inconclusive}",
    Verdict.BY_CONSTRUCTION: r"\textbf{by construction}",
    Verdict.NOT_TESTABLE: r"\textbf{not testable here}",
}


def _number(x: float, unit: str) -> str:
    if math.isnan(x):
        return "--"
    if unit == "change":
        return f"{100 * x:+.1f}"
    if unit == "share":
        return f"{100 * x:.1f}"
    return _significant(x)


def _significant(x: float, digits: int = 3) -> str:
    """Three significant digits in positional notation, as :,.3g but never with an exponent
    (2,590 rather than 2.59e+03): a reader compares these with the study's printed values."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(digits - 1 - magnitude, 0)
    text = f"{round(x, digits - 1 - magnitude):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # as :g drops them


def estimate_text(o: findings.Outcome) -> str:
    """The estimate and its interval, changes and shares in per cent; beside it the study's
    value of the same estimate and our ratio to it, where the seed gives one."""
    if math.isnan(o.estimate):
        return "--"
    percent = r"\,\%" if o.unit in ("change", "share") else ""
    text = _number(o.estimate, o.unit)
    if not math.isnan(o.ci_low):
        text += f" [{_number(o.ci_low, o.unit)}, {_number(o.ci_high, o.unit)}]"
    text += percent
    if not math.isnan(o.study_value):
        study = _number(o.study_value, o.unit)
        text += f"; study {study}{percent}"
        # A ratio to a value printed as zero, or of values of opposite signs, means nothing.
        if not math.isnan(o.ratio) and o.ratio > 0 and study.strip("+-0.,") != "":
            text += rf", ratio {o.ratio:.2f}"
    return text


def _repetitions(o: findings.Outcome) -> str:
    """How the interval was obtained; every test's description names its repetitions."""
    if not o.repetitions:
        return "nothing measured"
    if o.pooled_with:
        families = ", ".join(fw.family_words(f) for f in o.pooled_with)
        return f"{o.test}; runs of the same configuration pooled with {families}"
    return o.test


def _interval(o: findings.Outcome) -> str:
    """What the interval alone gives, with the kept calibration: the rule's outcome on it,
    which a row by construction, not testable here, or one another session's calibration
    decides otherwise does not count (a dash where it has none)."""
    if o.interval_verdict:
        return escape(o.interval_verdict)
    return escape(o.verdict.value) if o.is_evidence else "--"


def mid_sentence(text: str) -> str:
    """`text` to follow a semicolon or a parenthesis: a first word capitalised only as a
    sentence's start ("The", "A") loses its capital; names and acronyms keep theirs."""
    first = text.split(" ", 1)[0]
    if first == "A" or (len(first) > 1 and first[0].isupper() and first[1:].islower()):
        return text[0].lower() + text[1:]
    return text


def _verdict(o: findings.Outcome) -> str:
    words = [VERDICT_WORDS[o.verdict]]
    reason = mid_sentence(o.short_reason or o.reason or "")
    if reason:
        # A reason may name a family or a column: let the narrow cell break after `_`.
        words.append(tex(reason).replace(r"\_", r"\_\allowbreak{}"))
    return "; ".join(words)


def _bottleneck(o: findings.Outcome) -> str:
    """The bottleneck at the finding's points, or at each level it compares where they
    differ (low → high)."""
    levels = list(dict.fromkeys(o.level_bottlenecks))
    return " → ".join(o.level_bottlenecks) if len(levels) > 1 else o.bottleneck


def _letter(i: int) -> str:
    """The note mark of the i-th test description: a, b, ..., z, aa, ab, ..."""
    return _letter(i // 26 - 1) + chr(ord("a") + i % 26) if i >= 26 else chr(ord("a") + i)


def findings_table(outcomes: Sequence[findings.Outcome], study: str) -> str:
    """One study's findings: the claim, the study's value, ours in the study's time, the
    estimate the rule decides on with its interval, the bottleneck, what the interval alone
    gives and the verdict; how each interval was obtained is a note under the table
    (`\\Findings<Study>Notes`), one mark per description, as the same test repeats."""
    rows = [o for o in outcomes if o.study_of == study]
    marks: dict[str, str] = {}
    for o in rows:
        marks.setdefault(tex(_repetitions(o)), _letter(len(marks)))
    lines = [
        _row(
            rf"{tex(o.claim)} {{\footnotesize({tex(o.source)})}}",
            tex(o.study),
            tex(o.ours),
            estimate_text(o) + rf"$^{{\mathrm{{{marks[tex(_repetitions(o))]}}}}}$",
            tex(_bottleneck(o)),
            _interval(o),
            _verdict(o),
        )
        for o in rows
    ]
    head = (
        r"\toprule Claim (source) & Study & Ours & Estimate [\CILevel{} CI] & "
        r"Bottleneck & Interval & Verdict \\ \midrule"
    )
    notes = "; ".join(f"$^{{\\mathrm{{{m}}}}}$\\,{text}" for text, m in marks.items()) or "--"
    stem = f"Findings{STUDY_WORDS[study]}"
    table = fg.longtable_macros(stem, head, lines)
    return table + rf"\newcommand{{\{stem}Notes}}{{{notes}}}" + "\n"


_DIGITS = {"0": "Zero", "1": "One", "2": "Two", "3": "Three", "4": "Four", "5": "Five",
           "6": "Six", "7": "Seven", "8": "Eight", "9": "Nine"}  # fmt: skip


def _threshold(rule: Mapping[str, Any]) -> str:
    """A `beyond` rule's threshold in words: zero, or a signed share in per cent."""
    t = float(rule["threshold"])
    if t == 0:
        return "zero"
    return f"{100 * t:+g} %".replace("-", "−")


def rules_table(catalogue: Mapping[str, Any]) -> str:
    """Which rule decides each finding, in words."""
    words = {
        "effect": lambda r: f"the change is a significant {r['direction']}",
        "beyond": lambda r: f"the value lies significantly {r['direction']} {_threshold(r)}",
        "within": lambda r: f"the interval lies within {r['tolerance']:g} of the study's value",
        "dominant": lambda r: "the study's term's effect significantly exceeds every other's",
    }
    # Each rule once, with every finding it decides: the same sentence row after row reads
    # as a template.
    decided: dict[str, list[str]] = {}
    for f in catalogue["findings"]:
        why = f["rule"].get("why")
        claim = tex(f["claim"]) + (rf" {{\footnotesize(threshold: {tex(why)})}}" if why else "")
        decided.setdefault(words[f["rule"]["kind"]](f["rule"]), []).append(claim)
    # One row per finding, the rule said in its group's first row only; a longtable, as the
    # findings run over more than a page and a row cannot break.
    lines = []
    for rule, claims in decided.items():
        if lines:
            lines.append(r"\addlinespace")
        said = tex(rule[:1].upper() + rule[1:])
        lines += [f"{said if i == 0 else ''} & {c} \\\\" for i, c in enumerate(claims)]
    head = r"\toprule Reproduced when & Findings decided by the rule \\ \midrule"
    return fg.longtable_macros("FindingsRules", head, lines)


def verdict_macro(finding_id: str) -> str:
    """The macro a section's prose reads one finding's verdict from: `threads-2016` gives
    `FindingThreadsSixteenVerdict`, `mm1-2016` `FindingMmOneSixteenVerdict` (a TeX name has
    letters only, so a year and a digit are words)."""
    words = [
        "".join(_DIGITS.get(c, c) for c in STUDY_WORDS.get(w, w)) for w in finding_id.split("-")
    ]
    if not all(w.isalpha() and w.isascii() for w in words):
        raise ValueError(f"finding id {finding_id!r} gives no TeX macro name")
    return "Finding" + "".join(w[:1].upper() + w[1:] for w in words) + "Verdict"


def _macro(name: str, value: object) -> str:
    return rf"\newcommand{{\{name}}}{{{value}}}" + "\n"


# How the text names the rule that made a row by construction (findings.json `decided_by`).
RULE_WORDS = {
    f"construction ({construction.LINK_CAP})": "a link's cap",
    f"construction ({construction.DELAY_POOL})": "threads held over a derived delay",
    f"construction ({construction.FITTED})": "a fitted speed factor or delay",
    f"construction ({construction.DERIVED_DELAY})": "a derived delay within the judged time",
    f"construction ({findings.RECIPE})": "a model's fitting recipe",
}


def _count_phrase(counter: Counter[str]) -> str:
    parts = [f"{escape(k)} in {n}" for k, n in counter.most_common()]
    return ", ".join(parts) if parts else "none"


def _by_rule_rows(built: Sequence[findings.Outcome]) -> str:
    """Rows of the by-construction table: each rule's words beside the conclusions it sets."""
    by: dict[str, list[str]] = {}
    for o in built:
        by.setdefault(RULE_WORDS[o.decided_by.split(":")[0]], []).append(
            rf"{tex(o.claim)} ({o.study_of})"
        )
    joint = r" \newline "
    rows = [rf"{escape(rule)} & {joint.join(claims)} \\" for rule, claims in by.items()]
    return "\n".join(rows) or r"\multicolumn{2}{@{}l}{none} \\"


def _claims(outcomes: Sequence[findings.Outcome], opens: bool = True) -> str:
    """The claims joined by ";". A list that `opens` a sentence keeps its first capital; one
    inside a sentence (in parentheses) keeps none."""
    claims = [
        o.claim if opens and i == 0 else mid_sentence(o.claim) for i, o in enumerate(outcomes)
    ]
    return "; ".join(tex(c) for c in claims) or "none"


def _repetition_range(outcomes: Sequence[findings.Outcome]) -> str:
    """The repetitions per level the verdicts rest on, with their noun: `1 repetition`,
    `3 repetitions`, `1 to 3 repetitions`."""
    reps = sorted({o.repetitions for o in outcomes if o.repetitions > 0})
    if not reps:
        return "no repetitions"
    counted = f"{reps[0]}" if len(reps) == 1 else f"{reps[0]} to {reps[-1]}"
    return f"{counted} repetition" + ("" if reps == [1] else "s")


def numbers(outcomes: Sequence[findings.Outcome], rows: Sequence[Mapping[str, Any]]) -> str:
    """The counts and lists the abstract and the conclusions are written from; findings that
    follow from the model's construction are counted apart from the evidence."""
    evidence = [o for o in outcomes if o.is_evidence]
    built = [o for o in outcomes if o.verdict is Verdict.BY_CONSTRUCTION]
    untestable = [o for o in outcomes if o.verdict is Verdict.NOT_TESTABLE]
    # Every rule has its words: a new one without them fails the build, not the text.
    rules = Counter(RULE_WORDS[o.decided_by.split(":")[0]] for o in built)

    def of(verdict: Verdict, among: Sequence[findings.Outcome] = evidence) -> list:
        return [o for o in among if o.verdict is verdict]

    ours = Counter(r["bottleneck"] for r in rows)
    studied = [r for r in rows if r["study"] != "not in the study"]
    agree = [r for r in studied if r["agrees"]]
    cpu_measured = sum(1 for r in rows if r["cpu"])
    needed = [o.needed for o in of(Verdict.INCONCLUSIVE) if o.needed is not None]
    held = [
        o for o in of(Verdict.INCONCLUSIVE) if o.short_reason.startswith(findings.CALIBRATION_BOUND)
    ]
    macros = {
        "FindingsTotal": len(outcomes),
        "FindingsEvidence": len(evidence),
        "FindingsByConstruction": len(built),
        "FindingsByConstructionList": _claims(built, opens=False),
        "FindingsByConstructionRules": _count_phrase(rules),
        "FindingsByConstructionRows": _by_rule_rows(built),
        "FindingsNotTestable": len(untestable),
        "FindingsNotTestableList": _claims(untestable, opens=False),
        "FindingsReproduced": len(of(Verdict.REPRODUCED)),
        "FindingsContradicted": len(of(Verdict.CONTRADICTED)),
        "FindingsInconclusive": len(of(Verdict.INCONCLUSIVE)),
        "FindingsReproducedList": _claims(of(Verdict.REPRODUCED)),
        "FindingsContradictedList": _claims(of(Verdict.CONTRADICTED)),
        # What binds where each contradicted conclusion is measured, by study: the abstract
        # says where the departures come from.
        "FindingsContradictedBottlenecks": _count_phrase(
            Counter(f"{o.bottleneck} ({o.study_of})" for o in of(Verdict.CONTRADICTED))
        ),
        "FindingsRepetitions": _repetition_range(outcomes),
        "FindingsNeededMedian": f"{int(np.median(needed))}" if needed else "--",
        "FindingsNeededCount": len(needed),
        "FindingsCalibrationBound": len(held),
        "BottleneckGroups": len(rows),
        "BottleneckThreshold": rf"{100 * SATURATED:.0f}\,\%",
        "BottleneckStudied": len(studied),
        "BottleneckAgree": len(agree),
        "BottleneckCpuMeasured": cpu_measured,
        "BottleneckOurs": _count_phrase(ours),
        "BottleneckAgreeList": "; ".join(
            escape(_group_words(r["family"], r["group"])) for r in agree
        )
        or "none",
    }
    # Each finding's verdict by itself, so a section's prose can say agreement only where
    # the verdict on our repetitions gives it (\ifdefstring{\FindingThreadsSixteenVerdict}...).
    macros |= {verdict_macro(o.id): o.verdict.value for o in outcomes}
    # And what its interval alone gives, for a row taken out of the evidence.
    macros |= {
        verdict_macro(o.id).removesuffix("Verdict") + "Interval": o.interval_verdict or "--"
        for o in outcomes
    }
    return "".join(_macro(k, v) for k, v in macros.items())


def judged_at(
    outcomes: Sequence[findings.Outcome], catalogue: Mapping[str, Any]
) -> list[findings.Outcome]:
    """The outcomes with each finding's `at` (the configuration it is judged at, where the
    catalogue gives one) after its source, so that its row names where it was judged."""
    at = {f["id"]: str(f["at"]) for f in catalogue["findings"] if f.get("at")}
    return [
        dataclasses.replace(o, source=f"{o.source}; judged at: {at[o.id]}") if o.id in at else o
        for o in outcomes
    ]


def untested_table(catalogue: Mapping[str, Any], study: str) -> str:
    """One study's statements that no finding tests (the catalogue's `not_tested`), with
    why: a hypothesis, an aim, or nothing our data can test."""
    entries = [n for n in catalogue.get("not_tested", []) if str(n["study_of"]) == study]
    lines = [rf"{tex(n['source'])} & {tex(n['claim'])} & {tex(n['why'])} \\" for n in entries] or [
        r"\multicolumn{3}{@{}l@{}}{none} \\"
    ]
    return "\n".join(
        [
            r"\begin{tabular}{@{}p{0.16\linewidth}p{0.38\linewidth}p{0.4\linewidth}@{}}",
            r"\toprule",
            r"Source & Statement & Why no finding tests it \\",
            r"\midrule",
            "\n".join(lines),
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )
