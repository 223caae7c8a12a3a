package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(180)
class ShutdownTest {
  @TempDir Path dir;

  /** False once the listening socket is closed (or no longer takes connections). */
  private static boolean accepts(final int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Requests are queued behind a stopped server: one per connection at a worker, the others
   * waiting behind it on their connection. SIGTERM arrives; the server continues only once the
   * middleware has stopped accepting. Every request it had read is answered before it exits.
   */
  @BothDesigns
  void sigtermAnswersEveryRequestAlreadyReadBeforeExiting(final String design) throws Exception {
    final Path stats = dir.resolve("stats");
    final int clients = 4;
    final int perClient = 5;
    try (Memcached m = Memcached.start();
        MiddlewareProcess p = MiddlewareProcess.start(dir, "--design", design, "-t", "1",
            "--server-timeout-ms", "60000", "--stats-dir", stats.toString(), "-m",
            m.address().toString())) {
      final List<TextClient> open = new ArrayList<>();
      try {
        for (int i = 0; i < clients; i++) {
          open.add(new TextClient(p.port));
        }
        m.freeze();
        for (int i = 0; i < clients; i++) {
          final StringBuilder pipeline = new StringBuilder();
          for (int j = 0; j < perClient; j++) {
            pipeline.append("set c").append(i).append('-').append(j).append(" 0 0 1\r\nx\r\n");
          }
          open.get(i).send(pipeline.toString());
        }
        // Read by the middleware: nothing left in its sockets' receive queues.
        for (final TextClient c : open) {
          while (TcpQueues.of(p.port, c.localPort()).rx() > 0) {
            Thread.sleep(5);
          }
        }
        p.terminate();
        while (accepts(p.port)) {
          Thread.sleep(10);
        }
        m.thaw();
        for (int i = 0; i < clients; i++) {
          final TextClient c = open.get(i);
          for (int j = 0; j < perClient; j++) {
            assertEquals("STORED", c.line(), "client " + i + ", request " + j);
          }
          assertTrue(c.closedByPeer(), "closed after the last reply");
        }
      } finally {
        open.forEach(TextClient::close);
      }
      assertEquals(0, p.awaitExit());
      for (int i = 0; i < clients; i++) {
        for (int j = 0; j < perClient; j++) {
          assertTrue(m.has("c" + i + "-" + j));
        }
      }
    }
    final String summary = Files.readString(stats.resolve("summary.json"));
    assertTrue(summary.contains("\"clean_shutdown\": true"), summary);
    assertTrue(summary.contains("\"set\": {\"count\": " + clients * perClient + ","), summary);
  }
}
