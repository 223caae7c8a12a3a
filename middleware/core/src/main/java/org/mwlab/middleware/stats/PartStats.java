package org.mwlab.middleware.stats;

import org.HdrHistogram.Histogram;

/** Parts of one request type (and key count) served from one pool in one window. */
final class PartStats {
  /** Two significant digits: percentiles within 1%, small enough for a histogram per pool. */
  private static final int DIGITS = 2;

  long count;
  long partKeys;
  long errors;
  final Welford queue = new Welford();
  final Welford server = new Welford();
  final Welford response = new Welford();
  final Histogram queueHistogram = new Histogram(DIGITS);
  final Histogram serverHistogram = new Histogram(DIGITS);
  final Histogram responseHistogram = new Histogram(DIGITS);

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
    queueHistogram.recordValue(Math.max(0L, Math.round(queueNs / 1e3)));
    serverHistogram.recordValue(Math.max(0L, Math.round(serverNs / 1e3)));
    responseHistogram.recordValue(Math.max(0L, Math.round(responseNs / 1e3)));
  }

  void merge(final PartStats o) {
    count += o.count;
    partKeys += o.partKeys;
    errors += o.errors;
    queue.merge(o.queue);
    server.merge(o.server);
    response.merge(o.response);
    queueHistogram.add(o.queueHistogram);
    serverHistogram.add(o.serverHistogram);
    responseHistogram.add(o.responseHistogram);
  }
}
