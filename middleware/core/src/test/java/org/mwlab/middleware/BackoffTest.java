package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The backoff's schedule, without timing anything: after each failure an attempt is refused
 * until the backoff has passed since the failure and allowed once it has. The failure's own
 * time lies between two clock readings around it, so each check holds on any machine.
 */
class BackoffTest {
  private static final long MS = 1_000_000L;

  private static ServerPool pool(final int minMs, final int maxMs) {
    return new ServerPool(Main.parse("-p", "1", "-m", "127.0.0.1:11211", "--reconnect-min-ms",
        Integer.toString(minMs), "--reconnect-max-ms", Integer.toString(maxMs)));
  }

  /** Fails the connection once and checks that the wait is {@code expectedMs}. */
  private static void failsAndWaits(final Backoff b, final long expectedMs) {
    final long before = System.nanoTime();
    b.failed();
    final long after = System.nanoTime();
    assertFalse(b.mayAttempt(before + expectedMs * MS - 1), "waits " + expectedMs + " ms");
    assertTrue(b.mayAttempt(after + expectedMs * MS), "no longer than " + expectedMs + " ms");
  }

  @Test
  void theWaitDoublesPerFailureUpToTheMaximumAndStaysThere() {
    final Backoff b = new Backoff(pool(40, 320), 0);
    assertTrue(b.mayAttempt(System.nanoTime()), "a connection never failed may be tried");
    for (final long ms : new long[] {40, 80, 160, 320, 320, 320}) {
      failsAndWaits(b, ms);
    }
  }

  @Test
  void anAnswerStartsTheWaitOverButAMereConnectDoesNot() {
    final ServerPool pool = pool(40, 320);
    final Backoff b = new Backoff(pool, 0);
    failsAndWaits(b, 40);
    failsAndWaits(b, 80);
    b.connected();
    failsAndWaits(b, 160);
    b.connected();
    b.answered();
    failsAndWaits(b, 40);
  }

  @Test
  void anotherConnectionsAnswerEndsTheWaitEarly() {
    final ServerPool pool = pool(40, 320);
    final Backoff b = new Backoff(pool, 0);
    final long before = System.nanoTime();
    b.failed();
    assertFalse(b.mayAttempt(before + 40 * MS - 1));
    pool.answered(0, System.nanoTime() + 1);
    assertTrue(b.mayAttempt(before + 40 * MS - 1), "the server answered another connection");
  }
}
