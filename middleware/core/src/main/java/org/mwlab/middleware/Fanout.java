package org.mwlab.middleware;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Design 2016: a GET's parts in flight on several read threads. The thread that finishes the last
 * part answers the client, so there is exactly one reply, in the client's key order with one
 * {@code END}.
 */
final class Fanout {
  final Request request;
  /** Parts not finished yet. A failing part adds its failovers before it counts itself done. */
  final AtomicInteger remaining;
  /**
   * Each key position's VALUE block, when the request has (or had) more than one part; null
   * while it has a single part, which relays its reply straight. Set before the parts that use it
   * are queued (the queue orders it before their reads).
   */
  volatile byte[][] values;
  /** No replica is left for some key: the request fails. */
  volatile boolean failed;
  final AtomicInteger valuesReturned = new AtomicInteger();
  private final List<Part> parts = new ArrayList<>(2);
  private final StringBuilder failures = new StringBuilder();

  Fanout(final Request request, final int parts) {
    this.request = request;
    this.remaining = new AtomicInteger(parts);
  }

  synchronized void add(final Part p) {
    parts.add(p);
  }

  synchronized List<Part> parts() {
    return List.copyOf(parts);
  }

  synchronized void failure(final HostPort server, final String reason) {
    if (failures.length() > 0) {
      failures.append("; ");
    }
    failures.append(server).append(' ').append(reason);
  }

  synchronized String failures() {
    return failures.toString();
  }
}
