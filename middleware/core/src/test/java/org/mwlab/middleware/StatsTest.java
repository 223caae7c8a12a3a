package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class StatsTest {
  @TempDir Path dir;

  private static List<Map<String, String>> csv(final Path file) throws IOException {
    final List<String> lines = Files.readAllLines(file);
    final String[] head = lines.get(0).split(",");
    final List<Map<String, String>> rows = new ArrayList<>();
    for (final String l : lines.subList(1, lines.size())) {
      final String[] v = l.split(",", -1);
      assertEquals(head.length, v.length, file + ": " + l);
      final Map<String, String> row = new HashMap<>();
      for (int i = 0; i < head.length; i++) {
        row.put(head[i], v[i]);
      }
      rows.add(row);
    }
    return rows;
  }

  private static long sum(final List<Map<String, String>> rows, final String col) {
    return rows.stream().mapToLong(r -> Long.parseLong(r.get(col))).sum();
  }

  /** Sends a known mix over three connections across several windows. */
  private static Map<String, Long> drive(final int port) throws InterruptedException {
    final Map<String, Long> sent = new HashMap<>();
    final List<TextClient> clients = List.of(new TextClient(port), new TextClient(port),
        new TextClient(port));
    try {
      for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 10; i++) {
          assertEquals("STORED", clients.get(i % 3).set("s" + i, "value" + i));
        }
        for (int i = 0; i < 10; i++) {
          final TextClient c = clients.get(i % 3);
          assertEquals(2, c.get("s" + i).size());
          assertEquals(0, c.get("missing" + i).size());
          assertEquals(4, c.get("s" + i, "s" + (i + 1) % 10).size());
        }
        assertEquals(2, clients.get(0).get("s1", "nope").size());
        sent.merge("set-1", 10L, Long::sum);
        sent.merge("get-1", 20L, Long::sum);
        sent.merge("multiget-2", 11L, Long::sum);
        Thread.sleep(60);
      }
    } finally {
      clients.forEach(TextClient::close);
    }
    return sent;
  }

  @Test
  void windowCountsEqualTheRequestsSentAndEveryFileAgrees() throws Exception {
    final Path stats = dir.resolve("stats");
    final Map<String, Long> sent;
    final int perTrace = 7;
    final Map<String, Long> serverKeys = new HashMap<>();
    try (Cluster c =
        new Cluster(3, stats, "-t", "4", "--stats-window-ms", "100", "--trace-sample",
            Integer.toString(perTrace), "--replication", "2")) {
      sent = drive(c.middleware.port());
      // Keys each server was asked for, by its own counters: a set is one key.
      for (final Memcached m : c.servers) {
        serverKeys.put(m.address().toString(),
            m.stat("cmd_set") + m.stat("get_hits") + m.stat("get_misses"));
      }
    }
    final long total = sent.values().stream().mapToLong(Long::longValue).sum();

    final List<Map<String, String>> windows = csv(stats.resolve("windows.csv"));
    final Map<String, Long> counted = new HashMap<>();
    for (final Map<String, String> r : windows) {
      counted.merge(r.get("type") + "-" + r.get("keys"), Long.parseLong(r.get("count")), Long::sum);
    }
    assertEquals(sent, counted);
    // Five rounds at least 60 ms apart: at most two fit in one 100 ms window.
    final long windowCount = windows.stream().map(r -> r.get("window")).distinct().count();
    assertTrue(windowCount >= 3, "the run spans several 100 ms windows");
    // 50 single-key misses, and one per round in a two-key get.
    final long misses = sum(windows, "misses");
    assertEquals(50 + 5, misses);
    assertEquals(0, sum(windows, "errors"));

    final List<Map<String, String>> queue = csv(stats.resolve("queue.csv"));
    assertEquals(total, sum(queue, "arrivals"));
    for (int i = 0; i < queue.size(); i++) {
      assertEquals(Integer.toString(i), queue.get(i).get("window"), "windows are consecutive");
    }

    final List<Map<String, String>> workers = csv(stats.resolve("workers.csv"));
    assertEquals(total, sum(workers, "requests"));

    // Replication 2 of 3: a set reaches two servers, a read one. Any two keys have a replica in
    // common (two 2-of-3 sets intersect), so no two-key get is split.
    final List<Map<String, String>> servers = csv(stats.resolve("servers.csv"));
    assertEquals(2 * sent.get("set-1") + sent.get("get-1") + sent.get("multiget-2"),
        sum(servers, "requests"));
    final Map<String, Long> recordedKeys = new HashMap<>();
    for (final Map<String, String> r : servers) {
      recordedKeys.merge(r.get("server"), Long.parseLong(r.get("keys")), Long::sum);
    }
    assertEquals(serverKeys, recordedKeys);
    assertEquals(0, sum(servers, "errors"));

    final List<Map<String, String>> hist = csv(stats.resolve("histogram.csv"));
    assertEquals(total, sum(hist, "count"));
    for (final Map<String, String> h : hist) {
      assertEquals(0, Long.parseLong(h.get("bucket_us")) % 100);
    }

    long logged = 0;
    final HistogramLogReader reader =
        new HistogramLogReader(stats.resolve("response_time.hlog").toFile());
    EncodableHistogram h;
    final Map<String, Long> byTag = new HashMap<>();
    while ((h = reader.nextIntervalHistogram()) != null) {
      final long n = ((org.HdrHistogram.Histogram) h).getTotalCount();
      logged += n;
      byTag.merge(h.getTag(), n, Long::sum);
    }
    assertEquals(total, logged);
    assertEquals(sent, byTag);

    final List<String> trace = Files.readAllLines(stats.resolve("trace.csv"));
    assertEquals("type,keys,arrival_ns,enqueue_ns,dequeue_ns,sent_ns,replied_ns,written_ns,"
        + "pool,server,parts", trace.get(0));
    assertEquals((total + perTrace - 1) / perTrace, trace.size() - 1);
    for (final String row : trace.subList(1, trace.size())) {
      final String[] f = row.split(",");
      long prev = 0;
      assertEquals(List.of("shared", "-1", "1"), List.of(f).subList(8, 11), row);
      for (int i = 2; i < 8; i++) {
        final long t = Long.parseLong(f[i]);
        assertTrue(t >= prev, "timestamps in order: " + row);
        prev = t;
      }
    }
    final String summary = Files.readString(stats.resolve("summary.json"));
    assertTrue(summary.contains("\"set\": {\"count\": " + sent.get("set-1")), summary);
  }

  /** The parts {@link #drive} sends to each design-2016 queue ("read-1", "write-0", ...). */
  private static Map<String, Long> partsOf2016Drive(final Cluster c) {
    final Map<String, Long> parts = new HashMap<>();
    final java.util.function.Consumer<String[]> get =
        keys -> {
          final java.util.Set<Integer> primaries = new java.util.TreeSet<>();
          for (final String k : keys) {
            primaries.add(c.primary(k));
          }
          for (final int p : primaries) {
            parts.merge("read-" + p + "-" + (keys.length == 1 ? "get" : "multiget"), 1L,
                Long::sum);
          }
        };
    for (int round = 0; round < 5; round++) {
      for (int i = 0; i < 10; i++) {
        parts.merge("write-" + c.primary("s" + i) + "-set", 1L, Long::sum);
      }
      for (int i = 0; i < 10; i++) {
        get.accept(new String[] {"s" + i});
        get.accept(new String[] {"missing" + i});
        get.accept(new String[] {"s" + i, "s" + (i + 1) % 10});
      }
      get.accept(new String[] {"s1", "nope"});
    }
    return parts;
  }

  /**
   * Design 2016: the per-queue files count every part in the queue it waited in, the threads of
   * each pool are listed, and the old files keep their meaning.
   */
  @Test
  void design2016StatisticsNameTheQueueOfEveryPart() throws Exception {
    final Path stats = dir.resolve("stats");
    final Map<String, Long> sent;
    final Map<String, Long> expectedParts;
    final Map<String, Long> serverKeys = new HashMap<>();
    final List<Integer> primaries = new ArrayList<>();
    try (Cluster c = new Cluster(3, stats, "--design", "2016", "-t", "2", "--stats-window-ms",
            "100", "--trace-sample", "1", "--replication", "2")) {
      sent = drive(c.middleware.port());
      expectedParts = partsOf2016Drive(c);
      for (final Memcached m : c.servers) {
        serverKeys.put(m.address().toString(),
            m.stat("cmd_set") + m.stat("get_hits") + m.stat("get_misses"));
      }
      for (int i = 0; i < 10; i++) {
        primaries.add(c.primary("s" + i));
      }
    }
    final long total = sent.values().stream().mapToLong(Long::longValue).sum();
    final long totalParts = expectedParts.values().stream().mapToLong(Long::longValue).sum();

    final Map<String, Long> counted = new HashMap<>();
    for (final Map<String, String> r : csv(stats.resolve("windows.csv"))) {
      counted.merge(r.get("type") + "-" + r.get("keys"), Long.parseLong(r.get("count")), Long::sum);
    }
    assertEquals(sent, counted);

    final List<Map<String, String>> partRows = csv(stats.resolve("pool_requests.csv"));
    final Map<String, Long> parts = new HashMap<>();
    for (final Map<String, String> r : partRows) {
      parts.merge(r.get("pool") + "-" + r.get("server") + "-" + r.get("type"),
          Long.parseLong(r.get("count")), Long::sum);
      assertEquals("0", r.get("errors"));
      final double queue = Double.parseDouble(r.get("queue_us_mean"));
      final double response = Double.parseDouble(r.get("response_us_mean"));
      assertTrue(queue >= 0 && queue <= response, "queue time within response time: " + r);
    }
    assertEquals(expectedParts, parts);

    // Every part was queued and served once, in its own pool's counts.
    final List<Map<String, String>> pools = csv(stats.resolve("pools.csv"));
    final Map<String, Long> enqueued = new HashMap<>();
    final Map<String, Long> completed = new HashMap<>();
    for (final Map<String, String> r : pools) {
      final String pool = r.get("pool") + "-" + r.get("server");
      enqueued.merge(pool, Long.parseLong(r.get("enqueued")), Long::sum);
      completed.merge(pool, Long.parseLong(r.get("completed")), Long::sum);
      assertEquals(r.get("pool").equals("read") ? "2" : "1", r.get("threads"));
      final double busy = Double.parseDouble(r.get("busy_fraction"));
      assertTrue(busy >= 0 && busy <= 1, r.toString());
    }
    final Map<String, Long> perPool = new HashMap<>();
    expectedParts.forEach(
        (k, v) -> perPool.merge(k.substring(0, k.lastIndexOf('-')), v, Long::sum));
    perPool.keySet().forEach(k -> enqueued.putIfAbsent(k, 0L));
    enqueued.values().removeIf(v -> v == 0);
    completed.values().removeIf(v -> v == 0);
    assertEquals(perPool, enqueued);
    assertEquals(perPool, completed);

    // Threads: 2 read threads per server, then one write thread per server.
    final List<Map<String, String>> workers = csv(stats.resolve("workers.csv"));
    assertEquals(totalParts, sum(workers, "requests"));
    assertEquals(9, workers.stream().map(r -> r.get("worker")).distinct().count());

    // A SET reaches two servers, a read part one; memcached counted the same keys.
    final List<Map<String, String>> servers = csv(stats.resolve("servers.csv"));
    assertEquals(2 * sent.get("set-1") + totalParts - sent.get("set-1"),
        sum(servers, "requests"));
    final Map<String, Long> recordedKeys = new HashMap<>();
    for (final Map<String, String> r : servers) {
      recordedKeys.merge(r.get("server"), Long.parseLong(r.get("keys")), Long::sum);
    }
    assertEquals(serverKeys, recordedKeys);

    // Every request traced, with the queue of its critical part.
    final List<Map<String, String>> trace = csv(stats.resolve("trace.csv"));
    assertEquals(total, trace.size());
    long traceParts = 0;
    for (final Map<String, String> r : trace) {
      traceParts += Long.parseLong(r.get("parts"));
      assertEquals(r.get("type").equals("set") ? "write" : "read", r.get("pool"), r.toString());
      assertTrue(Long.parseLong(r.get("written_ns")) >= Long.parseLong(r.get("replied_ns")));
    }
    assertEquals(totalParts, traceParts);
    for (final Map<String, String> r : trace) {
      if (r.get("type").equals("set")) {
        assertTrue(primaries.contains(Integer.parseInt(r.get("server"))));
      }
    }

    final String summary = Files.readString(stats.resolve("summary.json"));
    assertTrue(summary.contains("\"design\": \"2016\""), summary);
    assertTrue(summary.contains("\"threads\": {\"net\": 1, \"read\": 6, \"write\": 3}"), summary);
    assertTrue(summary.contains("{\"pool\": \"write\", \"server\": 2, \"address\": \""), summary);
  }

  @Test
  void sigtermWritesTheStatisticsAndExitsZero() throws Exception {
    final Path stats = dir.resolve("sigterm");
    try (Memcached m = Memcached.start();
        MiddlewareProcess p = MiddlewareProcess.start(dir, "-t", "2", "--stats-dir",
            stats.toString(), "-m", m.address().toString())) {
      try (TextClient c = new TextClient(p.port)) {
        for (int i = 0; i < 25; i++) {
          assertEquals("STORED", c.set("k" + i, "v"));
          assertEquals(2, c.get("k" + i).size());
        }
      }
      p.terminate();
      assertEquals(0, p.awaitExit());
    }
    final String summary = Files.readString(stats.resolve("summary.json"));
    assertTrue(summary.contains("\"clean_shutdown\": true"), summary);
    final List<Map<String, String>> windows = csv(stats.resolve("windows.csv"));
    assertEquals(50, sum(windows, "count"));
  }

  @Test
  void usageErrorsExitWithStatusTwo() {
    assertEquals(2, new picocli.CommandLine(new Main()).execute(
        "-p", "1", "-m", "127.0.0.1:1", "--replication", "2"));
    assertEquals(2, new picocli.CommandLine(new Main()).execute(
        "-p", "1", "-m", "nonsense"));
    assertEquals(2, new picocli.CommandLine(new Main()).execute(
        "-p", "1", "-m", "127.0.0.1:1", "--read-balance", "random"));
    assertEquals(0, new picocli.CommandLine(new Main()).execute("--help"));
  }
}
