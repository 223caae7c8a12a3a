package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ErrorPathTest {
  @TempDir Path dir;

  private static final String FAST_FAILOVER =
      "--server-timeout-ms=300 --reconnect-min-ms=20 --reconnect-max-ms=200";

  private static String[] args(final String... extra) {
    final List<String> a = new ArrayList<>(List.of(FAST_FAILOVER.split(" ")));
    a.addAll(List.of(extra));
    return a.toArray(String[]::new);
  }

  @Test
  void malformedRequestsGetMemcachedErrorsAndTheConnectionStaysUsable() {
    try (Cluster c = new Cluster(1, dir, "--max-value-bytes", "100"); TextClient t = c.client()) {
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

  @Test
  void unrecoverableRequestClosesOnlyThatConnection() {
    try (Cluster c = new Cluster(1, dir); TextClient t = c.client(); TextClient other = c.client()) {
      t.send("set k 0 0\r\nabc\r\n");
      assertEquals("CLIENT_ERROR bad command line format", t.line());
      assertTrue(t.closedByPeer());
      assertEquals("STORED", other.set("still", "here"));
    }
  }

  @Test
  void connectionLimitRefusesExtraClientsAndFreesSlotsOnClose() throws Exception {
    try (Cluster c = new Cluster(1, dir, "--max-connections", "2")) {
      final TextClient a = c.client();
      final TextClient b = c.client();
      assertEquals("STORED", a.set("x", "1"));
      assertEquals("STORED", b.set("y", "2"));
      try (TextClient extra = c.client()) {
        assertEquals("SERVER_ERROR too many open connections", extra.line());
        assertTrue(extra.closedByPeer());
      }
      a.close();
      final long deadline = System.currentTimeMillis() + 5000;
      while (true) {
        try (TextClient again = c.client()) {
          again.send("get x\r\n");
          final String l = again.line();
          if (l.startsWith("VALUE")) {
            break;
          }
          assertTrue(System.currentTimeMillis() < deadline, "slot never freed");
          Thread.sleep(20);
        }
      }
      b.close();
    }
  }

  @Test
  void serverKilledMidRunFailsWritesFailsOverReadsAndIsUsedAgainAfterRestart()
      throws Exception {
    try (Cluster c = new Cluster(2, dir, args("-t", "4")); TextClient t = c.client()) {
      final Memcached victim = c.servers.get(1);
      for (int i = 0; i < 20; i++) {
        assertEquals("STORED", t.set("k" + i, "v" + i));
      }
      // Background load across the kill: every reply is either right or a SERVER_ERROR.
      final AtomicBoolean stop = new AtomicBoolean();
      final AtomicReference<String> wrong = new AtomicReference<>();
      final AtomicInteger answered = new AtomicInteger();
      final Thread load =
          new Thread(
              () -> {
                try (TextClient bg = c.client()) {
                  int i = 0;
                  while (!stop.get()) {
                    final List<String> r = bg.get("k" + (i % 20));
                    if (!r.equals(List.of("k" + (i % 20), "v" + (i % 20)))
                        && !(r.size() == 1 && r.get(0).startsWith("SERVER_ERROR"))) {
                      wrong.set(r.toString());
                    }
                    final String s = bg.set("bg" + i, "x");
                    if (!s.equals("STORED") && !s.startsWith("SERVER_ERROR")) {
                      wrong.set(s);
                    }
                    answered.incrementAndGet();
                    i++;
                  }
                }
              });
      load.start();
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
      load.join(10_000);
      assertEquals(null, wrong.get());
      assertTrue(answered.get() > 0);

      victim.start();
      final long deadline = System.currentTimeMillis() + 10_000;
      String reply;
      do {
        Thread.sleep(50);
        reply = t.set("after", "restart");
      } while (!reply.equals("STORED") && System.currentTimeMillis() < deadline);
      assertEquals("STORED", reply);
      assertTrue(victim.has("after"));
      // Reads reach the restarted server again (round-robin over both replicas).
      assertEquals("STORED", t.set("again", "1"));
      final long hits = victim.stat("get_hits");
      for (int i = 0; i < 10; i++) {
        assertEquals(List.of("again", "1"), t.get("again"));
      }
      assertTrue(victim.stat("get_hits") - hits >= 4, "restarted server serves reads");
    }
  }

  @Test
  void everyReplicaDownGivesServerErrorsNotHangs() {
    try (Cluster c = new Cluster(1, dir, args()); TextClient t = c.client()) {
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

  /** A fake server: accepts connections and answers every request with {@code reply}. */
  private static final class FakeServer implements AutoCloseable {
    final ServerSocket socket;
    final List<Socket> accepted = new ArrayList<>();
    final Thread thread;

    FakeServer(final String reply) throws IOException {
      socket = new ServerSocket(Ports.next(), 50, InetAddress.getLoopbackAddress());
      thread =
          new Thread(
              () -> {
                try {
                  while (true) {
                    final Socket s = socket.accept();
                    synchronized (accepted) {
                      accepted.add(s);
                    }
                    if (reply != null) {
                      final Thread t = new Thread(() -> answer(s, reply));
                      t.setDaemon(true);
                      t.start();
                    }
                  }
                } catch (IOException e) {
                  // closed
                }
              });
      thread.setDaemon(true);
      thread.start();
    }

    private static void answer(final Socket s, final String reply) {
      try (InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
        int b;
        while ((b = in.read()) >= 0) {
          if (b == '\n') {
            out.write(reply.getBytes(StandardCharsets.US_ASCII));
          }
        }
      } catch (IOException e) {
        // closed
      }
    }

    String address() {
      return "127.0.0.1:" + socket.getLocalPort();
    }

    @Override
    public void close() throws IOException {
      socket.close();
      synchronized (accepted) {
        for (final Socket s : accepted) {
          s.close();
        }
      }
    }
  }

  private static Middleware startWith(final Path dir, final String... servers) throws IOException {
    final List<String> a = new ArrayList<>(List.of(args("-p", Integer.toString(Ports.next()),
        "-t", "2", "--stats-dir", dir.toString())));
    a.add("-m");
    a.addAll(List.of(servers));
    return Middleware.start(Main.parse(a.toArray(String[]::new)));
  }

  @Test
  void unresponsiveServerTimesOutAndReadsFailOver() throws Exception {
    try (Memcached good = new Memcached(Ports.next());
        FakeServer silent = new FakeServer(null);
        Middleware m = startWith(dir, good.address().toString(), silent.address());
        TextClient t = new TextClient(m.port())) {
      try (TextClient direct = good.client()) {
        assertEquals("STORED", direct.set("k", "v"));
      }
      for (int i = 0; i < 4; i++) {
        assertEquals(List.of("k", "v"), t.get("k"));
      }
      final String s = t.set("k2", "v2");
      assertTrue(s.startsWith("SERVER_ERROR set failed on " + silent.address()), s);
      assertTrue(s.contains("timeout") || s.contains("unavailable"), s);
      assertTrue(good.has("k2"), "the healthy replica still stored it");
    }
  }

  @Test
  void serverAnsweringNonsenseIsAnError() throws Exception {
    try (FakeServer liar = new FakeServer("BOGUS\r\n");
        Middleware m = startWith(dir, liar.address());
        TextClient t = new TextClient(m.port())) {
      final String s = t.set("k", "v");
      assertTrue(s.startsWith("SERVER_ERROR set failed on " + liar.address() + " replied BOGUS"), s);
      final List<String> g = t.get("k");
      assertTrue(g.get(0).startsWith("SERVER_ERROR get failed on " + liar.address()), g.get(0));
      assertTrue(g.get(0).contains("unexpected reply"), g.get(0));
    }
  }
}
