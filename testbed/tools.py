"""External tools and Python packages the study needs, where they are and which versions.

One name per tool on every path: the Debian names (`memcaslap`, `memccp`, `nutcracker`). Under
`nix develop` the flake links them to nixpkgs' binaries, so code and tests call the same name.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Tool:
    """An executable the project relies on."""

    name: str
    version_args: tuple[str, ...]
    purpose: str
    required: bool = True
    # The Debian 12 package that installs it (scripts/setup-debian.sh); None: not packaged there.
    debian: str | None = None
    # Absolute directories (glob patterns; the last match first) searched after PATH.
    dirs: tuple[str, ...] = ()


TOOLS: tuple[Tool, ...] = (
    Tool(
        "java",
        ("-version",),
        "runs the middleware and the built-in load generator",
        debian="openjdk-17-jdk-headless",
    ),
    Tool("mvn", ("--version",), "builds the Java artifacts", debian="maven"),
    Tool("memcached", ("-V",), "the servers behind the middleware", debian="memcached"),
    Tool(
        "memcaslap",
        ("--version",),
        "third-party load generator (libmemcached's memaslap)",
        debian="libmemcached-tools",
    ),
    Tool(
        "memccp",
        ("--version",),
        "third-party client (libmemcached's memcp)",
        debian="libmemcached-tools",
    ),
    Tool(
        "memccat",
        ("--version",),
        "third-party client (libmemcached's memcat)",
        debian="libmemcached-tools",
    ),
    Tool("nutcracker", ("--version",), "twemproxy, the baseline proxy", debian="nutcracker"),
    Tool(
        "initdb",
        ("--version",),
        "SimpleMQ's database, PostgreSQL: a server per run",
        debian="postgresql-15",
        dirs=("/usr/lib/postgresql/*/bin",),
    ),
    Tool("iperf3", ("--version",), "measures link capacities", debian="iperf3"),
    Tool("ip", ("-V",), "network namespaces for emulated hosts", debian="iproute2"),
    Tool("tc", ("-V",), "bandwidth caps for emulated hosts", debian="iproute2"),
    Tool("iptables", ("-V",), "queues packets to the link-delay process", debian="iptables"),
    Tool("sshd", ("-V",), "ssh hosts in tests", debian="openssh-server"),
    Tool("latexmk", ("-v",), "builds the report", debian="latexmk"),
    Tool("pdflatex", ("--version",), "builds the report", debian="texlive-latex-base"),
    Tool(
        "nix-instantiate",
        ("--version",),
        "evaluates flake.nix offline (make check-nix)",
        debian="nix-bin",
    ),
    Tool(
        "memtier_benchmark",
        ("--version",),
        "the study's load generator (Nix shell only; the built-in one stands in)",
        required=False,
    ),
)


@dataclass(frozen=True)
class PythonPackage:
    """A Python distribution whose version must be the one requirements.lock pins, on every path."""

    name: str
    # True: what counts is the executable on PATH (make and the pipeline run it), not the import.
    command: bool = False


PYTHON_PACKAGES: tuple[PythonPackage, ...] = (
    PythonPackage("pandas"),
    PythonPackage("numpy"),
    PythonPackage("statsmodels"),
    PythonPackage("scipy"),
    PythonPackage("matplotlib"),
    PythonPackage("seaborn"),
    PythonPackage("pydantic"),
    PythonPackage("hdrhistogram"),
    PythonPackage("snakemake", command=True),
    PythonPackage("ruff", command=True),
)

LOCK_FILE = Path(__file__).resolve().parents[1] / "requirements.lock"


@dataclass(frozen=True)
class Found:
    """What is installed: its version and where (None when absent)."""

    version: str | None
    path: str | None


# Some tools (Maven) colour their version banner even when not on a terminal.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def tool_path(tool: Tool) -> str | None:
    """Full path of the tool; sbin directories, and the tool's own, count even when they are
    not on PATH."""
    found = shutil.which(tool.name) or shutil.which(tool.name, path="/usr/sbin:/sbin")
    for pattern in tool.dirs if found is None else ():
        for d in sorted(Path("/").glob(pattern.lstrip("/")), reverse=True):
            found = found or shutil.which(tool.name, path=str(d))
    return found


def _first_line(command: list[str]) -> str:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in _ANSI.sub("", proc.stdout + "\n" + proc.stderr).splitlines():
        if line.strip():
            return line.strip()
    return "unknown"


def find_tool(tool: Tool) -> Found:
    path = tool_path(tool)
    if path is None:
        return Found(None, None)
    return Found(_first_line([path, *tool.version_args]), path)


def tool_version(tool: Tool) -> str | None:
    """First non-empty line the tool prints about its version, or None if it is absent."""
    return find_tool(tool).version


def missing_tools() -> list[Tool]:
    """Required tools that are not installed."""
    return [t for t in TOOLS if t.required and tool_path(t) is None]


def normalise(name: str) -> str:
    """PEP 503 form of a distribution name, as pip compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def find_python_package(pkg: PythonPackage) -> Found:
    """The package as this interpreter imports it, or as the command on PATH reports itself."""
    if pkg.command:
        path = shutil.which(pkg.name)
        if path is None:
            return Found(None, None)
        line = _first_line([path, "--version"])
        return Found(line.split()[-1] if line != "unknown" else line, path)
    try:
        dist = importlib.metadata.distribution(pkg.name)
    except importlib.metadata.PackageNotFoundError:
        return Found(None, None)
    return Found(dist.version, str(Path(str(dist.locate_file(""))).resolve()))


def lock_pins(lock: Path = LOCK_FILE) -> dict[str, str]:
    """Pinned versions of requirements.lock by normalised name; empty when there is no lock."""
    try:
        text = lock.read_text()
    except FileNotFoundError:
        return {}
    pins: dict[str, str] = {}
    for line in text.splitlines():
        m = _LOCK_LINE.match(line.strip())
        if m:
            pins[normalise(m.group(1))] = m.group(2)
    return pins


def interpreter() -> Found:
    """The interpreter running mwlab: the one Snakemake's script jobs use when it runs Snakemake."""
    return Found(".".join(map(str, sys.version_info[:3])), sys.executable)


def python_mismatches(found: dict[str, Found], pins: dict[str, str]) -> list[str]:
    """Packages whose installed version is not the pinned one (absent ones included)."""
    problems = []
    for pkg in PYTHON_PACKAGES:
        pin = pins.get(normalise(pkg.name))
        have = found[pkg.name]
        if pin is not None and have.version != pin:
            where = f" at {have.path}" if have.path else ""
            problems.append(f"{pkg.name} {have.version or 'missing'}{where} (pinned {pin})")
    return problems
