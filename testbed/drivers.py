"""Load-generator drivers: how each client program is invoked and where its results land."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from testbed.point import Point

# Long enough that nothing expires during a run (the 2018 study's setting).
EXPIRY_RANGE = "9999-10000"


@dataclass(frozen=True)
class Target:
    address: str
    port: int


def resolve_driver(driver: str) -> str:
    """The load generator a point runs: the one it names, the same on every machine. `auto`,
    from datasets measured before the catalogue named drivers, is the built-in one they ran."""
    return "builtin" if driver == "auto" else driver


def memaslap_binary() -> str:
    """memaslap under its Debian name on every path (the Nix dev shell links it): one name, so
    a run never picks a different build depending on which names happen to be installed."""
    return "memcaslap"


def _seconds(duration_s: float) -> int:
    return max(1, math.ceil(duration_s))


def _connection_flags(target: Target) -> list[str]:
    """Where memtier_benchmark (or the built-in generator) connects, and in which protocol."""
    return ["-s", target.address, "-p", str(target.port), "-P", "memcache_text"]


def memtier_flags(point: Point, target: Target, json_out: str) -> list[str]:
    """memtier_benchmark's flags; the built-in generator takes the same."""
    w = point.workload
    flags = [
        *_connection_flags(target),
        "-c",
        str(point.virtual_clients),
        "-t",
        str(point.threads),
        f"--test-time={_seconds(point.duration_s)}",
        f"--ratio={w.ratio}",
        f"--data-size={w.data_size}",
        "--key-minimum=1",
        f"--key-maximum={w.key_maximum}",
        f"--key-pattern={w.key_pattern}",
        f"--expiry-range={EXPIRY_RANGE}",
        f"--json-out-file={json_out}",
        "--hide-histogram",
    ]
    if w.multiget > 0:
        flags.append(f"--multi-key-get={w.multiget}")
    return flags


def populate_flags(point: Point, target: Target, json_out: str) -> list[str]:
    """Writes every key once, sequentially, so that GETs hit."""
    w = point.workload
    return [
        *_connection_flags(target),
        "-c",
        "1",
        "-t",
        "1",
        "--ratio=1:0",
        "--key-pattern=S:S",
        "--requests=allkeys",
        f"--data-size={w.data_size}",
        "--key-minimum=1",
        f"--key-maximum={w.key_maximum}",
        f"--expiry-range={EXPIRY_RANGE}",
        f"--json-out-file={json_out}",
    ]


def memaslap_config(point: Point) -> str:
    """memaslap's -F file: key and value sizes and the set/get proportions."""
    w = point.workload
    total = w.sets + w.gets
    key = w.key_size or 16
    return (
        "key\n"
        f"{key} {key} 1\n"
        "value\n"
        f"{w.data_size} {w.data_size} 1\n"
        "cmd\n"
        f"0 {w.sets / total:.4f}\n"
        f"1 {w.gets / total:.4f}\n"
    )


def loadgen_command(jar: str, flags: list[str]) -> list[str]:
    """The project's load generator (build/loadgen.jar, memtier's flags) with `flags`."""
    return ["java", "-jar", jar, *flags]


def client_command(
    driver: str, point: Point, target: Target, loadgen_jar: str, cfg_path: str
) -> list[str]:
    """The command of one client instance; it runs in its own working directory."""
    if driver == "memtier":
        return ["memtier_benchmark", *memtier_flags(point, target, "result.json")]
    if driver == "builtin":
        command = loadgen_command(loadgen_jar, memtier_flags(point, target, "result.json"))
        # Only when asked for: a generator built before --window-ms runs the default.
        if point.client_window_ms != 1000:
            command.append(f"--window-ms={point.client_window_ms}")
        return command
    if driver == "memaslap":
        concurrency = point.threads * point.virtual_clients
        return [
            memaslap_binary(),
            "-s",
            f"{target.address}:{target.port}",
            "-T",
            str(point.threads),
            "-c",
            str(concurrency),
            # memaslap pre-sets a window of keys per connection before it starts timing; its
            # smallest window (1k) instead of the default 10k keeps that to seconds even at a
            # few hundred connections.
            "-w",
            "1k",
            "-t",
            f"{_seconds(point.duration_s)}s",
            "-F",
            cfg_path,
            "-S",
            "1s",
        ]
    raise ValueError(f"unknown driver {driver!r}")


def result_file(driver: str, client_dir: Path) -> Path:
    """Where a client's results are after the run (memaslap prints them on stdout)."""
    if driver == "memaslap":
        return client_dir / "memaslap.txt"
    return client_dir / "result.json"


def stepped(command: list[str], steps: tuple[int, ...], step_s: float) -> list[str]:
    """A built-in generator command that steps through `steps` connections per thread,
    `step_s` each, instead of one level for `--test-time`."""
    out = [c for c in command if not c.startswith("--test-time=")]
    i = out.index("-c")
    out[i + 1] = str(max(steps))
    return [*out, f"--steps={','.join(map(str, steps))}", f"--step-time={_seconds(step_s)}"]
