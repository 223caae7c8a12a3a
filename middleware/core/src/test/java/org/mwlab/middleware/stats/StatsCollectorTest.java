package org.mwlab.middleware.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class StatsCollectorTest {
  private static final long WINDOW_MS = 20;
  private static final long WINDOW_NS = WINDOW_MS * 1_000_000L;

  @TempDir Path dir;

  /** Sum of {@code column} by window, over the rows of {@code csv}. */
  private static TreeMap<Long, Long> byWindow(final Path csv, final String column)
      throws Exception {
    final List<String> lines = Files.readAllLines(csv);
    final List<String> header = List.of(lines.get(0).split(","));
    final int col = header.indexOf(column);
    final TreeMap<Long, Long> m = new TreeMap<>();
    for (final String l : lines.subList(1, lines.size())) {
      final String[] f = l.split(",");
      m.merge(Long.parseLong(f[0]), Long.parseLong(f[col]), Long::sum);
    }
    return m;
  }

  private static void sleepUntil(final long ns) throws InterruptedException {
    while (System.nanoTime() < ns) {
      Thread.sleep(Math.max(1, (ns - System.nanoTime()) / 1_000_000L));
    }
  }

  /**
   * A thread that takes its times and is then held up (descheduled, say) for longer than a
   * window records them late: the request still counts in the window of its completion, the
   * arrival in the window of its arrival, and that window is written only after the records.
   */
  @Test
  void aThreadThatRecordsLateStillCountsInTheWindowOfItsTimes() throws Exception {
    final StatsClock clock = new StatsClock(WINDOW_MS);
    // The passes are the test's own (the collector's thread is not started).
    final StatsCollector collector =
        new StatsCollector(clock, dir, List.of(new PoolSpec("shared", -1, null, 1, 0)),
            List.of("127.0.0.1:1"), false, Map.of(), "2018");
    // Windows 0 to 2 are over: their rows can be written while the threads are held up.
    clock.arrival(System.nanoTime() - 3 * WINDOW_NS);
    final Recorder net = collector.net();
    final Recorder worker = collector.worker(0);
    final CountDownLatch stamped = new CountDownLatch(2);
    final CountDownLatch resume = new CountDownLatch(1);
    final AtomicLong arrival = new AtomicLong();
    final AtomicLong written = new AtomicLong();
    final Thread netThread =
        new Thread(
            () -> {
              net.hold();
              final long a = System.nanoTime();
              arrival.set(a);
              stamped.countDown();
              awaitQuietly(resume);
              net.arrival(a);
              net.queued(a, 1);
              net.enqueued(0, a, 1);
              net.idle();
            });
    final Thread workerThread =
        new Thread(
            () -> {
              awaitQuietly(stamped, 1);
              worker.hold();
              final long w = System.nanoTime();
              written.set(w);
              stamped.countDown();
              awaitQuietly(resume);
              final long a = arrival.get();
              worker.dequeued(0, 1, w);
              worker.request(0, 1, a, a, w, w, w, w, 0, false, false, 0, 1);
              worker.part(0, 0, 1, 1, w - a, 0, w - a, false, w);
              worker.partDone(0, w);
              worker.busy(w, w);
              worker.idle();
            });
    netThread.start();
    workerThread.start();
    stamped.await();
    final long arrivalWindow = clock.window(arrival.get());
    final long doneWindow = clock.window(written.get());
    // Both threads are held up well past the window of their times (one window of grace was
    // what a record had before); the collector passes twice meanwhile.
    sleepUntil(clock.windowStartNs(doneWindow + 3));
    collector.pass();
    collector.pass();
    // Windows before the threads' times are written meanwhile, theirs are not.
    final TreeMap<Long, Long> early = byWindow(dir.resolve("queue.csv"), "arrivals");
    assertTrue(early.containsKey(2L) && early.lastKey() < arrivalWindow,
        "windows written while the threads hold times of window " + arrivalWindow + ": "
            + early.keySet());
    resume.countDown();
    netThread.join();
    workerThread.join();
    collector.pass();
    collector.finish(true);
    final TreeMap<Long, Long> arrivals = byWindow(dir.resolve("queue.csv"), "arrivals");
    final TreeMap<Long, Long> counts = byWindow(dir.resolve("windows.csv"), "count");
    final TreeMap<Long, Long> completed = byWindow(dir.resolve("pools.csv"), "completed");
    assertEquals(Map.of(arrivalWindow, 1L), nonZero(arrivals));
    assertEquals(Map.of(doneWindow, 1L), nonZero(counts));
    assertEquals(Map.of(doneWindow, 1L), nonZero(completed));
    final String summary = Files.readString(dir.resolve("summary.json"));
    assertTrue(summary.contains("\"set\": {\"count\": 1,"), summary);
    assertTrue(summary.contains("\"late_records\": 0,"), summary);
  }

  /**
   * A part that waits in the queue across windows counts in each window's mean queue length for
   * the time it waited there, and in flight from its dequeue to its end.
   */
  @Test
  void queueAndInFlightTimeIsSpreadOverTheWindowsItCovers() throws Exception {
    final StatsClock clock = new StatsClock(WINDOW_MS);
    final StatsCollector collector =
        new StatsCollector(clock, dir, List.of(new PoolSpec("shared", -1, null, 1, 0)),
            List.of("127.0.0.1:1"), false, Map.of(), "2018");
    final long origin = System.nanoTime() - 10 * WINDOW_NS;
    clock.arrival(origin);
    final Recorder net = collector.net();
    final Recorder worker = collector.worker(0);
    // Queued from the middle of window 1 to a quarter into window 3, in flight to the middle
    // of window 4.
    final long enqueue = origin + WINDOW_NS + WINDOW_NS / 2;
    final long dequeue = origin + 3 * WINDOW_NS + WINDOW_NS / 4;
    final long done = origin + 4 * WINDOW_NS + WINDOW_NS / 2;
    net.enqueued(0, enqueue, 1);
    worker.dequeued(0, 1, dequeue);
    worker.partDone(0, done);
    collector.pass();
    collector.finish(true);
    final List<String> pools = Files.readAllLines(dir.resolve("pools.csv"));
    final List<String> header = List.of(pools.get(0).split(","));
    final int queue = header.indexOf("queue_length_mean");
    final int inFlight = header.indexOf("in_flight_mean");
    final double[] expectQueue = {0, 0.5, 1, 0.25, 0, 0};
    final double[] expectInFlight = {0, 0, 0, 0.75, 0.5, 0};
    for (int w = 0; w < expectQueue.length; w++) {
      final String[] f = pools.get(w + 1).split(",");
      assertEquals(expectQueue[w], Double.parseDouble(f[queue]), 1e-3, "queue, window " + w);
      assertEquals(expectInFlight[w], Double.parseDouble(f[inFlight]), 1e-3,
          "in flight, window " + w);
    }
  }

  private static Map<Long, Long> nonZero(final TreeMap<Long, Long> m) {
    final TreeMap<Long, Long> out = new TreeMap<>(m);
    out.values().removeIf(v -> v == 0);
    return out;
  }

  private static void awaitQuietly(final CountDownLatch l) {
    awaitQuietly(l, 0);
  }

  /** Waits until the latch's count is at most {@code count}. */
  private static void awaitQuietly(final CountDownLatch l, final long count) {
    try {
      while (l.getCount() > count) {
        Thread.sleep(1);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
