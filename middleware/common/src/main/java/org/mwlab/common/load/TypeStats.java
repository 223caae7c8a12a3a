package org.mwlab.common.load;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.PackedHistogram;

/**
 * Latencies (µs) and counters of one request type, for the whole run and per window of the time
 * series. A window's histogram is packed: it takes memory for the values it holds, not for the
 * whole range (a full one is about 190 KB), so a long run of many clients and short windows fits
 * in the heap.
 */
public final class TypeStats {

  /** Highest latency tracked: one hour in microseconds. */
  public static final long HIGHEST_US = 3_600_000_000L;

  public static final int DIGITS = 3;

  private final Histogram total = newHistogram();
  private final List<Histogram> perWindow = new ArrayList<>();
  private long bytes;
  private long hits;
  private long misses;
  private long errors;
  private long keys;

  public static Histogram newHistogram() {
    return new Histogram(HIGHEST_US, DIGITS);
  }

  /** A window's histogram: the same range and precision, in memory for what it holds. */
  public static Histogram newWindowHistogram() {
    return new PackedHistogram(HIGHEST_US, DIGITS);
  }

  public void record(
      final int window,
      final long latencyUs,
      final long requestBytes,
      final long keysRequested,
      final long hitCount,
      final boolean error) {
    final long v = Math.min(Math.max(latencyUs, 0), HIGHEST_US);
    total.recordValue(v);
    while (perWindow.size() <= window) {
      perWindow.add(null);
    }
    Histogram h = perWindow.get(window);
    if (h == null) {
      h = newWindowHistogram();
      perWindow.set(window, h);
    }
    h.recordValue(v);
    bytes += requestBytes;
    keys += keysRequested;
    hits += hitCount;
    misses += keysRequested - hitCount;
    if (error) {
      errors++;
    }
  }

  /** Adds {@code other}, whose window 0 is window {@code windowOffset} of this one. */
  public void add(final TypeStats other, final int windowOffset) {
    total.add(other.total);
    for (int s = 0; s < other.perWindow.size(); s++) {
      final Histogram h = other.perWindow.get(s);
      if (h == null) {
        continue;
      }
      final int at = s + windowOffset;
      while (perWindow.size() <= at) {
        perWindow.add(null);
      }
      if (perWindow.get(at) == null) {
        perWindow.set(at, newWindowHistogram());
      }
      perWindow.get(at).add(h);
    }
    bytes += other.bytes;
    hits += other.hits;
    misses += other.misses;
    errors += other.errors;
    keys += other.keys;
  }

  public Histogram total() {
    return total;
  }

  /** Histogram of window {@code s}; empty if nothing completed in it. */
  public Histogram window(final int s) {
    final Histogram h = s < perWindow.size() ? perWindow.get(s) : null;
    return h == null ? newWindowHistogram() : h;
  }

  public int windows() {
    return perWindow.size();
  }

  public long bytes() {
    return bytes;
  }

  public long hits() {
    return hits;
  }

  public long misses() {
    return misses;
  }

  public long errors() {
    return errors;
  }

  public long keys() {
    return keys;
  }
}
