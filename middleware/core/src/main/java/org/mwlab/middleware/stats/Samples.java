package org.mwlab.middleware.stats;

import java.util.Arrays;

/**
 * Values a recording thread took in one window, kept raw until the collector merges them. A
 * histogram per thread and window would cost its whole counts array (tens of kilobytes once
 * dilated response times reach a second) for each window in which the thread recorded at all;
 * with a hundred threads that record a request or two per window, that array, not the request,
 * was the worker's and the collector's main cost.
 */
final class Samples {
  private long[] values = new long[4];
  private int size;

  void add(final long value) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = value;
  }

  /** Drops every value; the array is kept for the next window. */
  void clear() {
    size = 0;
  }

  int size() {
    return size;
  }

  long get(final int i) {
    return values[i];
  }
}
