package org.mwlab.middleware.stats;

import org.HdrHistogram.Histogram;
import org.mwlab.common.stats.Welford;

/**
 * Parts of one request type (and key count) served from one pool in one window. As in {@link
 * TypeStats}, a recording thread's copy keeps raw times and the histograms are filled when the
 * collector merges.
 */
final class PartStats {
  /** Two significant digits: percentiles within 1%, small enough for a histogram per pool. */
  private static final int DIGITS = 2;

  long count;
  long partKeys;
  long errors;
  final Welford queue = new Welford();
  final Welford server = new Welford();
  final Welford response = new Welford();
  /** Queue, server and response time of each part, microseconds, in that order. */
  private final Samples times = new Samples();
  private int folded;
  private Histogram queueHistogram;
  private Histogram serverHistogram;
  private Histogram responseHistogram;

  void add(final int keys, final long queueNs, final long serverNs, final long responseNs,
      final boolean error) {
    count++;
    partKeys += keys;
    if (error) {
      errors++;
    }
    queue.add(queueNs / 1e3);
    server.add(serverNs / 1e3);
    response.add(responseNs / 1e3);
    times.add(Math.max(0L, Math.round(queueNs / 1e3)));
    times.add(Math.max(0L, Math.round(serverNs / 1e3)));
    times.add(Math.max(0L, Math.round(responseNs / 1e3)));
  }

  /** As {@link TypeStats#clear}: empties a recording thread's copy, keeping its arrays. */
  void clear() {
    count = 0;
    partKeys = 0;
    errors = 0;
    queue.reset();
    server.reset();
    response.reset();
    times.clear();
    folded = 0;
  }

  void merge(final PartStats o) {
    count += o.count;
    partKeys += o.partKeys;
    errors += o.errors;
    queue.merge(o.queue);
    server.merge(o.server);
    response.merge(o.response);
    fold();
    record(o.times, o.folded);
    if (o.queueHistogram != null) {
      queueHistogram.add(o.queueHistogram);
      serverHistogram.add(o.serverHistogram);
      responseHistogram.add(o.responseHistogram);
    }
  }

  Histogram queueHistogram() {
    fold();
    return queueHistogram;
  }

  Histogram serverHistogram() {
    fold();
    return serverHistogram;
  }

  Histogram responseHistogram() {
    fold();
    return responseHistogram;
  }

  /** Moves this copy's own raw times into its histograms. */
  private void fold() {
    if (queueHistogram == null) {
      queueHistogram = new Histogram(DIGITS);
      serverHistogram = new Histogram(DIGITS);
      responseHistogram = new Histogram(DIGITS);
    }
    record(times, folded);
    folded = times.size();
  }

  private void record(final Samples s, final int from) {
    for (int i = from; i < s.size(); i += 3) {
      queueHistogram.recordValue(s.get(i));
      serverHistogram.recordValue(s.get(i + 1));
      responseHistogram.recordValue(s.get(i + 2));
    }
  }
}
