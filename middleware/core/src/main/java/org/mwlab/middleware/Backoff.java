package org.mwlab.middleware;

/**
 * Reconnect backoff of one connection to one server: after a failure the next attempt waits, the
 * wait doubling per failure from the minimum to the maximum. It starts over only when the server
 * answers, not on a mere connect, so a server that accepts connections and drops them is not
 * hammered; when any connection to the server gets an answer again, this one may retry at once.
 */
final class Backoff {
  private final ServerPool pool;
  private final int server;
  private long backoffNs;
  private long nextAttemptNs;
  private long failedAtNs;
  private boolean failedBefore;
  /** Connected, but nothing read from the server yet. */
  private boolean unproven;

  Backoff(final ServerPool pool, final int server) {
    this.pool = pool;
    this.server = server;
  }

  /** True if a connection attempt may be made at {@code now}. */
  boolean mayAttempt(final long now) {
    // Another connection getting an answer since this one failed ends the wait early.
    return !failedBefore
        || now - nextAttemptNs >= 0 || pool.answeredAt(server) - failedAtNs > 0;
  }

  /** A connection was established; it proves nothing until the server answers. */
  void connected() {
    unproven = true;
  }

  /** The connection failed: the next attempt waits longer. */
  void failed() {
    backoffNs =
        backoffNs == 0 ? pool.reconnectMinNs() : Math.min(pool.reconnectMaxNs(), backoffNs * 2);
    failedBefore = true;
    failedAtNs = System.nanoTime();
    nextAttemptNs = failedAtNs + backoffNs;
  }

  /** Bytes came from the server: the backoff starts over, and the other connections retry. */
  void answered() {
    if (unproven) {
      unproven = false;
      backoffNs = 0;
      pool.answered(server, System.nanoTime());
    }
  }
}
