"""LaTeX of the findings: the per-family bottleneck table, the reproduced / not reproduced
table and the macros the conclusions are written from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from analysis import findings, linkload
from analysis.bottleneck import SATURATED
from analysis.latex import escape
from analysis.report import figures as fg

NOT_MEASURED = "not measured"
_UNICODE = {"→": r"$\to$", "−": r"$-$", "≤": r"$\le$", "≥": r"$\ge$"}


def tex(text: str) -> str:
    """Escaped text, with the arrows and minus signs of the catalogue in math mode."""
    out = escape(text)
    for char, math in _UNICODE.items():
        out = out.replace(char, math)
    return out


def _family(name: str) -> str:
    return r"\texttt{" + escape(name).replace(r"\_", r"\_\allowbreak{}") + "}"


def _percentages(values: Mapping[str, float]) -> str:
    if not values:
        return NOT_MEASURED
    return "/".join(f"{100 * values[r]:.0f}" if r in values else "--" for r in linkload.ROLES)


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
        rows.append({**r, "study": theirs["bottleneck"], "source": theirs["source"]})
        lines.append(
            _row(
                _family(r["family"]),
                _group(r["group"]),
                str(r["clients"]),
                f"{r['throughput']:,.0f}",
                _percentages(r["cpu"]),
                _percentages(r["link"]),
                escape(r["bottleneck"]),
                tex(theirs["bottleneck"]),
                tex(theirs["source"]),
            )
        )
    head = (
        r"\toprule Family & Group & N & X [ops/s] & CPU [\%] & Link [\%] & Ours & Study & "
        r"Source \\ \midrule"
    )
    table = fg.longtable_macros("Bottleneck", head, lines)
    return table, rows


def _verdict(o: findings.Outcome) -> str:
    if o.reproduced:
        return r"\textbf{reproduced}"
    return r"\textbf{not reproduced}: " + tex(o.reason)


def findings_table(outcomes: Sequence[findings.Outcome]) -> str:
    lines = [
        _row(
            rf"{tex(o.claim)} {{\footnotesize({tex(o.source)})}}",
            tex(o.study),
            tex(o.ours),
            _verdict(o),
        )
        for o in outcomes
    ]
    head = r"\toprule Claim (source) & Study & Ours & Verdict \\ \midrule"
    return fg.longtable_macros("Findings", head, lines)


def rules_table(catalogue: Mapping[str, Any]) -> str:
    """Which rule decides each finding, in words."""
    words = {
        "effect": lambda r: f"the effect is a {r['direction']} and significant",
        "within": lambda r: f"within {r['tolerance']:g} of the study's value",
        "sign": lambda r: f"same sign as the study's, magnitude above {r['tolerance']:g}",
        "same": lambda r: "the same label as the study's",
        "share": lambda r: f"a share above {r['tolerance']:g}",
    }
    lines = [
        rf"{tex(f['claim'])} & {tex(words[f['rule']['kind']](f['rule']))} \\"
        for f in catalogue["findings"]
    ]
    return "\n".join(
        [
            r"\begin{tabular}{@{}p{0.5\linewidth}p{0.42\linewidth}@{}}",
            r"\toprule",
            r"Finding & Reproduced when \\",
            r"\midrule",
            *lines,
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )


def _macro(name: str, value: object) -> str:
    return rf"\newcommand{{\{name}}}{{{value}}}" + "\n"


def _count_phrase(counter: Counter[str]) -> str:
    parts = [f"{escape(k)} in {n}" for k, n in counter.most_common()]
    return ", ".join(parts) if parts else "none"


def numbers(outcomes: Sequence[findings.Outcome], rows: Sequence[Mapping[str, Any]]) -> str:
    ok = [o for o in outcomes if o.reproduced]
    bad = [o for o in outcomes if not o.reproduced]
    ours = Counter(r["bottleneck"] for r in rows)
    studied = [r for r in rows if r["study"] != "not in the study"]
    agree = [r for r in studied if r["bottleneck"] == r["study"]]
    cpu_measured = sum(1 for r in rows if r["cpu"])
    return "".join(
        [
            _macro("FindingsTotal", len(outcomes)),
            _macro("FindingsReproduced", len(ok)),
            _macro("FindingsNotReproduced", len(bad)),
            _macro("FindingsReproducedList", "; ".join(tex(o.claim) for o in ok) or "none"),
            _macro("FindingsNotReproducedList", "; ".join(tex(o.claim) for o in bad) or "none"),
            _macro("BottleneckGroups", len(rows)),
            _macro("BottleneckThreshold", rf"{100 * SATURATED:.0f}\,\%"),
            _macro("BottleneckStudied", len(studied)),
            _macro("BottleneckAgree", len(agree)),
            _macro("BottleneckCpuMeasured", cpu_measured),
            _macro("BottleneckOurs", _count_phrase(ours)),
            _macro(
                "BottleneckAgreeList",
                "; ".join(
                    escape(
                        f"{r['family']} ({', '.join(r['group'].values()) or 'all'})".replace(
                            "_", " "
                        )
                    )
                    for r in agree
                )
                or "none",
            ),
        ]
    )
