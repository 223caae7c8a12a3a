"""The SimpleMQ client's command line: ids that leave the run's range are refused before any
connection, with the flags to fix and picocli's usage status."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

JAR = Path(__file__).resolve().parents[2] / "build" / "simplemq.jar"


@pytest.mark.parametrize(("first", "clients"), [(4, 5), (0, 2)])
def test_client_ids_outside_all_clients_are_refused(first: int, clients: int) -> None:
    if not JAR.is_file():
        pytest.fail(f"{JAR} is missing: run `make build` first")
    # Port 9 on loopback: nothing is meant to answer; the refusal must come first.
    cmd = ["java", "-jar", str(JAR), "client", "--middleware", "127.0.0.1:9",
           "--clients", str(clients), "--first-client", str(first), "--all-clients", "6",
           "--test-time", "1"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "--first-client and --clients must name ids within 1 to --all-clients" in proc.stderr


def test_a_negative_priming_is_refused() -> None:
    if not JAR.is_file():
        pytest.fail(f"{JAR} is missing: run `make build` first")
    cmd = ["java", "-jar", str(JAR), "client", "--middleware", "127.0.0.1:9", "--clients", "1",
           "--test-time", "1", "--prime", "-1"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "--prime must not be negative" in proc.stderr
