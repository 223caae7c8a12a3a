package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.ParameterException;

/**
 * {@code --max-batch}: a worker takes the requests already queued, up to the batch size, and
 * pipelines them. The batches are made deterministic by holding the only worker on a stopped
 * server while the other requests queue up behind it.
 */
@Timeout(120)
class BatchingTest {
  private static final Pattern BATCHES = Pattern.compile("\"batch_sizes\": (\\{[^}]*\\})");

  @TempDir Path dir;
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() {
    pool.shutdownNow();
  }

  /** Waits (a hang guard, not a deadline) until {@code what} reports {@code want}. */
  private static void await(final IntSupplier what, final int want, final String name)
      throws InterruptedException {
    final long guard = System.nanoTime() + 60_000_000_000L;
    while (what.getAsInt() != want) {
      if (System.nanoTime() - guard > 0) {
        throw new IllegalStateException(name + " never reached " + want);
      }
      Thread.sleep(5);
    }
  }

  private static String batchSizes(final Path stats) throws Exception {
    final String summary = Files.readString(stats.resolve("summary.json"));
    final Matcher m = BATCHES.matcher(summary);
    assertTrue(m.find(), summary);
    return m.group(1);
  }

  /**
   * One request holds the only worker on a stopped server; {@code queued} more, from as many
   * connections, queue up behind it. Returns the clients, whose replies are still to be read.
   */
  private static List<TextClient> holdAndQueue(
      final Cluster c, final Memcached stopped, final int queued, final String request)
      throws InterruptedException {
    final List<TextClient> clients = new ArrayList<>();
    stopped.freeze();
    final TextClient first = c.client();
    clients.add(first);
    first.send(request.replace("%d", "first"));
    await(c.middleware::inService, 1, "requests in service");
    for (int i = 0; i < queued; i++) {
      final TextClient t = c.client();
      clients.add(t);
      t.send(request.replace("%d", Integer.toString(i)));
    }
    await(c.middleware::queued, queued, "queued requests");
    return clients;
  }

  @ParameterizedTest(name = "max batch {0}")
  @ValueSource(ints = {1, 4, 16})
  void aTurnTakesWhatIsQueuedUpToTheBatchSize(final int maxBatch) throws Exception {
    final Path stats = dir.resolve("stats");
    final List<TextClient> clients;
    try (Cluster c = new Cluster(1, stats, "-t", "1", "--max-batch", Integer.toString(maxBatch))) {
      try (TextClient t = c.client()) {
        for (int i = 0; i < 10; i++) {
          assertEquals("STORED", t.set("k" + i, "v" + i));
        }
      }
      clients = holdAndQueue(c, c.servers.get(0), 10, "get k%d\r\n");
      c.servers.get(0).thaw();
      assertEquals(List.of(), clients.get(0).readGet());
      for (int i = 0; i < 10; i++) {
        assertEquals(List.of("k" + i, "v" + i), clients.get(i + 1).readGet());
      }
      clients.forEach(TextClient::close);
    }
    // 10 sets and the held get one at a time, then the 10 queued gets in turns of maxBatch.
    final String expected =
        switch (maxBatch) {
          case 1 -> "{\"1\": 21}";
          case 4 -> "{\"1\": 11, \"2\": 1, \"4\": 2}";
          default -> "{\"1\": 11, \"10\": 1}";
        };
    assertEquals(expected, batchSizes(stats));
    final String summary = Files.readString(stats.resolve("summary.json"));
    assertTrue(summary.contains("\"get\": {\"count\": 11, \"errors\": 0"), summary);
    assertTrue(summary.contains("\"max_batch\": " + maxBatch), summary);
  }

  @Test
  void aBatchOfSetsReachesEveryReplica() throws Exception {
    final Path stats = dir.resolve("stats");
    try (Cluster c = new Cluster(3, stats, "-t", "1", "--max-batch", "16")) {
      final List<TextClient> clients =
          holdAndQueue(c, c.servers.get(1), 12, "set r%d 5 0 4\r\nval!\r\n");
      c.servers.get(1).thaw();
      for (final TextClient t : clients) {
        assertEquals("STORED", t.line());
        t.close();
      }
      for (final Memcached m : c.servers) {
        try (TextClient direct = new TextClient(m.address().port())) {
          for (int i = 0; i < 12; i++) {
            assertEquals(List.of("r" + i, "val!"), direct.get("r" + i));
          }
        }
      }
    }
    assertEquals("{\"1\": 1, \"12\": 1}", batchSizes(stats));
  }

  @Test
  void aBatchOfSetsFailsWhenAReplicaIsGone() throws Exception {
    try (Cluster c = new Cluster(3, dir.resolve("stats"), "-t", "1", "--max-batch", "16",
        "--server-timeout-ms", "2000")) {
      final List<TextClient> clients =
          holdAndQueue(c, c.servers.get(0), 8, "set f%d 0 0 1\r\nx\r\n");
      c.servers.get(2).kill();
      c.servers.get(0).thaw();
      clients.get(0).line(); // sent before the kill: either answer is right
      for (final TextClient t : clients.subList(1, clients.size())) {
        final String reply = t.line();
        assertTrue(reply.startsWith("SERVER_ERROR set failed on "), reply);
        assertTrue(reply.contains(c.servers.get(2).address().toString()), reply);
        t.close();
      }
      // The other replicas still answer, and so does the middleware.
      try (TextClient t = c.client()) {
        assertEquals(List.of("f3", "x"), t.get("f3"));
      }
    }
  }

  /**
   * Busy workers take what is queued when their turn ends, so no idle one is woken for it; but a
   * worker held on a stopped server must not hold the queue: a request for the other server is
   * answered by an idle worker while the held one still waits (its server timeout is far beyond
   * the client's hang guard).
   */
  @Test
  void aRequestDoesNotWaitBehindAWorkerHeldOnAStoppedServer() throws Exception {
    try (Cluster c = new Cluster(2, dir.resolve("stats"), "-t", "2", "--max-batch", "16",
        "--replication", "1", "--server-timeout-ms", "600000")) {
      String held = null;
      String other = null;
      for (int i = 0; held == null || other == null; i++) {
        final String k = "h" + i;
        if (c.primary(k) == 0) {
          held = held == null ? k : held;
        } else {
          other = other == null ? k : other;
        }
      }
      try (TextClient t = c.client()) {
        assertEquals("STORED", t.set(other, "v"));
      }
      c.servers.get(0).freeze();
      try (TextClient first = c.client()) {
        try {
          first.send("get " + held + "\r\n");
          await(c.middleware::inService, 1, "requests in service");
          // Answered while the held request's server is still stopped.
          try (TextClient t = c.client()) {
            assertEquals(List.of(other, "v"), t.get(other));
          }
        } finally {
          c.servers.get(0).thaw();
        }
        assertEquals(List.of(), first.readGet());
      }
    }
  }

  @Test
  void pipelinedClientsGetTheirRepliesInOrder() throws Exception {
    final int clients = 8;
    final int rounds = 150;
    try (Cluster c = new Cluster(3, dir.resolve("stats"), "-t", "2", "--max-batch", "16",
        "--replication", "2")) {
      final List<Future<?>> done = new ArrayList<>();
      for (int k = 0; k < clients; k++) {
        final int id = k;
        done.add(pool.submit(() -> {
          try (TextClient t = c.client()) {
            final StringBuilder b = new StringBuilder();
            for (int i = 0; i < rounds; i++) {
              final String key = "o" + id + "-" + (i % 7);
              final String v = id + ":" + i;
              b.append("set ").append(key).append(" 0 0 ").append(v.length()).append("\r\n")
                  .append(v).append("\r\nget ").append(key).append("\r\n");
            }
            t.send(b.toString());
            for (int i = 0; i < rounds; i++) {
              final String v = id + ":" + i;
              assertEquals("STORED", t.line(), "client " + id + " set " + i);
              assertEquals(List.of("o" + id + "-" + (i % 7), v), t.readGet(),
                  "client " + id + " get " + i);
            }
          }
          return null;
        }));
      }
      for (final Future<?> f : done) {
        f.get();
      }
    }
  }

  @Test
  void design2016RejectsBatches() {
    final ParameterException e =
        assertThrows(ParameterException.class,
            () -> Main.parse("-p", "0", "-m", "127.0.0.1:1", "--design", "2016",
                "--max-batch", "4"));
    assertTrue(e.getMessage().contains("--max-batch"), e.getMessage());
    assertThrows(ParameterException.class,
        () -> Main.parse("-p", "0", "-m", "127.0.0.1:1", "--max-batch", "0"));
  }
}
