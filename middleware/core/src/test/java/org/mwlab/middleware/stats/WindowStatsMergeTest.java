package org.mwlab.middleware.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Per-thread copies keep raw times; what the collector merges has every one of them. */
class WindowStatsMergeTest {

  private static TypeStats thread(final long... responseUs) {
    final TypeStats s = new TypeStats();
    for (final long us : responseUs) {
      s.add(1, 2, 3, 4, us, 1, 1, false);
    }
    return s;
  }

  @Test
  void mergedTypeStatsCountEveryResponseTimeOnceInHistogramAndBuckets() {
    final TypeStats merged = new TypeStats();
    merged.merge(thread(150, 250_000));
    merged.merge(thread(950_000));
    // A copy whose own times were already read, then merged: they count once, not twice.
    final TypeStats read = thread(50);
    assertEquals(1, read.histogram().getTotalCount());
    read.merge(thread(70));
    merged.merge(read);

    assertEquals(5, merged.count());
    assertEquals(5, merged.histogram().getTotalCount());
    assertEquals(5, Arrays.stream(merged.buckets()).sum());
    assertEquals(2, merged.buckets()[0]);
    assertEquals(1, merged.buckets()[1]);
    assertEquals(1, merged.buckets()[2_500]);
    assertEquals(1, merged.buckets()[9_500]);
    assertEquals(950_000, merged.histogram().getMaxValue(), 950_000 * 0.001);
  }

  @Test
  void mergedPartStatsHaveEveryPartsQueueServerAndResponseTime() {
    final PartStats a = new PartStats();
    a.add(1, 1_000_000, 2_000_000, 3_000_000, false);
    final PartStats b = new PartStats();
    b.add(1, 10_000_000, 20_000_000, 30_000_000, false);
    b.add(1, 10_000_000, 20_000_000, 30_000_000, true);
    assertEquals(2, b.responseHistogram().getTotalCount());
    final PartStats merged = new PartStats();
    merged.merge(a);
    merged.merge(b);
    assertEquals(3, merged.count);
    assertEquals(1, merged.errors);
    assertEquals(3, merged.queueHistogram().getTotalCount());
    assertEquals(3, merged.serverHistogram().getTotalCount());
    assertEquals(3, merged.responseHistogram().getTotalCount());
    assertEquals(1_000, merged.queueHistogram().getMinValue(), 10);
    assertEquals(30_000, merged.responseHistogram().getMaxValue(), 300);
  }
}
