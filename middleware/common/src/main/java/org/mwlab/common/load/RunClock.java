package org.mwlab.common.load;

/** Start instant shared by all workers, set once every connection is open. */
public final class RunClock {

  private volatile long startNanos;
  private volatile long startEpochMs;

  public void start() {
    startEpochMs = System.currentTimeMillis();
    startNanos = System.nanoTime();
  }

  public long startNanos() {
    return startNanos;
  }

  public long startEpochMs() {
    return startEpochMs;
  }
}
