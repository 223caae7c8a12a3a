package org.mwlab.loadgen;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Produces key indices in [minimum, maximum]. Sequential sources share one counter per process so
 * that {@code --requests} with {@code S:S} touches every key once across all connections.
 */
public final class KeySource {

  private final KeyPattern pattern;
  private final long minimum;
  private final long span;
  private final AtomicLong sequence;
  private final SplittableRandom random;
  private final double median;
  private final double stddev;

  public KeySource(
      final KeyPattern pattern,
      final long minimum,
      final long maximum,
      final AtomicLong sequence,
      final SplittableRandom random) {
    this.pattern = pattern;
    this.minimum = minimum;
    this.span = maximum - minimum + 1;
    this.sequence = sequence;
    this.random = random;
    this.median = minimum + (maximum - minimum) / 2.0;
    this.stddev = (maximum - minimum) / 6.0;
  }

  public long next() {
    return switch (pattern) {
      case SEQUENTIAL -> minimum + Math.floorMod(sequence.getAndIncrement(), span);
      case RANDOM -> minimum + random.nextLong(span);
      case GAUSSIAN -> gaussian();
    };
  }

  private long gaussian() {
    while (true) {
      final double u1 = 1.0 - random.nextDouble();
      final double u2 = random.nextDouble();
      final double z = Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2.0 * Math.PI * u2);
      final long k = Math.round(median + z * stddev);
      if (k >= minimum && k < minimum + span) {
        return k;
      }
    }
  }
}
