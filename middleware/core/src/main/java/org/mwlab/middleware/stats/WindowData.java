package org.mwlab.middleware.stats;

import java.util.Arrays;
import java.util.TreeMap;

/**
 * Everything recorded in one window, by one recorder or merged over all of them. A recorder's
 * copies are reused ({@link #clear}): their entries stay, emptied, so that recording allocates
 * nothing once a thread has seen its request types.
 */
final class WindowData {
  /** Keyed by {@link #typeKey}, ordered by type then key count. */
  final TreeMap<Long, TypeStats> types = new TreeMap<>();
  /** Keyed by {@link #partKey}, ordered by pool, type, key count. */
  final TreeMap<Long, PartStats> parts = new TreeMap<>();
  /** The entries of {@link #types} and {@link #parts}, found without boxing their keys. */
  private final SmallIndex<TypeStats> typeIndex = new SmallIndex<>();
  private final SmallIndex<PartStats> partIndex = new SmallIndex<>();
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
    return type(typeKey(typeOrdinal, keys));
  }

  PartStats part(final int pool, final int typeOrdinal, final int keys) {
    return part(partKey(pool, typeOrdinal, keys));
  }

  private TypeStats type(final long key) {
    TypeStats s = typeIndex.get(key);
    if (s == null) {
      s = new TypeStats();
      typeIndex.put(key, s);
      types.put(key, s);
    }
    return s;
  }

  private PartStats part(final long key) {
    PartStats s = partIndex.get(key);
    if (s == null) {
      s = new PartStats();
      partIndex.put(key, s);
      parts.put(key, s);
    }
    return s;
  }

  /** Empties a recorder's copy for reuse; its entries stay, with nothing in them. */
  void clear() {
    types.values().forEach(TypeStats::clear);
    parts.values().forEach(PartStats::clear);
    arrivals = 0;
    maxQueue = 0;
    queue.clear();
    for (final long[] a :
        new long[][] {workerRequests, workerBusyNs, serverRequests, serverKeys, serverErrors,
            poolEnqueued, poolMaxQueue, poolCompleted, poolInFlightMax}) {
      Arrays.fill(a, 0);
    }
    Level.clear(poolQueue);
    Level.clear(poolInFlight);
  }

  void merge(final WindowData o) {
    // A reused copy's emptied entries are no records: they make no rows.
    o.types.forEach((k, v) -> {
      if (v.count > 0) {
        type(k).merge(v);
      }
    });
    o.parts.forEach((k, v) -> {
      if (v.count > 0) {
        part(k).merge(v);
      }
    });
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
