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

from common.paths import REPO


@dataclass(frozen=True)
class Tool:
    """An executable the project relies on."""

    name: str
    version_args: tuple[str, ...]
    purpose: str
    required: bool = True
    # The Debian 12 package that installs it (scripts/debian-packages.tsv, which says which
    # commands need it); None: not packaged there.
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
        "the 2018 study's load generator, for a family that names it (`driver: memtier`)",
        required=False,
    ),
)

# The tools whose version a measurement depends on: the systems measured, their servers and
# load generators. A dataset measured with other versions of these is another measurement.
# memccp is here for its banner, which names the libmemcached that memcaslap is built from
# (memcaslap's own says "v1.0" on 1.0.18 and on 1.1.4 alike).
MEASURED_TOOLS = frozenset(
    {"java", "memcached", "memcaslap", "memccp", "memtier_benchmark", "nutcracker", "initdb"}
)


@dataclass(frozen=True)
class PythonPackage:
    """A Python distribution whose version must be the one requirements.lock pins, on every path."""

    name: str
    # True: what counts is the executable on PATH (make and the pipeline run it), not the import.
    command: bool = False
    # The extra of pyproject.toml that brings it (only `make test` installs `test`); None: a
    # runtime dependency, in every environment.
    extra: str | None = None


PYTHON_PACKAGES: tuple[PythonPackage, ...] = (
    PythonPackage("pandas"),
    PythonPackage("numpy"),
    PythonPackage("statsmodels"),
    PythonPackage("scipy"),
    PythonPackage("matplotlib"),
    PythonPackage("pydantic"),
    PythonPackage("hdrhistogram"),
    PythonPackage("snakemake", command=True),
    PythonPackage("ruff", command=True, extra="test"),
)

# The runtime closure, and the closure with the test extra (`make lock` writes both, hashed).
LOCK_FILE = REPO / "requirements.lock"
TEST_LOCK_FILE = REPO / "requirements-test.lock"
DEBIAN_PACKAGES = REPO / "scripts" / "debian-packages.tsv"
# What a command of the Makefile installs and checks: `make paper` only rebuilds the report,
# `make measure` runs the systems, `make test` everything (scripts/debian-packages.tsv).
COMMANDS = ("paper", "measure", "test")


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


def debian_packages(path: Path = DEBIAN_PACKAGES) -> dict[str, frozenset[str]]:
    """Each Debian package of scripts/debian-packages.tsv with the commands that need it."""
    packages: dict[str, frozenset[str]] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, _, commands = line.partition("\t")
            packages[package.strip()] = frozenset(commands.split())
    return packages


def needed_by(tool: Tool, command: str) -> bool:
    """Whether `command` runs the tool: by its Debian package's commands; a tool Debian does
    not package (memtier_benchmark) only where a family names it, which `test` covers."""
    if tool.debian is None:
        return command == "test"
    return command in debian_packages().get(tool.debian, frozenset())


def missing_tools(command: str = "test") -> list[Tool]:
    """Required tools of `command` that are not installed."""
    return [t for t in TOOLS if t.required and needed_by(t, command) and tool_path(t) is None]


def lock_for(command: str) -> Path:
    """The lock whose closure `command`'s environment holds: the test extra only for `test`."""
    return TEST_LOCK_FILE if command == "test" else LOCK_FILE


def python_packages(command: str) -> tuple[PythonPackage, ...]:
    """The packages `command`'s environment must hold at the pinned versions."""
    return tuple(p for p in PYTHON_PACKAGES if p.extra is None or command == "test")


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


def python_mismatches(
    found: dict[str, Found], pins: dict[str, str], command: str = "test"
) -> list[str]:
    """`command`'s packages whose installed version is not the pinned one (absent ones too)."""
    problems = []
    for pkg in python_packages(command):
        pin = pins.get(normalise(pkg.name))
        have = found[pkg.name]
        if pin is not None and have.version != pin:
            where = f" at {have.path}" if have.path else ""
            problems.append(f"{pkg.name} {have.version or 'missing'}{where} (pinned {pin})")
    return problems


@dataclass(frozen=True)
class Difference:
    """A tool or package whose version here is not the one a measurement recorded."""

    name: str
    here: str | None
    recorded: str | None

    @property
    def measured(self) -> bool:
        """Whether the measurement's results depend on it (MEASURED_TOOLS)."""
        return self.name in MEASURED_TOOLS

    def describe(self, source: str) -> str:
        kind = "measured" if self.measured else "not measured"
        here = self.here or "not installed"
        recorded = self.recorded or "not installed"
        return f"{self.name} ({kind}): {here} here, {recorded} in {source}"


def versions() -> dict[str, str | None]:
    """Name -> version of every tool and Python package (None where absent), and the
    interpreter's: what `mwlab tools --json` prints and a measurement records
    (environment/tools.json)."""
    found = {t.name: find_tool(t).version for t in TOOLS}
    found |= {p.name: find_python_package(p).version for p in PYTHON_PACKAGES}
    found["python"] = interpreter().version
    return found


def differences(here: dict[str, str | None], recorded: dict[str, str | None]) -> list[Difference]:
    """What differs between this machine and a recorded environment, measured tools first.
    A name only one side records counts: a tool the measurement ran and this machine lacks, or
    one this machine has that the measurement did not record (as null or not at all)."""
    names = sorted(here.keys() | recorded.keys())
    found = [
        Difference(n, here.get(n), recorded.get(n)) for n in names if here.get(n) != recorded.get(n)
    ]
    return sorted(found, key=lambda d: (not d.measured, d.name))
