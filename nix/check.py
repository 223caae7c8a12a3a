"""`make check-nix`: evaluates flake.nix offline against the allowlisted nixpkgs and checks that
its dev shell provides every tool testbed/tools.py names, no Python package of its own, and the
interpreter the locks were made for, whose every pin carries its artifacts' hashes: the Python
environment `make setup` builds there from the locks is then the Debian path's, hash for hash.

nix-instantiate evaluates the flake's `outputs` against nix/stub-nixpkgs.nix, a nixpkgs that
holds only the attributes of nix/nixpkgs-allowlist.txt, for every system, with nothing fetched,
built or written to a store. Exit status: 0 when the flake passes, 1 when it does not, 2 when
nix-instantiate is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from testbed.tools import LOCK_FILE, TEST_LOCK_FILE, TOOLS

NIX_DIR = Path(__file__).resolve().parent
ROOT = NIX_DIR.parent
SYSTEMS = ("x86_64-linux", "aarch64-linux")
# Commands .venv installs from requirements.lock; the dev shell must not shadow them.
VENV_COMMANDS = frozenset({"snakemake", "ruff", "pytest", "mwlab", "pip"})


_LOCK_PYTHON = re.compile(r"--python-version[ =](\d+\.\d+)")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==")


def lock_problems(lock: Path) -> tuple[str | None, list[str]]:
    """The Python version a lock was made for (`make lock` records it in the header), and what
    keeps `pip install --require-hashes` from installing exactly its artifacts."""
    try:
        text = lock.read_text()
    except FileNotFoundError:
        return None, [f"{lock.name} is missing: `make lock` writes it"]
    m = _LOCK_PYTHON.search("\n".join(ln for ln in text.splitlines() if ln.startswith("#")))
    problems = [] if m else [f"{lock.name} does not say which Python it was locked for"]
    # A requirement runs on over continuation lines; each must carry a hash.
    entries = re.split(r"\n(?=[A-Za-z0-9])", text)
    unhashed = [e.split("==")[0] for e in entries if _PIN.match(e) and "--hash=sha256:" not in e]
    if unhashed:
        problems.append(f"{lock.name} pins {', '.join(unhashed)} without a hash: `make lock`")
    return (m.group(1) if m else None), problems


class CheckError(Exception):
    """The flake does not evaluate, or its outputs are not what the project needs."""


def nix_instantiate() -> str:
    path = shutil.which("nix-instantiate")
    if path is None:
        raise FileNotFoundError(
            "nix-instantiate not found: it comes with Debian's nix-bin (`make setup` installs it)"
            " or with Nix itself (`nix develop` provides it)"
        )
    return path


def evaluate(flake: Path, allowlist: Path) -> dict[str, Any]:
    """The projection of nix/eval-flake.nix: every package and dev shell, with their arguments."""
    flake, allowlist = flake.resolve(), allowlist.resolve()
    allowed = sorted({str(ROOT), str(NIX_DIR), str(flake.parent), str(allowlist.parent)})
    command = [
        nix_instantiate(),
        "--eval",
        "--strict",
        "--json",
        # No store is opened or written (a path in a string gets its name only) and only these
        # directories may be read: the evaluation cannot fetch or build anything.
        "--store",
        "dummy://",
        "--restrict-eval",
        *(arg for i, d in enumerate(allowed) for arg in ("-I", f"p{i}={d}")),
        "--argstr",
        "flake",
        str(flake),
        "--argstr",
        "allowlist",
        str(allowlist),
        str(NIX_DIR / "eval-flake.nix"),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        noise = "warning: the group 'nixbld'"
        errors = "\n".join(ln for ln in proc.stderr.splitlines() if not ln.startswith(noise))
        raise CheckError(f"{flake} does not evaluate against {allowlist.name}:\n{errors.strip()}")
    return json.loads(proc.stdout)


def _is_drv(v: object) -> bool:
    return isinstance(v, dict) and {"kind", "storePath", "bins", "args"} <= v.keys()


def derivations(v: object) -> Iterator[dict[str, Any]]:
    """Every derivation in the projection, those in other derivations' arguments included."""
    if _is_drv(v):
        yield v
        yield from derivations(v["args"])
    elif isinstance(v, dict):
        for x in v.values():
            yield from derivations(x)
    elif isinstance(v, list):
        for x in v:
            yield from derivations(x)


def shell_bins(shell: dict[str, Any], system: str) -> set[str]:
    """Executables the dev shell puts on PATH: those its packages install."""
    bins: set[str] = set()
    for i, p in enumerate(shell["args"].get("packages", [])):
        if not _is_drv(p):
            raise CheckError(f"devShells.{system}.default: packages[{i}] is not a derivation")
        bins.update(p["bins"])
    return bins


def link_problems(projection: dict[str, Any]) -> list[str]:
    """A link farm's bin/ entries must point at an executable its target package installs."""
    bins = {d["storePath"]: (d, set(d["bins"])) for d in derivations(projection)}
    problems = []
    for farm in derivations(projection):
        if farm["kind"] != "linkFarm":
            continue
        for entry in farm["args"]["entries"]:
            if not entry["name"].startswith("bin/"):
                continue
            target = str(entry["path"])
            base, _, exe = target.rpartition("/bin/")
            if base not in bins:
                problems.append(
                    f"{farm['name']}: {entry['name']} -> {target} is not in a package of the"
                    " flake's outputs"
                )
            elif exe not in bins[base][1]:
                d = bins[base][0]
                problems.append(
                    f"{farm['name']}: {entry['name']} -> {target}, but {d['name']} installs"
                    f" {', '.join(sorted(bins[base][1])) or 'no executables'}"
                    f" (nix/nixpkgs-allowlist.txt)"
                )
    return problems


def check(projection: dict[str, Any]) -> list[str]:
    """What is wrong with the flake's outputs; empty when nothing is."""
    problems: list[str] = []
    for system in SYSTEMS:
        shell = projection["devShells"].get(system, {}).get("default")
        if system not in projection["packages"]:
            problems.append(f"no packages for {system}")
        if not _is_drv(shell):
            problems.append(f"no devShells.{system}.default")
            continue
        bins = shell_bins(shell, system)
        missing = [t.name for t in TOOLS if t.name not in bins]
        if missing:
            problems.append(
                f"devShells.{system}.default does not provide {', '.join(missing)}"
                " (testbed/tools.py): add the package that installs them, with its executables"
                " in nix/nixpkgs-allowlist.txt"
            )
        shadowing = sorted(bins & VENV_COMMANDS)
        if shadowing:
            problems.append(
                f"devShells.{system}.default provides {', '.join(shadowing)}, which would shadow"
                " .venv's (requirements.lock pins them for both paths)"
            )
        for p in shell["args"].get("packages", []):
            base = p["args"].get("base") if p["kind"] == "withPackages" else None
            if _is_drv(base) and str(base.get("attr", "")).startswith("python"):
                problems.append(
                    f"devShells.{system}.default holds {p['name']}: Python packages come from"
                    " .venv (requirements.lock), not from nixpkgs"
                )
    problems += link_problems(projection)
    problems += python_problems(projection)
    return problems


def python_problems(projection: dict[str, Any], locks: tuple[Path, ...] = ()) -> list[str]:
    """The dev shell's interpreter must be the one every lock was made for."""
    problems: list[str] = []
    versions = set()
    for lock in locks or (LOCK_FILE, TEST_LOCK_FILE):
        version, found = lock_problems(lock)
        problems += found
        if version:
            versions.add(version)
    if len(versions) > 1:
        problems.append(f"the locks were made for different Pythons: {', '.join(sorted(versions))}")
    for system in SYSTEMS:
        shell = projection["devShells"].get(system, {}).get("default")
        if not _is_drv(shell):
            continue
        have = sorted(b for b in shell_bins(shell, system) if re.fullmatch(r"python3\.\d+", b))
        for version in versions:
            if have != [f"python{version}"]:
                problems.append(
                    f"devShells.{system}.default has {', '.join(have) or 'no python3.N'}, but"
                    f" the locks are for Python {version}: the venv would not hold their"
                    " artifacts"
                )
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flake", type=Path, default=ROOT / "flake.nix")
    ap.add_argument("--allowlist", type=Path, default=NIX_DIR / "nixpkgs-allowlist.txt")
    ap.add_argument("--json-out", type=Path, help="also write the evaluated outputs here")
    args = ap.parse_args(argv)
    try:
        projection = evaluate(args.flake, args.allowlist)
        problems = check(projection)
    except FileNotFoundError as err:
        print(f"check-nix: {err}", file=sys.stderr)
        return 2
    except CheckError as err:
        print(f"check-nix: {err}", file=sys.stderr)
        return 1
    if args.json_out:
        args.json_out.write_text(json.dumps(projection, indent=1, sort_keys=True) + "\n")
    if problems:
        for p in problems:
            print(f"check-nix: {p}", file=sys.stderr)
        return 1
    shells = sum(len(v) for v in projection["devShells"].values())
    packages = sorted({n for v in projection["packages"].values() for n in v})
    print(
        f"check-nix: {args.flake.name} evaluates offline against {projection['allowlistSize']}"
        f" allowlisted nixpkgs attributes for {', '.join(SYSTEMS)}: packages"
        f" {', '.join(packages)}; {shells} dev shells provide the {len(TOOLS)} tools of"
        " testbed/tools.py and no Python package of their own, on the Python"
        f" {lock_problems(LOCK_FILE)[0]} that {LOCK_FILE.name} and {TEST_LOCK_FILE.name} pin"
        " with hashes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
