package org.mwlab.common.stats;

/** Running mean and variance (Welford), mergeable (Chan et al.). */
public final class Welford {
  private long n;
  private double mean;
  private double m2;

  public void add(final double x) {
    n++;
    final double d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
  }

  public void merge(final Welford o) {
    if (o.n == 0) {
      return;
    }
    if (n == 0) {
      n = o.n;
      mean = o.mean;
      m2 = o.m2;
      return;
    }
    final long total = n + o.n;
    final double d = o.mean - mean;
    mean += d * o.n / total;
    m2 += o.m2 + d * d * ((double) n * o.n / total);
    n = total;
  }

  /** Back to no samples (a recycled per-thread copy). */
  public void reset() {
    n = 0;
    mean = 0;
    m2 = 0;
  }

  public long count() {
    return n;
  }

  public double mean() {
    return mean;
  }

  /** Sample variance (n - 1); 0 below two samples. */
  public double variance() {
    return n < 2 ? 0.0 : m2 / (n - 1);
  }
}
