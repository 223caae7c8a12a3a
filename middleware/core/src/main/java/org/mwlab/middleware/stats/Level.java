package org.mwlab.middleware.stats;

/**
 * A count over time (parts queued, parts in flight) as the changes that happened in one window:
 * each change is recorded in the window of its own time only, so no record ever reaches back into
 * an earlier window. With the level at the window's start the time integral follows.
 */
final class Level {
  /** Sum of the changes in the window. */
  long delta;
  /** Sum of each change times the time from it to the window's end, in ns. */
  long area;

  void change(final int by, final long atNs, final long windowEndNs) {
    delta += by;
    area += by * (windowEndNs - atNs);
  }

  void clear() {
    delta = 0;
    area = 0;
  }

  void merge(final Level o) {
    delta += o.delta;
    area += o.area;
  }

  /**
   * The integral in ns over {@code [start, stop]} of a window that ends at {@code windowEndNs},
   * given the level at its start; {@code stop} is before the window's end only for the last one.
   */
  double integralNs(final long levelAtStart, final long startNs, final long stopNs,
      final long windowEndNs) {
    return (double) levelAtStart * (stopNs - startNs) + area
        - (double) delta * (windowEndNs - stopNs);
  }

  static Level[] array(final int n) {
    final Level[] a = new Level[n];
    for (int i = 0; i < n; i++) {
      a[i] = new Level();
    }
    return a;
  }

  static void clear(final Level[] a) {
    for (final Level l : a) {
      l.clear();
    }
  }

  static void merge(final Level[] a, final Level[] b) {
    for (int i = 0; i < a.length; i++) {
      a[i].merge(b[i]);
    }
  }
}
