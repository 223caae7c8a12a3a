package org.mwlab.middleware.stats;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * One recorder's data since the collector last took it. Single writer. Reused: once the
 * collector has merged it, {@link #reset} empties it and keeps its windows for the next time.
 */
final class Accumulator {
  final TreeMap<Long, WindowData> windows = new TreeMap<>();
  final List<long[]> trace = new ArrayList<>();
  /** Worker turns by the number of requests taken in the turn (index = batch size). */
  long[] batchSizes = new long[0];
  private final ArrayDeque<WindowData> free = new ArrayDeque<>();
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
      batchSizes = Arrays.copyOf(batchSizes, Math.max(size + 1, 17));
    }
    batchSizes[size]++;
  }

  WindowData window(final long w) {
    if (w != lastIndex) {
      WindowData d = windows.get(w);
      if (d == null) {
        d = free.isEmpty() ? new WindowData(workers, servers, pools) : free.pop();
        windows.put(w, d);
      }
      lastIndex = w;
      last = d;
    }
    return last;
  }

  /** Collector, after merging: empties this for reuse. */
  void reset() {
    for (final WindowData d : windows.values()) {
      d.clear();
      free.push(d);
    }
    windows.clear();
    trace.clear();
    Arrays.fill(batchSizes, 0);
    lastIndex = -1;
    last = null;
  }
}
