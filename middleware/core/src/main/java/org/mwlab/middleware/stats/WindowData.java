package org.mwlab.middleware.stats;

import java.util.TreeMap;

/** Everything recorded in one window, by one recorder or merged over all of them. */
final class WindowData {
  /** Keyed by {@link #typeKey}, ordered by type then key count. */
  final TreeMap<Long, TypeStats> types = new TreeMap<>();
  /** Keyed by {@link #partKey}, ordered by pool, type, key count. */
  final TreeMap<Long, PartStats> parts = new TreeMap<>();
  long arrivals;
  long maxQueue;
  /** Parts waiting in all queues, as {@link Level} events (enqueue +1, dequeue -1). */
  final Level queue = new Level();
  final long[] workerRequests;
  final long[] workerBusyNs;
  final long[] serverRequests;
  final long[] serverKeys;
  final long[] serverErrors;
  final long[] poolEnqueued;
  final long[] poolMaxQueue;
  final Level[] poolQueue;
  final long[] poolCompleted;
  final Level[] poolInFlight;
  final long[] poolInFlightMax;

  WindowData(final int workers, final int servers, final int pools) {
    workerRequests = new long[workers];
    workerBusyNs = new long[workers];
    serverRequests = new long[servers];
    serverKeys = new long[servers];
    serverErrors = new long[servers];
    poolEnqueued = new long[pools];
    poolMaxQueue = new long[pools];
    poolQueue = Level.array(pools);
    poolCompleted = new long[pools];
    poolInFlight = Level.array(pools);
    poolInFlightMax = new long[pools];
  }

  static long typeKey(final int typeOrdinal, final int keys) {
    return ((long) typeOrdinal << 32) | keys;
  }

  /** Pool in the high bits, then the type (2 bits), then the key count (32 bits). */
  static long partKey(final int pool, final int typeOrdinal, final int keys) {
    return ((long) pool << 34) | ((long) typeOrdinal << 32) | (keys & 0xffff_ffffL);
  }

  TypeStats type(final int typeOrdinal, final int keys) {
    return types.computeIfAbsent(typeKey(typeOrdinal, keys), k -> new TypeStats());
  }

  PartStats part(final int pool, final int typeOrdinal, final int keys) {
    return parts.computeIfAbsent(partKey(pool, typeOrdinal, keys), k -> new PartStats());
  }

  void merge(final WindowData o) {
    o.types.forEach((k, v) -> types.computeIfAbsent(k, x -> new TypeStats()).merge(v));
    o.parts.forEach((k, v) -> parts.computeIfAbsent(k, x -> new PartStats()).merge(v));
    arrivals += o.arrivals;
    maxQueue = Math.max(maxQueue, o.maxQueue);
    queue.merge(o.queue);
    add(workerRequests, o.workerRequests);
    add(workerBusyNs, o.workerBusyNs);
    add(serverRequests, o.serverRequests);
    add(serverKeys, o.serverKeys);
    add(serverErrors, o.serverErrors);
    add(poolEnqueued, o.poolEnqueued);
    max(poolMaxQueue, o.poolMaxQueue);
    Level.merge(poolQueue, o.poolQueue);
    add(poolCompleted, o.poolCompleted);
    Level.merge(poolInFlight, o.poolInFlight);
    max(poolInFlightMax, o.poolInFlightMax);
  }

  private static void add(final long[] a, final long[] b) {
    for (int i = 0; i < a.length; i++) {
      a[i] += b[i];
    }
  }

  private static void max(final long[] a, final long[] b) {
    for (int i = 0; i < a.length; i++) {
      a[i] = Math.max(a[i], b[i]);
    }
  }
}
