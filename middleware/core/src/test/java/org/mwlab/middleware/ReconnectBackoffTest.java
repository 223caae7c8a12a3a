package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class ReconnectBackoffTest {
  @TempDir Path dir;

  /**
   * With the server failing every connection, the gap between two attempts is at least the
   * backoff, which doubles per failure from the minimum up to the maximum and then stays there.
   * Requests arrive all the time, so an attempt is made as soon as the backoff allows. Design
   * 2018 reads through a worker's blocking connection, design 2016 writes through the write
   * thread's non-blocking one.
   */
  @BothDesigns
  void reconnectAttemptsBackOffDoublingUpToTheMaximum(final String design) throws Exception {
    final int min = 40;
    final int max = 320;
    final ExecutorService pool = Executors.newSingleThreadExecutor();
    // Each accept is one connection attempt of the middleware, and each one fails: the server
    // closes it at once, noting the time before the close, so before the middleware can see the
    // failure.
    final LinkedBlockingQueue<Long> accepts = new LinkedBlockingQueue<>();
    try (FakeServer server =
            new FakeServer(
                s -> {
                  accepts.add(System.nanoTime());
                  s.close();
                });
        Middleware m =
            Cluster.startMiddleware(
                    List.of("--design", design, "-t", "1", "--stats-dir", dir.toString(),
                        "--server-timeout-ms",
                        "30000", "--reconnect-min-ms", Integer.toString(min),
                        "--reconnect-max-ms", Integer.toString(max)),
                    List.of(server.address()))
                .middleware();
        TextClient t = new TextClient(m.port())) {
      // The worker (2018) or read thread (2016) connected at start; the first request finds
      // that connection closed.
      assertTrue(accepts.poll(TextClient.HANG_GUARD_MS, TimeUnit.MILLISECONDS) != null);
      final boolean writes = design.equals("2016");
      final String failed = (writes ? "SERVER_ERROR set failed on " : "SERVER_ERROR get failed on ")
          + server.address();
      if (writes) {
        // The write thread connects on its first SET; that connection fails the same way.
        final String first = t.set("k", "v");
        assertTrue(first.startsWith(failed), first);
        assertTrue(accepts.poll(TextClient.HANG_GUARD_MS, TimeUnit.MILLISECONDS) != null);
      }
      final int attempts = 9;
      final Future<List<Long>> seen =
          pool.submit(
              () -> {
                final List<Long> times = new ArrayList<>();
                while (times.size() < attempts) {
                  final Long at = accepts.poll(60, TimeUnit.SECONDS);
                  if (at == null) {
                    throw new IllegalStateException("only " + times.size() + " attempts");
                  }
                  times.add(at);
                }
                return times;
              });
      while (!seen.isDone()) {
        final List<String> r = writes ? List.of(t.set("k", "v")) : t.get("k");
        assertEquals(1, r.size());
        assertTrue(r.get(0).startsWith(failed), r.get(0));
      }
      final List<Long> times = ErrorPathTest.await(seen);
      // The first attempt came after the first failure (backoff min); the gap after the k-th
      // attempt is at least the backoff after k + 1 failures.
      final List<Long> gaps = new ArrayList<>();
      for (int k = 1; k < times.size(); k++) {
        gaps.add(TimeUnit.NANOSECONDS.toMillis(times.get(k) - times.get(k - 1)));
      }
      // Backoffs 80, 160, then six at the maximum of 320: each gap is at least its backoff.
      // (Only lower bounds: a loaded machine can stretch any gap. BackoffTest checks that the
      // backoff stops at the maximum, without timing.)
      long uncapped = min;
      for (final long gap : gaps) {
        uncapped *= 2;
        final long backoff = Math.min(max, uncapped);
        assertTrue(gap >= backoff, "gap " + gap + " ms < backoff " + backoff + " ms: " + gaps);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
