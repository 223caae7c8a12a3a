package org.mwlab.middleware;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * Enforces the deadlines of server exchanges. Workers block in plain reads and writes (one system
 * call each, no poll per read); this thread closes the socket of an exchange whose deadline has
 * passed, which ends the blocked call, and the worker reports the timeout.
 */
final class Watchdog implements Runnable {
  private final List<ServerConnection> connections = new CopyOnWriteArrayList<>();
  private final long tickNs;
  private volatile boolean running = true;

  /** Checks every tenth of the timeout (1 to 10 ms), so a timeout fires at most a tick late. */
  Watchdog(final int timeoutMs) {
    this.tickNs = Math.max(1, Math.min(10, timeoutMs / 10)) * 1_000_000L;
  }

  void watch(final ServerConnection c) {
    connections.add(c);
  }

  void stop() {
    running = false;
  }

  @Override
  public void run() {
    while (running) {
      LockSupport.parkNanos(tickNs);
      final long now = System.nanoTime();
      for (final ServerConnection c : connections) {
        c.expireIfLate(now);
      }
    }
  }
}
