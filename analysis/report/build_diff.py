"""Two builds of the report compared file by file: what a change to the code did to the
report built from the same data.

A build is a results folder (`results/<profile>` or `results/reference/<name>`). Its generated
report inputs (`paper/`: every number macro, table and figure) and its derived data (`data/`:
JSON and Parquet tables) are compared:
- TeX and other text files exactly, naming the first line that differs;
- JSON by value, Parquet tables by value (column names, types and every cell);
- figures (PDF) as pictures: both are rendered with pdftoppm and compared pixel by pixel,
  since a PDF's bytes carry its creation time.
A file in one build only is a difference too. The report's own PDF and LaTeX's by-products
are not inputs and are left out.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

COMPARED = ("paper", "data")
# LaTeX's outputs and by-products inside a build's paper folder.
_SKIPPED = {"report.pdf", ".aux", ".log", ".out", ".fls", ".fdb_latexmk", ".toc", ".bbl", ".blg"}
RENDER_DPI = 50


class BuildDiffError(RuntimeError):
    """The builds cannot be compared (a folder missing, pdftoppm missing)."""


@dataclass(frozen=True)
class Difference:
    path: str  # relative to the build
    what: str


def _files(build: Path) -> dict[str, Path]:
    out = {}
    for part in COMPARED:
        for path in sorted((build / part).rglob("*")):
            if path.is_file() and path.name not in _SKIPPED and path.suffix not in _SKIPPED:
                out[str(path.relative_to(build))] = path
    return out


def _text(a: Path, b: Path) -> str | None:
    try:
        la, lb = a.read_text().splitlines(), b.read_text().splitlines()
    except UnicodeDecodeError:
        return None if a.read_bytes() == b.read_bytes() else "bytes differ"
    for i, (x, y) in enumerate(zip(la, lb, strict=False), start=1):
        if x != y:
            return f"line {i}: {x.strip()[:80]!r} != {y.strip()[:80]!r}"
    if len(la) != len(lb):
        return f"{len(la)} lines != {len(lb)} lines"
    return None


def _json(a: Path, b: Path) -> str | None:
    return None if json.loads(a.read_text()) == json.loads(b.read_text()) else "values differ"


def _read_parquet(path: Path) -> pd.DataFrame:
    # By path and on the calling thread: Arrow's reader threads can outlive a short command
    # and abort the interpreter at exit (apache/arrow#34314), turning "differs" into a crash.
    return pq.read_table(str(path), use_threads=False).to_pandas()


def _parquet(a: Path, b: Path) -> str | None:
    x, y = _read_parquet(a), _read_parquet(b)
    if list(x.columns) != list(y.columns):
        return f"columns differ: {sorted(set(x.columns) ^ set(y.columns)) or 'order'}"
    if x.shape != y.shape:
        return f"{x.shape[0]} rows != {y.shape[0]} rows"
    try:
        pd.testing.assert_frame_equal(x, y, check_exact=True)
    except AssertionError as err:
        return str(err).splitlines()[0][:200]
    return None


def _render(pdf: Path, into: Path) -> list[bytes]:
    """The pages of a PDF as greyscale pictures (PGM bytes)."""
    done = subprocess.run(
        ["pdftoppm", "-r", str(RENDER_DPI), "-gray", str(pdf), str(into / "page")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise BuildDiffError(f"pdftoppm cannot render {pdf}: {done.stderr.strip()}")
    pages = sorted(into.glob("page*.pgm"))
    out = [p.read_bytes() for p in pages]
    for p in pages:
        p.unlink()
    return out


def _pdf(a: Path, b: Path) -> str | None:
    if a.read_bytes() == b.read_bytes():
        return None
    if shutil.which("pdftoppm") is None:
        raise BuildDiffError("pdftoppm is missing (Debian: poppler-utils; `make setup`)")
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb = _render(a, Path(tmp)), _render(b, Path(tmp))
    if len(pa) != len(pb):
        return f"{len(pa)} pages != {len(pb)} pages"
    for i, (x, y) in enumerate(zip(pa, pb, strict=True), start=1):
        if x != y:
            changed = sum(p != q for p, q in zip(x, y, strict=False)) + abs(len(x) - len(y))
            return f"page {i} differs as a picture ({changed} bytes of {max(len(x), len(y))})"
    return None


def _compare(a: Path, b: Path) -> str | None:
    if a.suffix == ".pdf":
        return _pdf(a, b)
    if a.suffix == ".json":
        return _json(a, b)
    if a.suffix == ".parquet":
        return _parquet(a, b)
    return _text(a, b)


def diff_builds(first: Path, second: Path) -> list[Difference]:
    """Every file in which two builds differ, in path order."""
    for build in (first, second):
        if not any((build / part).is_dir() for part in COMPARED):
            raise BuildDiffError(f"{build} is not a build: it has no {' or '.join(COMPARED)}")
    fa, fb = _files(first), _files(second)
    out = []
    for rel in sorted(fa.keys() | fb.keys()):
        if rel not in fb:
            out.append(Difference(rel, f"only in {first}"))
        elif rel not in fa:
            out.append(Difference(rel, f"only in {second}"))
        else:
            why = _compare(fa[rel], fb[rel])
            if why is not None:
                out.append(Difference(rel, why))
    return out
