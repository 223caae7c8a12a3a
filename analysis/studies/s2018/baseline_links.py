"""The baselines beside their links: whether each maximum is held by a link's bound, and
seed 004's Table 1 (capacity per role and the messages per second it allows) from our
measured link capacities, in the study's time."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis import validate
from analysis.linkload import DEFAULT_KEY_BYTES, Sizes
from analysis.models import linkbounds
from analysis.report import figures as fg
from analysis.scale_model import scale_of
from analysis.studies.s2018.baseline_maxima import best

# The role whose link binds, as the text names its upload.
ROLE_UPLOAD = {"client": "the clients'", "middleware": "the middlewares'", "server": "the server's"}
MESSAGE_NAMES = {
    "set_request": "SET request",
    "set_reply": "SET reply",
    "get_request": "GET request",
    "get_reply": "GET reply",
}
ROLES = ("client", "middleware", "server")
TABLE_HEADER = [
    "role",
    "cap [Mbit/s]",
    "measured",
    "measured$/s$",
    "seed 004",
    "message",
    "bytes",
    "seed 004",
    "bound [ops/s]",
    "seed 004",
]


def _bound_at_best(d: pd.DataFrame) -> tuple[pd.Series | None, validate.BandwidthBound | None]:
    """The point of highest client throughput and its link bound (as run), from the
    capacities every bound of the report uses (analysis.models.linkbounds.bound_capacity_mbit)."""
    b = best(d)
    return b, (None if b is None else validate.run_bandwidth_bound(b))


def _bound_case(b: pd.Series, bound: validate.BandwidthBound) -> str:
    """Whether a maximum is `held` by a link (at NEAR_BOUND of its bound or more) or stays
    `below` every link's bound."""
    return "held" if b["throughput_ops_mean"] / bound.bound >= validate.NEAR_BOUND else "below"


def bandwidth_bound(direct: pd.DataFrame, mw: pd.DataFrame) -> list[str]:
    """The link bounds of the baselines' maxima in the study's time: one server's reads
    (its upload over GET replies) and the writes without and with two middlewares (the
    binding role's upload), with the share of its bound each maximum reached and whether the
    bound holds it (`...Case`: held, below, or none where nothing was measured); whether the
    bounds apply at all (`BaseBoundCase`: capped links, or local processes without caps)."""
    numbers: list[str] = []
    cases = [
        ("BaseBoundOneServerRead", direct, "one_server", "read-only"),
        ("BaseBoundOneServerWrite", direct, "one_server", "write-only"),
        ("BaseBoundTwoMwWrite", mw, "two_middlewares", "write-only"),
    ]
    for key, frame, setup, workload in cases:
        d = frame[(frame["level_setup"] == setup) & (frame["level_workload"] == workload)]
        b, bound = _bound_at_best(d)
        ok = b is not None and bound is not None
        scale = float(b["scale"]) if ok else math.nan  # best read it with scale_of
        numbers += [
            fg.macro(key, fg.num(bound.bound / scale) if ok else fg.MISSING),
            fg.macro(
                f"{key}Share",
                fg.num(b["throughput_ops_mean"] / bound.bound, 2) if ok else fg.MISSING,
            ),
            fg.macro(f"{key}Role", ROLE_UPLOAD[bound.binding] if ok else fg.MISSING),
            fg.macro(f"{key}Case", _bound_case(b, bound) if ok else "none"),
        ]
    src = direct.iloc[0] if not direct.empty else mw.iloc[0]
    numbers += [
        fg.macro("BaseHostKind", str(src["host_kind"])),
        fg.macro("BaseBoundCase", "local" if str(src["host_kind"]) == "local" else "capped"),
    ]
    return numbers


def link_bounds_table(
    direct: pd.DataFrame, mw: pd.DataFrame, ref: Mapping
) -> tuple[str, list[str]]:
    """Seed 004's Table 1 from our measured link capacities: per role, the measured capacity
    (as run and rescaled to the study's time by 1/s) and the messages per second it allows,
    in the study's time, beside the seed's; its macros."""
    table1 = ref["bandwidth"]["table1"]
    both = pd.concat([direct, mw])
    both = both[both["side"] == "client"]
    scale = float(scale_of(both, "table of points").median())
    key = pd.to_numeric(both.get("workload.key_size", pd.Series()), errors="coerce").dropna()
    size = pd.to_numeric(both.get("workload.data_size", pd.Series()), errors="coerce").dropna()
    sizes = Sizes(
        key=int(key.iloc[0]) if len(key) else DEFAULT_KEY_BYTES,
        data=int(size.iloc[0]) if len(size) else 4096,
    )
    measured = {r: linkbounds.measured_capacity(both, r) for r in ROLES}
    found = {r: c / scale for r, c in measured.items() if math.isfinite(c) and c > 0}
    bounds = linkbounds.message_bounds(found, sizes).set_index(["role", "message"])
    nbytes = linkbounds.message_bytes(sizes)
    rows, devs = [], []
    for role in ROLES:
        theirs = table1[role]
        cap_set = pd.to_numeric(both.get(f"caps_mbit.{role}"), errors="coerce").median()
        devs.append(found.get(role, math.nan) / float(theirs["upload_mbit"]) - 1)
        for i, message in enumerate(linkbounds.ROLE_MESSAGES[role]):
            ours = bounds["bound_ops"].get((role, message), math.nan)
            first = i == 0
            rows.append(
                [
                    role if first else "",
                    fg.num(cap_set, 2) if first else "",
                    fg.num(measured[role], 2) if first else "",
                    fg.num(found.get(role, math.nan), 1) if first else "",
                    fg.num(theirs["upload_mbit"]) if first else "",
                    MESSAGE_NAMES[message],
                    str(nbytes[message]),
                    str(table1["message_bytes"][message]),
                    fg.num(ours),
                    fg.num(theirs["ops"].get(message, math.nan)),
                ]
            )
    table = fg.tabular(TABLE_HEADER, rows, "lrrrrlrrrr")
    dev = pd.Series(devs, dtype=float).abs()
    server_get = bounds["bound_ops"].get(("server", "get_reply"), math.nan)
    return table, [
        fg.macro("LinkScale", fg.num(scale, 2)),
        fg.macro("LinkCapMaxDev", fg.pct(dev.max() if dev.notna().any() else math.nan)),
        fg.macro("LinkCapServerStudy", fg.num(found.get("server", math.nan), 1)),
        fg.macro("LinkCapServerSeed", fg.num(table1["server"]["upload_mbit"])),
        fg.macro("LinkBoundServerGet", fg.num(server_get)),
        fg.macro("LinkBoundServerGetSeed", fg.num(table1["server"]["ops"]["get_reply"])),
        # Seed 004's middleware SET-reply entry beside its own upload over the reply's size.
        fg.macro("LinkSeedMwSetReply", fg.num(table1["middleware"]["ops"]["set_reply"])),
        fg.macro(
            "LinkSeedMwSetReplyOwn",
            fg.num(
                linkbounds.bound_ops(
                    table1["middleware"]["upload_mbit"], table1["message_bytes"]["set_reply"]
                )
            ),
        ),
    ]
