package org.mwlab.loadgen;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.mwlab.common.load.MemtierReport;

class ParsingTest {

  @Test
  void ratioParsesMemtierSyntax() {
    assertEquals(new Ratio(1, 6), Ratio.parse("1:6"));
    assertThrows(IllegalArgumentException.class, () -> Ratio.parse("1-6"));
    assertThrows(IllegalArgumentException.class, () -> Ratio.parse("0:0"));
  }

  @Test
  void keyPatternPairs() {
    assertArrayEquals(new KeyPattern[] {KeyPattern.SEQUENTIAL, KeyPattern.GAUSSIAN}, KeyPattern.parsePair("S:G"));
    assertThrows(IllegalArgumentException.class, () -> KeyPattern.parsePair("X:R"));
  }

  @Test
  void percentileKeysMatchMemtier() {
    assertEquals("p50.00", MemtierReport.percentileKey(50, 3));
    assertEquals("p99.90", MemtierReport.percentileKey(99.9, 3));
    assertEquals("p99.90", MemtierReport.percentileKey(99.9, 2));
  }

  @Test
  void sequentialKeysCoverTheRangeOnceAcrossSources() {
    final AtomicLong shared = new AtomicLong();
    final KeySource a = new KeySource(KeyPattern.SEQUENTIAL, 1, 10, shared, new SplittableRandom(1));
    final KeySource b = new KeySource(KeyPattern.SEQUENTIAL, 1, 10, shared, new SplittableRandom(2));
    final boolean[] seen = new boolean[11];
    for (int i = 0; i < 5; i++) {
      seen[(int) a.next()] = true;
      seen[(int) b.next()] = true;
    }
    for (int k = 1; k <= 10; k++) {
      assertEquals(true, seen[k], "key " + k);
    }
  }

  @Test
  void randomAndGaussianStayInRange() {
    for (final KeyPattern p : new KeyPattern[] {KeyPattern.RANDOM, KeyPattern.GAUSSIAN}) {
      final KeySource s = new KeySource(p, 5, 9, new AtomicLong(), new SplittableRandom(3));
      for (int i = 0; i < 10_000; i++) {
        final long k = s.next();
        assertEquals(true, k >= 5 && k <= 9, p + " gave " + k);
      }
    }
  }
}
