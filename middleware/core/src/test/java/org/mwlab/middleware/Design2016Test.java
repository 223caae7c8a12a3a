package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What sets design 2016 apart: its pools, primary-only reads and the pipelining write thread. */
@Timeout(120)
class Design2016Test {
  @TempDir Path dir;

  private static final String[] D2016 = {"--design", "2016"};

  private static String[] args(final String... extra) {
    final List<String> a = new ArrayList<>(List.of(D2016));
    a.addAll(List.of(extra));
    return a.toArray(String[]::new);
  }

  /** Waits until {@code value} reaches {@code want}; the class timeout is the hang guard. */
  private static void awaitValue(final long want, final LongSupplier value, final String what)
      throws InterruptedException {
    long now;
    while ((now = value.getAsLong()) != want) {
      assertTrue(now < want, what + ": " + now + " > " + want);
      Thread.sleep(10);
    }
  }

  /** A key whose replica set (primary first) satisfies {@code ok}. */
  private static String key(final Cluster c, final String prefix, final KeyTest ok) {
    for (int i = 0; ; i++) {
      final String k = prefix + i;
      if (ok.test(c.replicas(k))) {
        return k;
      }
    }
  }

  @FunctionalInterface
  private interface KeyTest {
    boolean test(int[] replicas);
  }

  private static boolean contains(final int[] a, final int x) {
    for (final int v : a) {
      if (v == x) {
        return true;
      }
    }
    return false;
  }

  /** Names of the threads of a process, from /proc (Java names its native threads). */
  private static List<String> threadNames(final long pid) throws IOException {
    final List<String> names = new ArrayList<>();
    try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (final Path t : tasks.toList()) {
        names.add(Files.readString(t.resolve("comm")).trim());
      }
    }
    return names;
  }

  @Test
  void eachServerHasTReadThreadsWithAConnectionEachAndOneWriteThread() throws Exception {
    final int threads = 3;
    final Path stats = dir.resolve("stats");
    final List<Memcached> servers =
        List.of(Memcached.start(), Memcached.start(), Memcached.start());
    try {
      // Connections a server has with only this test's stats client on it.
      final long[] base = new long[servers.size()];
      final List<String> addresses = new ArrayList<>();
      for (int i = 0; i < base.length; i++) {
        base[i] = servers.get(i).stat("curr_connections");
        addresses.add(servers.get(i).address().toString());
      }
      final List<String> a = new ArrayList<>(List.of(args("-t", Integer.toString(threads),
          "--stats-dir", stats.toString(), "--server-timeout-ms", "30000", "-m")));
      a.addAll(addresses);
      try (MiddlewareProcess p = MiddlewareProcess.start(dir, a.toArray(String[]::new))) {
        // The read threads connect at start: T connections per server, one per thread.
        for (int i = 0; i < base.length; i++) {
          final Memcached m = servers.get(i);
          awaitValue(base[i] + threads, () -> m.stat("curr_connections"), "connections");
        }
        final List<String> names = threadNames(p.process.pid());
        for (int s = 0; s < servers.size(); s++) {
          final String read = "read-" + s + "-";
          assertEquals(threads, names.stream().filter(n -> n.startsWith(read)).count(), read);
          final String write = "write-" + s;
          assertEquals(1, names.stream().filter(write::equals).count(), write);
        }
        assertFalse(names.stream().anyMatch(n -> n.startsWith("worker-")), names.toString());
        // With replication 3 every write thread writes to every server: one connection each.
        final Set<Integer> primaries = new HashSet<>();
        try (TextClient t = new TextClient(p.port)) {
          final HashRing ring = new HashRing(
              addresses.stream().map(HostPort::parse).toList(), servers.size(), 160);
          for (int i = 0; primaries.size() < servers.size(); i++) {
            final String k = "c" + i;
            assertEquals("STORED", t.set(k, "v"));
            primaries.add(ring.replicas(k.getBytes(StandardCharsets.US_ASCII))[0]);
          }
        }
        for (int i = 0; i < base.length; i++) {
          final Memcached m = servers.get(i);
          awaitValue(base[i] + threads + servers.size(), () -> m.stat("curr_connections"),
              "connections after writes");
        }
        p.terminate();
        assertEquals(0, p.awaitExit());
      }
    } finally {
      servers.forEach(Memcached::kill);
    }
    final String summary = Files.readString(stats.resolve("summary.json"));
    assertTrue(summary.contains("\"design\": \"2016\""), summary);
    assertTrue(summary.contains("\"threads\": {\"net\": 1, \"read\": 9, \"write\": 3}"), summary);
    assertTrue(summary.contains("\"threads_per_server\": {\"read\": 3, \"write\": 1}"), summary);
    final List<String> pools = Files.readAllLines(stats.resolve("pools.csv"));
    for (final String row : pools.subList(1, pools.size())) {
      final String[] f = row.split(",");
      assertEquals(f[3].equals("read") ? "3" : "1", f[5], row);
    }
  }

  @ParameterizedTest(name = "replication {0}")
  @ValueSource(ints = {1, 2, 4})
  void aSetReachesThePrimaryAndTheNextReplicasOnTheRing(final int replication) {
    try (Cluster c = new Cluster(4, dir, args("--replication", Integer.toString(replication)));
        TextClient t = c.client()) {
      for (int i = 0; i < 40; i++) {
        final String k = "place" + i;
        assertEquals("STORED", t.set(k, "v" + i));
        final int[] reps = c.replicas(k);
        assertEquals(replication, reps.length);
        for (int s = 0; s < 4; s++) {
          assertEquals(contains(reps, s), c.servers.get(s).has(k), k + " on server " + s);
        }
      }
    }
  }

  /** Keys each server looked up, by its own counters; -1 for a server that is {@code down}. */
  private static long[] lookups(final Cluster c, final int down) {
    final long[] n = new long[c.servers.size()];
    for (int i = 0; i < n.length; i++) {
      n[i] = i == down ? -1
          : c.servers.get(i).stat("get_hits") + c.servers.get(i).stat("get_misses");
    }
    return n;
  }

  /** Every server holds every key (replication 3), yet each is read only for its own keys. */
  @Test
  void readsGoToThePrimaryOnlyAndAMultiGetIsSplitByPrimary() {
    try (Cluster c = new Cluster(3, dir, args("-t", "2")); TextClient t = c.client()) {
      final String[] keys = new String[30];
      final long[] expected = new long[3];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = "prim" + (i * 7 % 30);
        assertEquals("STORED", t.set(keys[i], "v" + keys[i]));
        expected[c.primary(keys[i])] += 3 + 1; // three GETs and the multi-GET below
      }
      final long[] before = lookups(c, -1);
      for (int round = 0; round < 3; round++) {
        for (final String k : keys) {
          assertEquals(List.of(k, "v" + k), t.get(k));
        }
      }
      final List<String> all = new ArrayList<>();
      for (final String k : keys) {
        all.add(k);
        all.add("v" + k);
      }
      assertEquals(all, t.get(keys), "one reply in the client's key order");
      final long[] after = lookups(c, -1);
      for (int s = 0; s < 3; s++) {
        assertTrue(expected[s] > 0, "every server is some key's primary");
        assertEquals(expected[s], after[s] - before[s], "lookups on server " + s);
      }
    }
  }

  /**
   * Server 2 stops (SIGSTOP). A SET that involves it waits, and keeps waiting, while SETs through
   * the same write thread that do not involve it are stored and GETs to the other servers are
   * answered. Once it continues, the waiting SET is stored.
   */
  @Test
  void aStoppedReplicaDelaysOnlyTheSetsThatInvolveIt() throws Exception {
    try (Cluster c = new Cluster(3, dir, args("--replication", "2", "--server-timeout-ms",
            "60000"));
        TextClient waiting = c.client();
        TextClient other = c.client()) {
      final int slow = 2;
      final String involved = key(c, "inv", r -> r[0] != slow && r[1] == slow);
      final int primary = c.primary(involved);
      final String sameWriter = key(c, "same", r -> r[0] == primary && !contains(r, slow));
      final String readable = key(c, "read", r -> r[0] != slow);
      assertEquals("STORED", other.set(readable, "here"));
      final Memcached stopped = c.servers.get(slow);
      stopped.freeze();
      try {
        waiting.send("set " + involved + " 0 0 4\r\nslow\r\n");
        for (int i = 0; i < 20; i++) {
          assertEquals("STORED", other.set(sameWriter, "fast" + i));
          assertEquals(List.of(readable, "here"), other.get(readable));
        }
        // The SET on the stopped replica cannot have been answered, and must not be.
        assertFalse(waiting.hasInput(), "a SET was answered before its replica stored it");
      } finally {
        stopped.thaw();
      }
      assertEquals("STORED", waiting.line());
      assertTrue(c.servers.get(slow).has(involved));
      assertTrue(c.servers.get(primary).has(involved));
    }
  }

  /**
   * A fake replica's handler that answers nothing until it has received {@code batch} SETs on one
   * connection, then all of them: a write thread that waited for each reply before sending the
   * next SET would never get one. {@code mostUnanswered} is the most SETs it held at once.
   */
  private static FakeServer.Handler batching(final int batch, final AtomicInteger mostUnanswered) {
    return s -> {
      try (InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
        int unanswered = 0;
        String l;
        while ((l = line(in)) != null) {
          final String[] f = l.split(" ");
          if (!f[0].equals("set")) {
            out.write("ERROR\r\n".getBytes(StandardCharsets.US_ASCII));
            continue;
          }
          in.readNBytes(Integer.parseInt(f[4]) + 2);
          unanswered++;
          mostUnanswered.accumulateAndGet(unanswered, Math::max);
          if (unanswered == batch) {
            out.write("STORED\r\n".repeat(batch).getBytes(StandardCharsets.US_ASCII));
            unanswered = 0;
          }
        }
      }
    };
  }

  private static String line(final InputStream in) throws IOException {
    final StringBuilder sb = new StringBuilder();
    int b;
    while ((b = in.read()) != '\n') {
      if (b < 0) {
        return null;
      }
      sb.append((char) b);
    }
    return sb.toString().trim();
  }

  @Test
  void theWriteThreadKeepsManySetsInFlightOnOneConnection() throws Exception {
    final int batch = 5;
    final ExecutorService pool = Executors.newFixedThreadPool(batch);
    final AtomicInteger mostUnanswered = new AtomicInteger();
    try (FakeServer replica = new FakeServer(batching(batch, mostUnanswered));
        Middleware m =
            Cluster.startMiddleware(
                    List.of(args("-t", "1", "--stats-dir", dir.toString(),
                        "--server-timeout-ms", "60000")),
                    List.of(replica.address()))
                .middleware()) {
      final List<Future<String>> replies = new ArrayList<>();
      for (int i = 0; i < batch; i++) {
        final String k = "flight" + i;
        replies.add(
            pool.submit(
                () -> {
                  try (TextClient t = new TextClient(m.port())) {
                    return t.set(k, "v");
                  }
                }));
      }
      for (final Future<String> r : replies) {
        assertEquals("STORED", ErrorPathTest.await(r));
      }
      assertEquals(batch, mostUnanswered.get());
    } finally {
      pool.shutdownNow();
    }
  }

  /** Replication 2, one server killed: every SET that involves it fails, no false STORED. */
  @Test
  void aSetWithAReplicaDownIsNeverStored() {
    try (Cluster c = new Cluster(3, dir, args("--replication", "2", "--server-timeout-ms",
            "30000", "--reconnect-min-ms", "20", "--reconnect-max-ms", "200"));
        TextClient t = c.client()) {
      final int down = 1;
      final Memcached victim = c.servers.get(down);
      victim.kill();
      int failed = 0;
      for (int i = 0; i < 40; i++) {
        final String k = "down" + i;
        final int[] reps = c.replicas(k);
        final String reply = t.set(k, "v");
        if (contains(reps, down)) {
          failed++;
          assertTrue(reply.startsWith("SERVER_ERROR set failed on " + victim.address() + " "),
              reply);
          final int live = reps[0] == down ? reps[1] : reps[0];
          assertTrue(c.servers.get(live).has(k), "the live replica stored " + k);
        } else {
          assertEquals("STORED", reply, k);
        }
      }
      assertTrue(failed > 0 && failed < 40, "some keys involve the dead server: " + failed);
    }
  }

  /**
   * A stopped replica times out: every SET in flight to it gets a SERVER_ERROR, none a STORED,
   * also those sent after the first one on the same connection.
   */
  @Test
  void setsInFlightToAStoppedReplicaAllFailWithoutStored() throws Exception {
    final int timeoutMs = 700;
    final int clients = 4;
    final ExecutorService pool = Executors.newFixedThreadPool(clients);
    try (Cluster c =
        new Cluster(2, dir, args("--server-timeout-ms", Integer.toString(timeoutMs)))) {
      final Memcached stopped = c.servers.get(1);
      stopped.freeze();
      try {
        final List<Future<String>> replies = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
          final String k = "stop" + i;
          replies.add(
              pool.submit(
                  () -> {
                    try (TextClient t = c.client()) {
                      return t.set(k, "v");
                    }
                  }));
        }
        for (final Future<String> r : replies) {
          final String reply = ErrorPathTest.await(r);
          assertTrue(reply.startsWith("SERVER_ERROR set failed on " + stopped.address() + " "),
              reply);
        }
      } finally {
        stopped.thaw();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** Replication 1: a GET whose primary is down fails; other keys, alone or together, do not. */
  @Test
  void withOneReplicaAReadOfADeadPrimaryFailsAndOthersAreServed() {
    try (Cluster c = new Cluster(3, dir, args("--replication", "1", "--server-timeout-ms",
            "30000"));
        TextClient t = c.client()) {
      final int down = 0;
      final String lost = key(c, "lost", r -> r[0] == down);
      final String kept1 = key(c, "kept", r -> r[0] == 1);
      final String kept2 = key(c, "kept", r -> r[0] == 2);
      for (final String k : List.of(lost, kept1, kept2)) {
        assertEquals("STORED", t.set(k, "v" + k));
      }
      final Memcached victim = c.servers.get(down);
      victim.kill();
      for (int i = 0; i < 3; i++) {
        final List<String> g = t.get(lost);
        assertTrue(g.get(0).startsWith("SERVER_ERROR get failed on " + victim.address() + " "),
            g.toString());
        assertEquals(List.of(kept1, "v" + kept1, kept2, "v" + kept2), t.get(kept1, kept2));
        final List<String> mixed = t.get(kept1, lost, kept2);
        assertEquals(1, mixed.size(), mixed.toString());
        assertTrue(mixed.get(0).startsWith("SERVER_ERROR get failed on "), mixed.toString());
      }
    }
  }

  /** Replication 2: the primary killed, its keys are read from the next replica. */
  @Test
  void aReadFailsOverToTheNextReplicaWhenThePrimaryIsDown() throws Exception {
    final Path stats = dir.resolve("stats");
    try (Cluster c = new Cluster(3, stats, args("--replication", "2", "-t", "1",
            "--server-timeout-ms", "30000"));
        TextClient t = c.client()) {
      final int down = 0;
      final Map<String, Integer> next = new HashMap<>();
      final List<String> keys = new ArrayList<>();
      for (int i = 0; keys.size() < 6; i++) {
        final String k = "fo" + i;
        if (c.primary(k) == down) {
          keys.add(k);
          next.put(k, c.replicas(k)[1]);
        }
        assertEquals("STORED", t.set(k, "v" + k));
      }
      c.servers.get(down).kill();
      final long[] before = lookups(c, down);
      final List<String> expected = new ArrayList<>();
      for (final String k : keys) {
        assertEquals(List.of(k, "v" + k), t.get(k));
        expected.add(k);
        expected.add("v" + k);
      }
      assertEquals(expected, t.get(keys.toArray(String[]::new)));
      final long[] after = lookups(c, down);
      final IntPredicate live = s -> s != down;
      long moved = 0;
      for (int s = 0; s < 3; s++) {
        if (live.test(s)) {
          final int server = s;
          final long want =
              2 * next.values().stream().filter(v -> v == server).count(); // GET + multi-GET
          assertEquals(want, after[s] - before[s], "lookups on server " + s);
          moved += after[s] - before[s];
        }
      }
      assertEquals(12, moved);
    }
  }
}
