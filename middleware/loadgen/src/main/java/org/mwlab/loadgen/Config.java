package org.mwlab.loadgen;

import java.util.List;

/**
 * Everything a run needs, validated. {@code steps} is empty for an unstepped run; otherwise it
 * holds the connections per thread active in each step of {@code stepSeconds} seconds, and
 * {@code testTimeSeconds} is the whole run (steps times step length). The time series has one
 * entry per window of {@code windowMs} milliseconds, counted from the run's (or step's) start.
 */
public record Config(
    String server,
    int port,
    int clients,
    int threads,
    int testTimeSeconds,
    long requests,
    Ratio ratio,
    int multiKeyGet,
    int dataSize,
    long keyMinimum,
    long keyMaximum,
    KeyPattern setPattern,
    KeyPattern getPattern,
    int expiryMin,
    int expiryMax,
    String keyPrefix,
    long seed,
    List<Integer> steps,
    int stepSeconds,
    int windowMs) {

  /** memtier's window: one second. */
  public static final int DEFAULT_WINDOW_MS = 1000;

  public static final int MIN_WINDOW_MS = 50;
  public static final int MAX_WINDOW_MS = 60_000;

  public Config {
    require(port > 0 && port < 65536, "port must be in 1..65535");
    require(clients >= 1, "--clients must be >= 1");
    require(threads >= 1, "--threads must be >= 1");
    require(requests > 0 || testTimeSeconds > 0, "give --test-time or --requests");
    require(multiKeyGet >= 0, "--multi-key-get must be >= 0");
    require(dataSize >= 1, "--data-size must be >= 1");
    require(keyMinimum >= 0 && keyMaximum >= keyMinimum, "need 0 <= --key-minimum <= --key-maximum");
    require(expiryMin >= 0 && expiryMax >= expiryMin, "--expiry-range must be MIN-MAX with MIN <= MAX");
    require(
        windowMs >= MIN_WINDOW_MS && windowMs <= MAX_WINDOW_MS,
        "--window-ms must be in " + MIN_WINDOW_MS + ".." + MAX_WINDOW_MS + ", got " + windowMs);
    steps = List.copyOf(steps);
    if (!steps.isEmpty()) {
      require(stepSeconds > 0, "--step-time must be > 0");
      for (final int c : steps) {
        require(c >= 1 && c <= clients, "--steps values must be in 1..--clients (" + clients + "), got " + c);
      }
      require(requests == 0, "--steps excludes --requests");
      require((long) steps.size() * stepSeconds == testTimeSeconds, "the test time must be the sum of the steps");
      // A window never straddles two steps, so each step's windows are whole.
      require(
          stepSeconds * 1000L % windowMs == 0,
          "--step-time (" + stepSeconds + " s) must be a whole number of --window-ms (" + windowMs + " ms)");
    }
  }

  private static void require(final boolean ok, final String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  /** Whether the run is bounded by a request count rather than by time. */
  public boolean byRequests() {
    return requests > 0;
  }

  public boolean stepped() {
    return !steps.isEmpty();
  }

  /** Steps of the run; an unstepped run is one step that lasts as long as the run. */
  public int stepCount() {
    return stepped() ? steps.size() : 1;
  }

  /** Connections per thread that send requests in step {@code step} (0-based). */
  public int activeClients(final int step) {
    return stepped() ? steps.get(step) : clients;
  }

  /** Length of a step; unbounded for an unstepped run. */
  public long stepNanos() {
    return stepped() ? stepSeconds * 1_000_000_000L : Long.MAX_VALUE;
  }

  /** Length of a window of the time series, in nanoseconds. */
  public long windowNanos() {
    return windowMs * 1_000_000L;
  }

  /** Windows in one step of a stepped run. */
  public int windowsPerStep() {
    return (int) (stepSeconds * 1000L / windowMs);
  }

  /** Step {@code step} (0-based) described as a run of its own, for its report. */
  public Config step(final int step) {
    return new Config(
        server,
        port,
        steps.get(step),
        threads,
        stepSeconds,
        0,
        ratio,
        multiKeyGet,
        dataSize,
        keyMinimum,
        keyMaximum,
        setPattern,
        getPattern,
        expiryMin,
        expiryMax,
        keyPrefix,
        seed,
        List.of(),
        0,
        windowMs);
  }
}
