"""External tools the study needs, and how to find out which versions are present."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Tool:
    """An executable the project relies on."""

    name: str
    version_args: tuple[str, ...]
    purpose: str
    required: bool = True


TOOLS: tuple[Tool, ...] = (
    Tool("java", ("-version",), "runs the middleware and the built-in load generator"),
    Tool("mvn", ("--version",), "builds the Java artifacts"),
    Tool("memcached", ("-V",), "the servers behind the middleware"),
    Tool("memcaslap", ("--version",), "third-party load generator (libmemcached-tools)"),
    Tool("memccp", ("--version",), "third-party client (libmemcached-tools)"),
    Tool("nutcracker", ("--version",), "twemproxy, the baseline proxy"),
    Tool("iperf3", ("--version",), "measures link capacities"),
    Tool("ip", ("-V",), "network namespaces for emulated hosts"),
    Tool("tc", ("-V",), "bandwidth caps for emulated hosts"),
    Tool("sshd", ("-V",), "ssh hosts in tests"),
    Tool("latexmk", ("-v",), "builds the report"),
    Tool("pdflatex", ("--version",), "builds the report"),
    Tool(
        "memtier_benchmark",
        ("--version",),
        "the study's load generator (Nix shell only; the built-in one stands in)",
        required=False,
    ),
)


# Some tools (Maven) colour their version banner even when not on a terminal.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def tool_version(tool: Tool) -> str | None:
    """First non-empty line the tool prints about its version, or None if it is absent."""
    path = shutil.which(tool.name) or shutil.which(tool.name, path="/usr/sbin:/sbin")
    if path is None:
        return None
    try:
        proc = subprocess.run(
            [path, *tool.version_args],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in _ANSI.sub("", proc.stdout + "\n" + proc.stderr).splitlines():
        if line.strip():
            return line.strip()
    return "unknown"


def missing_tools() -> list[Tool]:
    """Required tools that are not installed."""
    return [t for t in TOOLS if t.required and tool_version(t) is None]
