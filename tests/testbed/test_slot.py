"""One measurement at a time on the machine (testbed/slot.py)."""

from __future__ import annotations

import threading
import time

import yaml

from testbed.slot import measurement_slot, measurement_slots, slot_locks


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


def _inventory(path, machines: list[str]) -> str:
    roles = ["server", "middleware", "client"]
    path.write_text(
        yaml.safe_dump(
            {
                "machines": [
                    {"name": f"m{i}", "role": roles[i % 3], "address": a}
                    for i, a in enumerate(machines)
                ]
            }
        )
    )
    return str(path)


def test_ssh_runs_hold_their_machines_and_local_runs_this_one(tmp_path, monkeypatch):
    monkeypatch.setenv("MWLAB_SLOT_LOCK", str(tmp_path / "machine.lock"))
    a = _inventory(tmp_path / "a.yaml", ["198.18.0.2", "198.18.0.3"])
    b = _inventory(tmp_path / "b.yaml", ["198.18.0.4", "198.18.0.5"])
    shared = _inventory(tmp_path / "c.yaml", ["198.18.0.5", "198.18.0.6"])
    paths = {"a": a, "b": b, "c": shared}
    locks = {k: slot_locks({"hosts": "ssh", "inventory": v}) for k, v in paths.items()}
    # Disjoint machines, disjoint locks: the two runs measure at the same time.
    assert not set(locks["a"]) & set(locks["b"])
    # A machine in both inventories is one lock, so their runs never overlap.
    assert set(locks["b"]) & set(locks["c"]) == {tmp_path / "mwlab-machine-root@198.18.0.5.lock"}
    assert locks["a"] == sorted(locks["a"])
    # Processes on this machine (local, emulated) hold its one lock.
    assert slot_locks({"hosts": "emulated"}) == [tmp_path / "machine.lock"]
    with measurement_slots(locks["b"]) as waited:
        assert waited >= 0
        assert all(p.exists() for p in locks["b"])
