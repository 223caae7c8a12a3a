package org.mwlab.loadgen;

/** Everything a run needs, validated. */
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
    long seed) {

  public Config {
    require(port > 0 && port < 65536, "port must be in 1..65535");
    require(clients >= 1, "--clients must be >= 1");
    require(threads >= 1, "--threads must be >= 1");
    require(requests > 0 || testTimeSeconds > 0, "give --test-time or --requests");
    require(multiKeyGet >= 0, "--multi-key-get must be >= 0");
    require(dataSize >= 1, "--data-size must be >= 1");
    require(keyMinimum >= 0 && keyMaximum >= keyMinimum, "need 0 <= --key-minimum <= --key-maximum");
    require(expiryMin >= 0 && expiryMax >= expiryMin, "--expiry-range must be MIN-MAX with MIN <= MAX");
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
}
