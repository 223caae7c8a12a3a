package org.mwlab.middleware.stats;

import java.util.TreeMap;

/** Everything recorded in one window, by one recorder or merged over all of them. */
final class WindowData {
  /** Keyed by {@link #typeKey}, ordered by type then key count. */
  final TreeMap<Long, TypeStats> types = new TreeMap<>();
  long arrivals;
  long maxQueue;
  long queueNs;
  final long[] workerRequests;
  final long[] workerBusyNs;
  final long[] serverRequests;
  final long[] serverKeys;
  final long[] serverErrors;

  WindowData(final int workers, final int servers) {
    workerRequests = new long[workers];
    workerBusyNs = new long[workers];
    serverRequests = new long[servers];
    serverKeys = new long[servers];
    serverErrors = new long[servers];
  }

  static long typeKey(final int typeOrdinal, final int keys) {
    return ((long) typeOrdinal << 32) | keys;
  }

  TypeStats type(final int typeOrdinal, final int keys) {
    return types.computeIfAbsent(typeKey(typeOrdinal, keys), k -> new TypeStats());
  }

  void merge(final WindowData o) {
    o.types.forEach((k, v) -> types.computeIfAbsent(k, x -> new TypeStats()).merge(v));
    arrivals += o.arrivals;
    maxQueue = Math.max(maxQueue, o.maxQueue);
    queueNs += o.queueNs;
    add(workerRequests, o.workerRequests);
    add(workerBusyNs, o.workerBusyNs);
    add(serverRequests, o.serverRequests);
    add(serverKeys, o.serverKeys);
    add(serverErrors, o.serverErrors);
  }

  private static void add(final long[] a, final long[] b) {
    for (int i = 0; i < a.length; i++) {
      a[i] += b[i];
    }
  }
}
