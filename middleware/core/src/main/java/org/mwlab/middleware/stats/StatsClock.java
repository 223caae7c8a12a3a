package org.mwlab.middleware.stats;

/**
 * Maps {@link System#nanoTime()} to windows and epoch milliseconds. Windows start at the first
 * request's arrival.
 */
public final class StatsClock {
  private final long startNs;
  private final long startEpochMs;
  private final long windowNs;
  private volatile long originNs = Long.MIN_VALUE;

  public StatsClock(final long windowMs) {
    this.startNs = System.nanoTime();
    this.startEpochMs = System.currentTimeMillis();
    this.windowNs = windowMs * 1_000_000L;
  }

  /** Called by the net-thread on every arrival; only the first one fixes the origin. */
  public void arrival(final long ns) {
    if (originNs == Long.MIN_VALUE) {
      originNs = ns;
    }
  }

  public boolean started() {
    return originNs != Long.MIN_VALUE;
  }

  public long window(final long ns) {
    final long o = originNs;
    if (o == Long.MIN_VALUE || ns <= o) {
      return 0;
    }
    return (ns - o) / windowNs;
  }

  public long windowStartNs(final long w) {
    return originNs + w * windowNs;
  }

  public long windowNs() {
    return windowNs;
  }

  public long startNs() {
    return startNs;
  }

  public long startEpochMs() {
    return startEpochMs;
  }

  public long epochMs(final long ns) {
    return startEpochMs + Math.floorDiv(ns - startNs, 1_000_000L);
  }
}
