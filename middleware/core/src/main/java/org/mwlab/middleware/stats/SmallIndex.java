package org.mwlab.middleware.stats;

import java.util.Arrays;

/**
 * The few values of a recording thread's window (one per request type and key count) by their
 * long key, found by a scan without boxing the key: a {@code TreeMap<Long, …>} lookup boxed a
 * {@code Long} per record.
 */
final class SmallIndex<V> {
  private long[] keys = new long[4];
  private Object[] values = new Object[4];
  private int size;

  @SuppressWarnings("unchecked")
  V get(final long key) {
    for (int i = 0; i < size; i++) {
      if (keys[i] == key) {
        return (V) values[i];
      }
    }
    return null;
  }

  void put(final long key, final V value) {
    if (size == keys.length) {
      keys = Arrays.copyOf(keys, 2 * size);
      values = Arrays.copyOf(values, 2 * size);
    }
    keys[size] = key;
    values[size] = value;
    size++;
  }
}
