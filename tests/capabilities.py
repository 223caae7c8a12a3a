"""What a test needs of the machine or of `make setup` and `make build`.

A capability of the machine (root, network namespaces, cgroups) may be missing on a
developer's machine: the test then skips, except under `make test`, which sets
MWLAB_REQUIRE_CAPABILITIES=1, so that a machine without them cannot pass the suite by
skipping. What `make setup` or `make build` provides (a tool, the jars, nfdelay) is never a
reason to skip: its absence fails the test with the command that provides it.
"""

from __future__ import annotations

import os

import pytest

REQUIRE = "MWLAB_REQUIRE_CAPABILITIES"


def need(available: bool, what: str) -> None:
    """Skips (fails under MWLAB_REQUIRE_CAPABILITIES=1) unless the machine has `what`."""
    if available:
        return
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{what}; {REQUIRE}=1 (`make test`) requires it")
    pytest.skip(what)


def provided(available: bool, what: str, by: str) -> None:
    """Fails unless what `by` (`make setup`, `make build`) provides is there."""
    if not available:
        pytest.fail(f"{what} is missing: `{by}` provides it")
