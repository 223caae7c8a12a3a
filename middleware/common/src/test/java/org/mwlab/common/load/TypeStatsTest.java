package org.mwlab.common.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class TypeStatsTest {
  /** A 300 s run in 250 ms windows, as the 2015 stability run has. */
  private static final int WINDOWS = 1200;
  private static final int[] CHECKED = {0, 599, WINDOWS - 1};

  @Test
  void windowsOfALongRunOfManyClientsFitInTheHeapAndKeepTheirValues() {
    final SplittableRandom random = new SplittableRandom(7);
    final List<TypeStats> clients = new ArrayList<>();
    final Histogram[] expected = new Histogram[WINDOWS];
    for (final int w : CHECKED) {
      expected[w] = TypeStats.newHistogram();
    }
    for (int c = 0; c < 30; c++) {
      final TypeStats stats = new TypeStats();
      for (int w = 0; w < WINDOWS; w++) {
        for (int i = 0; i < 20; i++) {
          final long us = 500 + random.nextLong(200_000);
          stats.record(w, us, 200, 1, 1, false);
          if (expected[w] != null) {
            expected[w].recordValue(us);
          }
        }
      }
      clients.add(stats);
    }
    long footprint = 0;
    for (final TypeStats stats : clients) {
      for (int w = 0; w < WINDOWS; w++) {
        footprint += stats.window(w).getEstimatedFootprintInBytes();
      }
    }
    // Full histograms would take 36,000 x about 190 KB, some 6.8 GB: a default heap overflows.
    final long full = TypeStats.newHistogram().getEstimatedFootprintInBytes() * 30L * WINDOWS;
    assertTrue(footprint < full / 10, "windows take " + footprint + " bytes against " + full);
    final TypeStats merged = new TypeStats();
    for (final TypeStats stats : clients) {
      merged.add(stats, 0);
    }
    assertEquals(WINDOWS, merged.windows());
    assertEquals(30L * WINDOWS * 20, merged.total().getTotalCount());
    for (final int w : CHECKED) {
      final Histogram h = merged.window(w);
      assertEquals(expected[w].getTotalCount(), h.getTotalCount());
      assertEquals(expected[w].getMean(), h.getMean(), 1e-9);
      assertEquals(expected[w].getValueAtPercentile(99), h.getValueAtPercentile(99));
      assertEquals(expected[w].getMaxValue(), h.getMaxValue());
    }
    assertEquals(0, merged.window(WINDOWS + 5).getTotalCount());
  }
}
