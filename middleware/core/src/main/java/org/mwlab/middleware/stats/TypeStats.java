package org.mwlab.middleware.stats;

import java.util.Arrays;
import org.HdrHistogram.Histogram;
import org.mwlab.common.stats.Welford;

/**
 * Statistics of one request type (and key count) in one window. A recording thread's copy keeps
 * its response times as {@link Samples}; the histogram and buckets exist only in the copy the
 * collector merges into.
 */
public final class TypeStats {
  /** 100 µs buckets up to 10 s; slower requests land in the last bucket. */
  static final int BUCKET_US = 100;

  private static final int MAX_BUCKETS = 100_000;

  long count;
  final Welford net = new Welford();
  final Welford queue = new Welford();
  final Welford worker = new Welford();
  final Welford server = new Welford();
  final Welford response = new Welford();
  private final Samples responses = new Samples();
  private int folded;
  private Histogram histogram;
  private long[] buckets = new long[0];
  long keysRequested;
  long valuesReturned;
  long errors;

  void add(
      final double netUs,
      final double queueUs,
      final double workerUs,
      final double serverUs,
      final double responseUs,
      final int keys,
      final int values,
      final boolean error) {
    count++;
    net.add(netUs);
    queue.add(queueUs);
    worker.add(workerUs);
    server.add(serverUs);
    response.add(responseUs);
    responses.add(Math.max(0L, Math.round(responseUs)));
    keysRequested += keys;
    valuesReturned += values;
    if (error) {
      errors++;
    }
  }

  /**
   * Empties a recording thread's copy for the next window, keeping its sample array. Only such
   * copies are cleared: they never hold a histogram or buckets.
   */
  void clear() {
    count = 0;
    net.reset();
    queue.reset();
    worker.reset();
    server.reset();
    response.reset();
    responses.clear();
    folded = 0;
    keysRequested = 0;
    valuesReturned = 0;
    errors = 0;
  }

  void merge(final TypeStats o) {
    count += o.count;
    net.merge(o.net);
    queue.merge(o.queue);
    worker.merge(o.worker);
    server.merge(o.server);
    response.merge(o.response);
    for (int i = o.folded; i < o.responses.size(); i++) {
      record(o.responses.get(i));
    }
    if (o.histogram != null) {
      fold();
      histogram.add(o.histogram);
    }
    if (o.buckets.length > buckets.length) {
      buckets = Arrays.copyOf(buckets, o.buckets.length);
    }
    for (int i = 0; i < o.buckets.length; i++) {
      buckets[i] += o.buckets[i];
    }
    keysRequested += o.keysRequested;
    valuesReturned += o.valuesReturned;
    errors += o.errors;
  }

  private void record(final long us) {
    if (histogram == null) {
      histogram = new Histogram(3);
    }
    histogram.recordValue(us);
    final int b = (int) Math.min(us / BUCKET_US, MAX_BUCKETS - 1);
    if (b >= buckets.length) {
      buckets = Arrays.copyOf(buckets, Math.min(MAX_BUCKETS, Math.max(b + 1, buckets.length * 2)));
    }
    buckets[b]++;
  }

  /** Response times in microseconds, of every request added or merged. */
  Histogram histogram() {
    fold();
    return histogram;
  }

  /** Request counts per {@link #BUCKET_US} of response time. */
  long[] buckets() {
    fold();
    return buckets;
  }

  /** Moves this copy's own raw samples into its histogram and buckets. */
  private void fold() {
    if (histogram == null) {
      histogram = new Histogram(3);
    }
    for (; folded < responses.size(); folded++) {
      record(responses.get(folded));
    }
  }

  public long count() {
    return count;
  }
}
