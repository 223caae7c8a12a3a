package org.mwlab.middleware.stats;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/** One recorder's data since the collector last took it. Single writer. */
final class Accumulator {
  final TreeMap<Long, WindowData> windows = new TreeMap<>();
  final List<long[]> trace = new ArrayList<>();
  /** Worker turns by the number of requests taken in the turn (index = batch size). */
  long[] batchSizes = new long[0];
  private final int workers;
  private final int servers;
  private final int pools;
  private long lastIndex = -1;
  private WindowData last;

  Accumulator(final int workers, final int servers, final int pools) {
    this.workers = workers;
    this.servers = servers;
    this.pools = pools;
  }

  void batch(final int size) {
    if (size >= batchSizes.length) {
      batchSizes = java.util.Arrays.copyOf(batchSizes, Math.max(size + 1, 17));
    }
    batchSizes[size]++;
  }

  WindowData window(final long w) {
    if (w != lastIndex) {
      lastIndex = w;
      last = windows.computeIfAbsent(w, k -> new WindowData(workers, servers, pools));
    }
    return last;
  }
}
