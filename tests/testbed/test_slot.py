"""One measurement at a time on the machine (testbed/slot.py)."""

from __future__ import annotations

import threading

from testbed.slot import measurement_slot


def test_a_second_measurement_waits_until_the_first_releases_the_slot(tmp_path):
    lock = tmp_path / "slot.lock"
    acquired = threading.Event()

    def second() -> None:
        with measurement_slot(lock):
            acquired.set()

    with measurement_slot(lock) as waited:
        assert waited >= 0
        t = threading.Thread(target=second)
        t.start()
        # Held here: the other cannot have it, however long this takes.
        assert not acquired.wait(0.5)
    t.join(60)
    assert acquired.is_set()
