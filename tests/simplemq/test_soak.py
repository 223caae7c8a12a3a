"""`mwlab mq soak` (soak/mqsoak.py): both pop strategies under 64 clients popping one
receiver (removed exactly once, delivered at most once), an oracle that catches a broken pop,
and a middleware killed between a pop's commit and its reply, its losses matched by id; then
the lease mode (at-least-once): a middleware killed between reads' commits and their replies
loses nothing, and every duplicate is a redelivery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from analysis.parse import read_memtier
from analysis.parse.middleware import read_stats_dir
from soak.mqsoak import client_groups, lease_oracle, lease_soak, oracle, soak

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = 64 * 40


def test_the_oracle_counts_what_it_should() -> None:
    sent = [(1, 0, 10), (1, 1, 11), (2, 0, 12), (2, 1, 13)]
    fine = oracle("x", sent, [(1, 0, 10), (2, 0, 12)], [(1, 1, 11), (2, 1, 13)], 3, 0)
    assert fine.ok and (fine.duplicates, fine.lost, fine.empty_pops) == (0, 0, 3)
    twice = oracle("x", sent, [(1, 0, 10), (1, 0, 10), (2, 0, 12)], [(1, 1, 11), (2, 1, 13)], 0, 0)
    assert not twice.ok and twice.duplicates == 1
    missing = oracle("x", sent, [(1, 0, 10)], [(2, 1, 13)], 0, 0)
    assert not missing.ok and missing.lost == 2
    # A pop the commit hold journalled (removed, never answered) explains its own message,
    # by id, and no other: a count of unanswered pops excuses nothing.
    crashed = oracle("x", sent, [(1, 0, 10)], [(2, 1, 13)], 0, 2, frozenset({11, 12}))
    assert crashed.ok and (crashed.lost_matched_to_unanswered, crashed.unmatched_lost) == (2, 0)
    other = oracle("x", sent, [(1, 0, 10)], [(2, 1, 13)], 0, 2, frozenset({10, 11}))
    assert not other.ok and other.unmatched_lost == 1 and other.held_delivered == 1
    excused_by_count = oracle("x", sent, [(1, 0, 10)], [(2, 1, 13)], 0, 5)
    assert not excused_by_count.ok and excused_by_count.unmatched_lost == 2
    # More held pops than the clients saw unanswered: the journal is not to be trusted.
    assert not oracle("x", sent, [(1, 0, 10)], [(2, 1, 13)], 0, 1, frozenset({11, 12})).ok
    disorder = oracle("x", [(1, 0, 11), (1, 1, 10)], [], [(1, 0, 11), (1, 1, 10)], 0, 0)
    assert disorder.out_of_order == 1 and not disorder.ok
    unacknowledged = oracle("x", sent[:1], [(1, 0, 10)], [(9, 0, 20)], 0, 0)
    assert unacknowledged.ok and unacknowledged.stored_unacknowledged == 1


def test_any_message_count_splits_over_the_clients() -> None:
    # (first client, clients, messages each) per client process.
    assert client_groups(64, 2, 6400) == [(1, 32, 100), (33, 32, 100)]
    assert client_groups(64, 2, 6403) == [(1, 3, 101), (4, 29, 100), (33, 32, 100)]
    assert client_groups(5, 2, 7) == [(1, 2, 2), (3, 1, 1), (4, 2, 1)]
    # Fewer messages than clients: the clients that would send none do not start.
    assert client_groups(64, 2, 40) == [(1, 32, 1), (33, 8, 1)]
    for clients, processes, messages in ((64, 2, 6403), (7, 3, 50), (3, 3, 1)):
        groups = client_groups(clients, processes, messages)
        assert sum(n * each for _, n, each in groups) == messages


def test_skip_locked_pops_each_message_once(tmp_path: Path) -> None:
    v = soak(tmp_path, "skip_locked", MESSAGES)
    assert v.ok, v
    assert v.sent == MESSAGES and v.popped + v.remaining == v.sent
    # The analysis reads both sides' output with the memcached study's parsers, and they
    # agree with the oracle and with each other.
    clients = (
        pd.concat([read_memtier(p).totals for p in sorted(tmp_path.glob("clients/*/result.json"))])
        .groupby("type")["count"]
        .sum()
    )
    served = (
        pd.concat([read_stats_dir(p).windows for p in sorted(tmp_path.glob("middlewares/*/stats"))])
        .groupby("type")[["count", "values_returned"]]
        .sum()
    )
    assert clients["send"] == served.loc["send", "count"] == v.sent
    # The clients time the pops that delivered a message (empty ones are counted by status);
    # the middlewares count every pop they answered and the messages they returned.
    assert clients["pop_queue"] == served.loc["pop_queue", "values_returned"] == v.popped
    assert served.loc["pop_queue", "count"] == v.popped + v.empty_pops


def test_naive_pops_each_message_once_with_empty_pops(tmp_path: Path) -> None:
    # A count the clients do not divide: the first clients send one more each.
    v = soak(tmp_path, "naive", MESSAGES + 7)
    assert v.ok, v
    # Naive pops race for the same smallest row: the losers find it gone and answer empty.
    assert v.empty_pops > 0, v
    assert v.sent == MESSAGES + 7 and v.popped + v.remaining == v.sent


def test_the_oracle_catches_a_pop_that_reads_then_deletes(tmp_path: Path) -> None:
    v = soak(tmp_path, "broken", MESSAGES)
    assert v.duplicates > 0 and not v.ok, v


def test_a_middleware_killed_between_commit_and_reply_loses_only_the_held_pops(
    tmp_path: Path,
) -> None:
    v = soak(tmp_path, "skip_locked", MESSAGES * 2, kill_middleware=True)
    # The pop is at-most-once: the kill hit the window on purpose, so messages were lost,
    # each one a pop that committed and was never answered, matched by id; nothing else
    # went missing and nothing came twice. The clients moved to the surviving middleware.
    assert v.lost_matched_to_unanswered >= 1, v
    assert v.unmatched_lost == 0 and v.duplicates == 0 and v.held_delivered == 0, v
    assert v.lost == v.lost_matched_to_unanswered <= v.held <= v.unanswered, v
    assert v.ok, v
    # The first middleware died mid-soak (a SIGTERM at the end would have had it write its
    # statistics); the second served to the end.
    assert not (tmp_path / "middlewares" / "mw1" / "stats" / "summary.json").exists()
    survivor = json.loads((tmp_path / "middlewares" / "mw2" / "stats" / "summary.json").read_text())
    assert survivor["operations"]["pop_queue"]["replies"]["ok"] > 0


def test_the_command_prints_one_json_line_and_fails_on_a_duplicate(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "mwlab", "mq", "soak", "--strategy", "broken",
         "--messages", str(MESSAGES), "--out", str(tmp_path / "soak")],
        cwd=ROOT, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(line) >= {"sent", "popped", "remaining", "duplicates", "lost", "empty_pops",
                         "strategy"}  # fmt: skip
    assert line["strategy"] == "broken" and line["duplicates"] > 0


def test_the_lease_oracle_counts_what_it_should() -> None:
    sent = [(1, 0, 10), (1, 1, 11), (2, 0, 12)]
    fine = lease_oracle("x", sent, [(10, 1), (11, 1), (11, 2)], [(10, "ok"), (11, "ok")],
                        {12}, set(), 1, frozenset({11}), 1)  # fmt: skip
    assert fine.ok, fine
    assert (fine.acked, fine.remaining, fine.lost) == (2, 1, 0)
    assert (fine.duplicates, fine.redelivered, fine.held_redelivered) == (1, 1, 1)
    # Gone without an ack: lost.
    lost = lease_oracle("x", sent, [(10, 1)], [(10, "ok")], {12}, set(), 0)
    assert not lost.ok and lost.lost == 1
    # One lease delivered twice (the same count): a duplicate that was no redelivery.
    twice = lease_oracle("x", sent, [(10, 1), (10, 1)], [(10, "ok"), (11, "ok")], {12}, set(), 0)
    assert not twice.ok and twice.unexplained_duplicates == 1
    # An ack whose reply was lost removed its message: acked, not lost; but two ok acks of
    # one message would be a lease deleted twice.
    unanswered = [(10, "ok"), (11, "unanswered"), (11, "not_leased")]
    by_lost_reply = lease_oracle("x", sent, [(10, 1), (11, 1)], unanswered, {12}, set(), 0)
    assert by_lost_reply.ok and by_lost_reply.acked_unanswered == 1
    double = lease_oracle("x", sent, [(10, 1), (11, 1)], [(10, "ok"), (10, "ok"), (11, "ok")],
                          {12}, set(), 0)  # fmt: skip
    assert not double.ok and double.acked_twice == 1
    # Dead-lettered messages are kept, not lost.
    dead = lease_oracle("x", sent, [(10, 1), (11, 1)], [(10, "ok")], {12}, {11}, 0)
    assert dead.ok and dead.dead_lettered == 1


def test_a_middleware_killed_between_a_lease_reads_commit_and_its_reply_loses_nothing(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    v = lease_soak(tmp_path, "skip_locked", MESSAGES // 2, kill_middleware=True)
    # At-least-once: the reads the kill held unanswered leased their messages in the database;
    # once the timeout passed they were delivered again (a count above 1) through the
    # surviving middleware, and acked. Nothing is missing, nothing acked twice.
    assert v.held >= 1 and v.redelivered >= 1 and v.held_redelivered == v.held, v
    assert v.lost == 0 and v.acked_twice == 0, v
    assert v.acked + v.remaining == v.sent, v
    # Every delivery of a message beyond its first carried a higher delivery count.
    assert v.unexplained_duplicates == 0 and v.duplicates <= v.redelivered, v
    assert v.held_reads <= v.unanswered and v.ok, v
    assert not (tmp_path / "middlewares" / "mw1" / "stats" / "summary.json").exists()
    survivor = json.loads((tmp_path / "middlewares" / "mw2" / "stats" / "summary.json").read_text())
    assert survivor["operations"]["read"]["replies"]["ok"] > 0
    assert survivor["operations"]["ack"]["replies"]["ok"] > 0
    verdict = json.loads((tmp_path / "verdict.json").read_text())
    assert verdict["ok"] and verdict["lost"] == 0
    assert time.monotonic() - started < 300.0  # a budget for a loaded machine, not a deadline


def test_group_commit_answers_only_what_committed_under_a_kill(tmp_path: Path) -> None:
    """Up to 8 requests in one transaction: a pop's message still reaches its client only from
    the transaction that removed it, so a middleware killed between group commits and their
    replies loses exactly the held groups' pops, matched by id, and no acknowledged send is
    missing. (A plain send held in a group is stored and never acknowledged: at-most-once for
    its reply, as without groups.)"""
    v = soak(tmp_path, "skip_locked", MESSAGES // 2, kill_middleware=True, group_commit=8)
    assert v.lost_matched_to_unanswered >= 1, v
    assert v.unmatched_lost == 0 and v.duplicates == 0 and v.held_delivered == 0, v
    assert v.ok, v
    survivor = json.loads((tmp_path / "middlewares" / "mw2" / "stats" / "summary.json").read_text())
    assert survivor["config"]["group_commit"] == 8
    groups = survivor["group_commit"]
    # Transactions of several clients' requests really ran (2 to 8 each).
    assert groups["transactions"] >= 1 and 2 * groups["transactions"] <= groups["requests"]
    assert groups["requests"] <= 8 * groups["transactions"]


def test_idempotent_sends_resent_after_a_kill_are_stored_once(tmp_path: Path) -> None:
    """The hold keeps sends that stored their message unanswered too; the killed middleware's
    clients send them again on the other one, which answers the stored message's id."""
    v = soak(tmp_path, "skip_locked", MESSAGES // 2, kill_middleware=True, idempotent_send=True)
    assert v.held_sends >= 1 and v.held_sends_acknowledged == v.held_sends, v
    assert v.resent >= v.held_sends, v
    # Every send acknowledged, none stored twice, none stored unacknowledged.
    assert v.sent == MESSAGES // 2 and v.duplicates == 0 and v.stored_unacknowledged == 0, v
    assert v.unmatched_lost == 0 and v.ok, v
