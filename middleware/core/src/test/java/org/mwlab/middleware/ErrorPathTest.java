package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(120)
class ErrorPathTest {
  @TempDir Path dir;

  /**
   * A dead server fails at once (connection refused or closed), so failover does not need a short
   * timeout: a generous one keeps a slow but healthy server from failing on a loaded machine.
   */
  private static final String FAILOVER =
      "--server-timeout-ms=30000 --reconnect-min-ms=20 --reconnect-max-ms=200";

  private static String[] args(final String design, final String... extra) {
    final List<String> a = new ArrayList<>(List.of(FAILOVER.split(" ")));
    a.addAll(List.of(extra));
    return designed(design, a.toArray(String[]::new));
  }

  /** {@code --design design} and {@code extra}. */
  static String[] designed(final String design, final String... extra) {
    final List<String> a = new ArrayList<>(List.of("--design", design));
    a.addAll(List.of(extra));
    return a.toArray(String[]::new);
  }

  /** The result of a background task; its assertion errors and exceptions fail the test. */
  static <T> T await(final Future<T> f) throws Exception {
    try {
      return f.get(TextClient.HANG_GUARD_MS, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw (Exception) e.getCause();
    }
  }

  /** Sends the set until it is stored (a worker finds a dead connection on its first use). */
  private static void setUntilStored(final TextClient t, final String key, final String value) {
    String reply;
    do {
      reply = t.set(key, value);
      assertTrue(reply.equals("STORED") || reply.startsWith("SERVER_ERROR"), reply);
    } while (!reply.equals("STORED"));
  }

  @BothDesigns
  void malformedRequestsGetMemcachedErrorsAndTheConnectionStaysUsable(final String design) {
    try (Cluster c = new Cluster(1, dir, designed(design, "--max-value-bytes", "100"));
        TextClient t = c.client()) {
      assertEquals("STORED", t.set("ok", "fine"));
      t.send("flush_all\r\n");
      assertEquals("ERROR", t.line());
      t.send("get " + "k".repeat(251) + "\r\n");
      assertEquals("CLIENT_ERROR key too long", t.line());
      t.send("set big 0 0 200\r\n" + "x".repeat(200) + "\r\n");
      assertEquals("CLIENT_ERROR value too large (max 100 bytes)", t.line());
      t.send("set bad 0 0 3\r\nabcdef\r\n");
      assertEquals("CLIENT_ERROR bad data chunk", t.line());
      assertEquals("ERROR", t.line()); // memcached reads the rest "def" as a command too
      t.send("set f notanumber 0 1\r\nx\r\n");
      assertEquals("CLIENT_ERROR bad command line format", t.line());
      assertEquals(List.of("ok", "fine"), t.get("ok"));
      assertFalse(c.servers.get(0).has("big"));
      assertFalse(c.servers.get(0).has("bad"));
    }
  }

  @BothDesigns
  void unrecoverableRequestClosesOnlyThatConnection(final String design) {
    try (Cluster c = new Cluster(1, dir, designed(design));
        TextClient t = c.client();
        TextClient other = c.client()) {
      t.send("set k 0 0\r\nabc\r\n");
      assertEquals("CLIENT_ERROR bad command line format", t.line());
      assertTrue(t.closedByPeer());
      assertEquals("STORED", other.set("still", "here"));
    }
  }

  @BothDesigns
  void connectionLimitRefusesExtraClientsAndFreesSlotsOnClose(final String design)
      throws Exception {
    try (Cluster c = new Cluster(1, dir, designed(design, "--max-connections", "2"))) {
      final TextClient a = c.client();
      final TextClient b = c.client();
      assertEquals("STORED", a.set("x", "1"));
      assertEquals("STORED", b.set("y", "2"));
      try (TextClient extra = c.client()) {
        assertEquals("SERVER_ERROR too many open connections", extra.line());
        assertTrue(extra.closedByPeer());
      }
      a.close();
      // The middleware sees the close asynchronously; the class timeout is the hang guard.
      while (true) {
        try (TextClient again = c.client()) {
          again.send("get x\r\n");
          final String l = again.line();
          if (l.startsWith("VALUE")) {
            break;
          }
          assertEquals("SERVER_ERROR too many open connections", l);
          Thread.sleep(20);
        }
      }
      b.close();
    }
  }

  @BothDesigns
  void serverKilledMidRunFailsWritesFailsOverReadsAndIsUsedAgainAfterRestart(final String design)
      throws Exception {
    final ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Cluster c = new Cluster(2, dir, args(design, "-t", "4")); TextClient t = c.client()) {
      final Memcached victim = c.servers.get(1);
      for (int i = 0; i < 20; i++) {
        assertEquals("STORED", t.set("k" + i, "v" + i));
      }
      // Background load across the kill: every reply is either right or a SERVER_ERROR.
      final AtomicBoolean stop = new AtomicBoolean();
      final Future<Integer> load =
          pool.submit(
              () -> {
                int i = 0;
                try (TextClient bg = c.client()) {
                  while (!stop.get()) {
                    final List<String> r = bg.get("k" + (i % 20));
                    if (!(r.size() == 1 && r.get(0).startsWith("SERVER_ERROR"))) {
                      assertEquals(List.of("k" + (i % 20), "v" + (i % 20)), r);
                    }
                    final String s = bg.set("bg" + i, "x");
                    assertTrue(s.equals("STORED") || s.startsWith("SERVER_ERROR"), s);
                    i++;
                  }
                }
                return i;
              });
      Thread.sleep(100);
      victim.kill();
      Thread.sleep(300);

      final String name = "127.0.0.1:" + victim.port;
      final String failedSet = t.set("during", "outage");
      assertTrue(failedSet.startsWith("SERVER_ERROR") && failedSet.contains(name), failedSet);
      for (int i = 0; i < 20; i++) {
        assertEquals(List.of("k" + i, "v" + i), t.get("k" + i), "GET fails over");
      }
      assertEquals(List.of("k1", "v1", "k2", "v2"), t.get("k1", "k2"));

      // A restarted memcached is empty, so the background reads stop here.
      stop.set(true);
      assertTrue(await(load) > 0, "the background load was answered");

      victim.restart();
      setUntilStored(t, "after", "restart");
      assertTrue(victim.has("after"));
      // Reads reach the restarted server again: it is the key's primary (design 2016 reads
      // there first), and round-robin (2018) sends every other GET to it first.
      // A thread whose connection still points at the killed process fails over until it has
      // reconnected, so how many reads that takes is not fixed; 30 s is a hang guard.
      String again = "again";
      for (int i = 0; c.primary(again) != 1; i++) {
        again = "again" + i;
      }
      setUntilStored(t, again, "1");
      final long hits = victim.stat("get_hits");
      final long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (victim.stat("get_hits") - hits < 10) {
        assertEquals(List.of(again, "1"), t.get(again));
        assertTrue(System.nanoTime() - guard < 0, "the restarted server serves no reads");
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @BothDesigns
  void everyReplicaDownGivesServerErrorsNotHangs(final String design) {
    try (Cluster c = new Cluster(1, dir, args(design)); TextClient t = c.client()) {
      assertEquals("STORED", t.set("k", "v"));
      c.servers.get(0).kill();
      for (int i = 0; i < 3; i++) {
        final String s = t.set("k", "w");
        assertTrue(s.startsWith("SERVER_ERROR set failed on 127.0.0.1:"), s);
        final List<String> g = t.get("k");
        assertEquals(1, g.size());
        assertTrue(g.get(0).startsWith("SERVER_ERROR get failed on 127.0.0.1:"), g.get(0));
        final List<String> m = t.get("k", "l");
        assertTrue(m.get(0).startsWith("SERVER_ERROR"), m.get(0));
      }
    }
  }

  @ParameterizedTest(name = "design {0}, {1}")
  @CsvSource({"2018,set", "2018,get", "2018,multiget", "2016,set", "2016,get", "2016,multiget"})
  void aStoppedServerTimesOutAfterTheServerTimeout(final String design, final String request)
      throws Exception {
    final int timeoutMs = 700;
    try (Cluster c = new Cluster(1, dir, designed(design, "-t", "1", "--server-timeout-ms",
            Integer.toString(timeoutMs)));
        TextClient t = c.client()) {
      final Memcached server = c.servers.get(0);
      server.freeze(); // SIGSTOP: the connection stays open, nothing answers
      final long start = System.nanoTime();
      final String reply =
          switch (request) {
            case "set" -> t.set("k", "w");
            case "get" -> t.get("k").get(0);
            default -> t.get("k", "l").get(0);
          };
      final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      server.thaw();
      assertTrue(reply.startsWith("SERVER_ERROR " + request.replace("multi", "") + " failed on "
          + server.address() + " timeout after " + timeoutMs + " ms"), reply);
      // Not before the deadline; the upper bound is only a hang guard.
      assertTrue(elapsedMs >= timeoutMs, "answered after " + elapsedMs + " ms");
      assertTrue(elapsedMs < 30_000, "answered after " + elapsedMs + " ms");
    }
  }

  @BothDesigns
  void noreplySetIsSilentOnSuccessButAFailureStillGetsServerError(final String design) {
    try (Cluster c = new Cluster(2, dir, args(design)); TextClient t = c.client()) {
      // version is answered by the middleware itself, in order: it shows what came before.
      t.send("set quiet 0 0 2 noreply\r\nok\r\nversion\r\n");
      assertTrue(t.line().startsWith("VERSION "), "nothing before the version reply");
      for (final Memcached m : c.servers) {
        assertTrue(m.has("quiet"));
      }
      final Memcached victim = c.servers.get(1);
      victim.kill();
      t.send("set lost 0 0 2 noreply\r\nno\r\nversion\r\n");
      final String reply = t.line();
      assertTrue(reply.startsWith("SERVER_ERROR set failed on " + victim.address() + " "), reply);
      assertTrue(t.line().startsWith("VERSION "));
      assertTrue(c.servers.get(0).has("lost"), "the live replica stored it");
    }
  }

  /** A fake server's handler: answers every request line with {@code reply}. */
  private static FakeServer.Handler answering(final String reply) {
    return s -> {
      try (InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
        int b;
        while ((b = in.read()) >= 0) {
          if (b == '\n') {
            out.write(reply.getBytes(StandardCharsets.US_ASCII));
          }
        }
      }
    };
  }

  private static Middleware startWith(final Path dir, final String design,
      final List<String> flags, final String... servers) {
    final List<String> a = new ArrayList<>(List.of("-t", "2", "--stats-dir", dir.toString(),
        "--design", design));
    a.addAll(flags);
    return Cluster.startMiddleware(a, List.of(servers)).middleware();
  }

  @BothDesigns
  void unresponsiveServerTimesOutAndReadsFailOver(final String design) throws Exception {
    // A test of the timeout: short enough to wait for, long enough for the healthy server.
    try (Memcached good = Memcached.start();
        FakeServer silent = new FakeServer(s -> {});
        Middleware m = startWith(dir, design, List.of("--server-timeout-ms", "2000"),
            good.address().toString(), silent.address());
        TextClient t = new TextClient(m.port())) {
      // A key whose primary is the silent server (the second): design 2016 reads the primary
      // first, so each of its reads must fail over; design 2018 balances over both replicas.
      final Config c = m.config();
      assertEquals(2, c.replication(), "both servers replicate every key");
      final HashRing ring = new HashRing(c.servers(), c.replication(), c.virtualNodes());
      final String key = IntStream.range(0, 10_000).mapToObj(i -> "k" + i)
          .filter(k -> ring.replicas(k.getBytes(StandardCharsets.US_ASCII))[0] == 1)
          .findFirst().orElseThrow();
      try (TextClient direct = good.client()) {
        assertEquals("STORED", direct.set(key, "v"));
      }
      for (int i = 0; i < 4; i++) {
        assertEquals(List.of(key, "v"), t.get(key));
      }
      final String s = t.set("k2", "v2");
      assertTrue(s.startsWith("SERVER_ERROR set failed on " + silent.address()), s);
      assertTrue(s.contains("timeout") || s.contains("unavailable"), s);
      assertTrue(good.has("k2"), "the healthy replica still stored it");
    }
  }

  /** A name that does not resolve fails every request on it, at once and again later. */
  @BothDesigns
  void aServerWhoseNameDoesNotResolveGetsServerErrors(final String design) throws Exception {
    final String server = "unresolvable.invalid:11211";
    try (Middleware m = startWith(dir, design, List.of(FAILOVER.split(" ")), server);
        TextClient t = new TextClient(m.port())) {
      for (int i = 0; i < 3; i++) {
        final String s = t.set("k", "v");
        assertTrue(s.startsWith("SERVER_ERROR set failed on " + server + " "), s);
        final List<String> g = t.get("k");
        assertTrue(g.get(0).startsWith("SERVER_ERROR get failed on " + server + " "), g.get(0));
      }
    }
  }

  @BothDesigns
  void serverAnsweringNonsenseIsAnError(final String design) throws Exception {
    try (FakeServer liar = new FakeServer(answering("BOGUS\r\n"));
        Middleware m = startWith(dir, design, List.of(FAILOVER.split(" ")), liar.address());
        TextClient t = new TextClient(m.port())) {
      final String s = t.set("k", "v");
      assertTrue(s.startsWith("SERVER_ERROR set failed on " + liar.address() + " replied BOGUS"), s);
      final List<String> g = t.get("k");
      assertTrue(g.get(0).startsWith("SERVER_ERROR get failed on " + liar.address()), g.get(0));
      assertTrue(g.get(0).contains("unexpected reply"), g.get(0));
    }
  }
}
