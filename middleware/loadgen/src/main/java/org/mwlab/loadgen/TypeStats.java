package org.mwlab.loadgen;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/** Latencies (µs) and counters of one request type, for the whole run and per second. */
public final class TypeStats {

  /** Highest latency tracked: one hour in microseconds. */
  static final long HIGHEST_US = 3_600_000_000L;

  static final int DIGITS = 3;

  private final Histogram total = newHistogram();
  private final List<Histogram> perSecond = new ArrayList<>();
  private long bytes;
  private long hits;
  private long misses;
  private long errors;
  private long keys;

  static Histogram newHistogram() {
    return new Histogram(HIGHEST_US, DIGITS);
  }

  void record(
      final int second,
      final long latencyUs,
      final long requestBytes,
      final long keysRequested,
      final long hitCount,
      final boolean error) {
    final long v = Math.min(Math.max(latencyUs, 0), HIGHEST_US);
    total.recordValue(v);
    while (perSecond.size() <= second) {
      perSecond.add(null);
    }
    Histogram h = perSecond.get(second);
    if (h == null) {
      h = newHistogram();
      perSecond.set(second, h);
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

  /** Adds {@code other}, whose second 0 is second {@code secondOffset} of this one. */
  void add(final TypeStats other, final int secondOffset) {
    total.add(other.total);
    for (int s = 0; s < other.perSecond.size(); s++) {
      final Histogram h = other.perSecond.get(s);
      if (h == null) {
        continue;
      }
      final int at = s + secondOffset;
      while (perSecond.size() <= at) {
        perSecond.add(null);
      }
      if (perSecond.get(at) == null) {
        perSecond.set(at, newHistogram());
      }
      perSecond.get(at).add(h);
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

  /** Histogram of second {@code s}; empty if nothing completed in it. */
  public Histogram second(final int s) {
    final Histogram h = s < perSecond.size() ? perSecond.get(s) : null;
    return h == null ? newHistogram() : h;
  }

  public int seconds() {
    return perSecond.size();
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
