package org.mwlab.middleware.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class StatsCollectorTest {
  @TempDir Path dir;

  private static long countColumn(final Path windowsCsv) throws Exception {
    final List<String> lines = Files.readAllLines(windowsCsv);
    final int col = List.of(lines.get(0).split(",")).indexOf("count");
    return lines.stream().skip(1).mapToLong(l -> Long.parseLong(l.split(",")[col])).sum();
  }

  /**
   * A worker held up for longer than the grace period records its request after the request's
   * window was written. The request still counts, in the next window written.
   */
  @Test
  void aRequestRecordedAfterItsWindowWasWrittenIsStillCounted() throws Exception {
    final StatsClock clock = new StatsClock(20);
    final StatsCollector collector =
        new StatsCollector(clock, dir, 1, List.of("127.0.0.1:1"), false, Map.of());
    collector.start();
    final long t0 = System.nanoTime();
    clock.arrival(t0);
    final Recorder worker = collector.worker(0);
    // A set answered 1 µs after it arrived, in window 0.
    worker.request(0, 1, t0, t0, t0, t0, t0, t0 + 1000, 0, false, false);
    // Window 0 is written once its row is in queue.csv (every window gets one).
    final Path queue = dir.resolve("queue.csv");
    while (Files.readAllLines(queue).size() < 2) {
      Thread.sleep(5);
    }
    // Another request of window 0, recorded only now.
    worker.request(0, 1, t0, t0, t0, t0, t0, t0 + 2000, 0, false, false);
    collector.finish(true);
    assertEquals(2, countColumn(dir.resolve("windows.csv")));
    final String summary = Files.readString(dir.resolve("summary.json"));
    assertTrue(summary.contains("\"set\": {\"count\": 2,"), summary);
  }
}
