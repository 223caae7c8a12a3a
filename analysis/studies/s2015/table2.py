"""§3.2, Table 2: the system's throughput per worker count (the total over both middlewares)
and clients, ours beside the seed's printed cells; the drop from 60 to 140 clients per worker
count, ours beside the seed's; the best cell over the database baseline's maximum (the
seed's 1,849.0 / 1,950 = 0.95); and each cell over the baseline at as many sessions, since
the database holds one session per worker whatever the clients."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis.report import figures as fg
from analysis.report.numbers import Report
from analysis.studies.s2015.common import THROUGHPUT, half_width, level, name, pm, system

MEAN = f"{THROUGHPUT}_mean"
# The clients between which the seed's throughput falls (Table 2's columns).
DROP_FROM, DROP_TO = 60, 140


def seed_cells(reference: Mapping[str, Any]) -> pd.DataFrame:
    """The seed's printed cells: workers, clients, value and its (undefined) ±."""
    rows = [
        {"workers": int(w), "clients": int(c), "seed": float(v[0]), "seed_pm": float(v[1])}
        for w, by_clients in reference["throughput"]["cells"].items()
        for c, v in by_clients.items()
    ]
    return pd.DataFrame(rows, columns=["workers", "clients", "seed", "seed_pm"])


def ours(points: pd.DataFrame) -> pd.DataFrame:
    """Our cells: the clients' throughput of every request type, in study units, with its
    confidence interval's half-width (NaN with one repetition) and repetitions."""
    rows = system(points)
    columns = ["workers", "clients", "ours", "ours_half", "repetitions"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame(
        {
            "workers": level(rows, "workers").astype(int),
            "clients": level(rows, "clients").astype(int),
            "ours": rows[MEAN].astype(float),
            "ours_half": [half_width(r) for _, r in rows.iterrows()],
            "repetitions": rows["repetitions"].astype(int),
        }
    ).reset_index(drop=True)


def paired(points: pd.DataFrame, reference: Mapping[str, Any]) -> pd.DataFrame:
    """Every cell either side has, ours beside the seed's (NaN where one side lacks it), with
    our value over the seed's; sorted by workers and clients."""
    both = ours(points).merge(seed_cells(reference), on=["workers", "clients"], how="outer")
    both["ratio"] = both["ours"] / both["seed"]
    return both.sort_values(["workers", "clients"]).reset_index(drop=True)


def drops(cells: pd.DataFrame, column: str) -> dict[int, float]:
    """Per worker count the relative change of `column` from 60 to 140 clients (NaN where
    either cell is missing)."""
    out = {}
    for workers, g in cells.groupby("workers"):
        at = dict(zip(g["clients"], g[column], strict=True))
        low, high = at.get(DROP_FROM, math.nan), at.get(DROP_TO, math.nan)
        out[int(workers)] = high / low - 1 if low and math.isfinite(low) else math.nan
    return out


def signed_pct(value: float) -> str:
    """A relative change in per cent with its sign (a rise and a fall read apart)."""
    return f"${100 * value:+.1f}$\\,\\%" if math.isfinite(value) else fg.MISSING


def table(cells: pd.DataFrame) -> str:
    rows = []
    for _, r in cells.iterrows():
        rows.append([
            fg.num(r["workers"]),
            fg.num(r["clients"]),
            pm(r["ours"], r["ours_half"]),
            pm(r["seed"], r["seed_pm"], 1) if math.isfinite(r["seed"]) else fg.MISSING,
            fg.num(r["ratio"], 2),
        ])  # fmt: skip
    header = ["workers", "clients", r"ours (ops/s)", r"seed (msg/s)", "ours/seed"]
    return fg.tabular(header, rows, "rrrrr")


def drop_table(ours_drop: Mapping[int, float], seed_drop: Mapping[int, float]) -> str:
    workers = sorted(set(ours_drop) | set(seed_drop))
    rows = [
        [fg.num(w), signed_pct(ours_drop.get(w, math.nan)), signed_pct(seed_drop.get(w, math.nan))]
        for w in workers
    ]
    return fg.tabular(["workers", "ours", "seed"], rows, "rrr")


def at_equal_sessions(cells: pd.DataFrame, database: Mapping[int, float]) -> pd.DataFrame:
    """The cells whose workers all hold a busy session (clients at least the workers) and
    whose worker count the baseline measured as clients: ours over the baseline's throughput
    at as many sessions."""
    c = cells[cells["ours"].notna() & (cells["clients"] >= cells["workers"])]
    c = c[c["workers"].isin(list(database))]
    return c.assign(sessions_ratio=c["ours"] / c["workers"].map(database))


def report(points: pd.DataFrame, reference: Mapping[str, Any],
           database: Mapping[int, float]) -> Report:  # fmt: skip
    """Table 2, the drop table and their numbers; `database` is our database baseline's
    throughput per clients at small messages (empty when it was not measured)."""
    cells = paired(points, reference)
    measured = cells["ours"].notna().any()
    ours_drop = drops(cells, "ours")
    seed_drop = drops(cells, "seed")
    seed_db = float(reference["db_baseline"]["max"]["small"]["throughput"])
    seed_best = float(cells["seed"].max())
    n = {name("Tabletwo", "Measured"): "1" if measured else "0"}
    best = cells.loc[cells["ours"].idxmax()] if measured else None
    n[name("Tabletwo", "Best")] = pm(best["ours"], best["ours_half"]) if best is not None else "--"
    n[name("Tabletwo", "Best", "Workers")] = fg.num(best["workers"]) if best is not None else "--"
    n[name("Tabletwo", "Best", "Clients")] = fg.num(best["clients"]) if best is not None else "--"
    db_max = max(database.values(), default=math.nan)
    ratio = float(best["ours"]) / db_max if best is not None else math.nan
    n[name("Ratio", "Ours")] = fg.num(ratio, 2)
    n[name("Ratio", "Seed")] = fg.num(seed_best / seed_db, 2)
    n[name("Ratio", "Seed", "Best")] = fg.num(seed_best, 1)
    same = at_equal_sessions(cells, database)
    n[name("Ratio", "Sessions", "Cells")] = str(len(same))
    workers = ", ".join(str(w) for w in sorted(set(same["workers"])))
    n[name("Ratio", "Sessions", "Workers")] = workers or fg.MISSING
    n[name("Ratio", "Sessions", "Low")] = fg.num(same["sessions_ratio"].min(), 2)
    n[name("Ratio", "Sessions", "High")] = fg.num(same["sessions_ratio"].max(), 2)
    found = [v for v in ours_drop.values() if math.isfinite(v)]
    n[name("Drop", "Measured")] = "1" if found else "0"
    # The changes' range over the worker counts, signed: the seed's are falls.
    n[name("Drop", "Ours", "Low")] = signed_pct(min(found)) if found else "--"
    n[name("Drop", "Ours", "High")] = signed_pct(max(found)) if found else "--"
    seed_found = [v for v in seed_drop.values() if math.isfinite(v)]
    n[name("Drop", "Seed", "Low")] = signed_pct(min(seed_found))
    n[name("Drop", "Seed", "High")] = signed_pct(max(seed_found))
    n[name("Tabletwo", "Repetitions")] = fg.num(cells["repetitions"].min()) if measured else "0"
    return Report(
        tex={"table": table(cells), "drop_table": drop_table(ours_drop, seed_drop)},
        numbers=n,
    )
