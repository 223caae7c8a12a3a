"""One measurement at a time on the machine (testbed/slot.py)."""

from __future__ import annotations

import threading
import time

from testbed.slot import measurement_slot


def test_a_second_measurement_waits_until_the_first_releases_the_slot(tmp_path):
    lock = tmp_path / "slot.lock"
    starting = threading.Event()
    seen: dict[str, float] = {}

    def second() -> None:
        starting.set()
        seen["before"] = time.monotonic()
        with measurement_slot(lock) as waited:
            seen["acquired"] = time.monotonic()
            seen["waited"] = waited

    with measurement_slot(lock):
        t = threading.Thread(target=second)
        t.start()
        assert starting.wait(60)
        # Held here: the other cannot have it, however long this takes.
        time.sleep(0.5)
        assert "acquired" not in seen
        released = time.monotonic()
    t.join(60)
    assert seen["acquired"] >= released
    # The wait it reports is its own: some time, and no more than it spent getting the slot.
    assert 0 < seen["waited"] <= seen["acquired"] - seen["before"]
