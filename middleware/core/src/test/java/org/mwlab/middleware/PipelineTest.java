package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(90)
class PipelineTest {
  @TempDir Path dir;
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() {
    pool.shutdownNow();
  }

  /** Requests and the exact lines expected back, built together. */
  private static final class Script {
    final StringBuilder requests = new StringBuilder();
    final List<String> replies = new ArrayList<>();

    void set(final String k, final String v, final boolean noreply) {
      requests.append("set ").append(k).append(" 3 0 ").append(v.length())
          .append(noreply ? " noreply" : "").append("\r\n").append(v).append("\r\n");
      if (!noreply) {
        replies.add("STORED");
      }
    }

    void get(final String v, final String... keys) {
      requests.append("get ").append(String.join(" ", keys)).append("\r\n");
      if (v != null) {
        for (final String k : keys) {
          replies.add("VALUE " + k + " 3 " + v.length());
          replies.add(v);
        }
      }
      replies.add("END");
    }

    void error(final String line, final String reply) {
      requests.append(line).append("\r\n");
      replies.add(reply);
    }
  }

  private static Script mixed(final int n, final int valueSize) {
    final Script s = new Script();
    for (int i = 0; i < n; i++) {
      final String v = (i + "-").repeat(valueSize).substring(0, valueSize);
      s.set("p" + i, v, i % 7 == 3);
      s.get(v, "p" + i);
      if (i % 5 == 0) {
        s.get(v, "p" + i, "p" + i);
      }
      if (i % 11 == 0) {
        s.error("bogus " + i, "ERROR");
      }
    }
    return s;
  }

  private static void check(final TextClient c, final Script s) {
    for (int i = 0; i < s.replies.size(); i++) {
      assertEquals(s.replies.get(i), c.line(), "reply line " + i);
    }
  }

  @BothDesigns
  void pipelinedRepliesKeepRequestOrderAcrossWorkers(final String design) {
    try (Cluster c = new Cluster(3, dir, "--design", design, "-t", "8", "-s", "true");
        TextClient client = c.client()) {
      final Script s = mixed(300, 100);
      client.send(s.requests.toString());
      check(client, s);
    }
  }

  /**
   * Values larger than a worker's server read buffer (16 KB) come in over several reads: a reply
   * relayed from that buffer has to move into a copy midway. Every reply still arrives whole, in
   * order, also pipelined behind and ahead of small ones.
   */
  @BothDesigns
  void repliesLargerThanTheServerReadBufferArriveWhole(final String design) {
    try (Cluster c = new Cluster(2, dir, "--design", design, "-t", "4");
        TextClient client = c.client()) {
      final Script s = new Script();
      for (int i = 0; i < 40; i++) {
        final int size = i % 3 == 0 ? 40_000 : i % 3 == 1 ? 16 * 1024 - 30 : 10;
        final String v = (i + "-").repeat(size).substring(0, size);
        s.set("big" + i, v, false);
        s.get(v, "big" + i);
        s.get(v, "big" + i, "big" + i);
      }
      client.send(s.requests.toString());
      check(client, s);
    }
  }

  @BothDesigns
  void fullQueueAndLongPipelinesPushBackWithoutLosingRequests(final String design)
      throws Exception {
    try (Cluster c =
            new Cluster(2, dir, "--design", design, "-t", "2", "--queue-capacity", "2",
                "--max-pipeline", "8");
        TextClient client = c.client()) {
      final Script s = mixed(1500, 1000);
      final byte[] bytes = s.requests.toString().getBytes(StandardCharsets.ISO_8859_1);
      // The writer runs ahead; the middleware must stop reading rather than buffer everything.
      final Future<?> writer = pool.submit(() -> client.send(bytes));
      check(client, s);
      ErrorPathTest.await(writer);
    }
  }

  /**
   * With the server stopped, a client pipelines far more than {@code --max-pipeline} requests.
   * The middleware takes no more of them from the socket than the limit plus its read buffer:
   * the rest waits in the kernel's socket queues, measured in /proc/net/tcp. Once the server
   * answers, the replies drain, reading resumes and every request is answered in order.
   */
  @BothDesigns
  void aConnectionAtThePipelineLimitIsNotReadUntilRepliesDrain(final String design)
      throws Exception {
    final int limit = 4;
    try (Cluster c = new Cluster(1, dir, "--design", design, "-t", "2", "--max-pipeline",
            Integer.toString(limit), "--server-timeout-ms", "30000");
        TextClient client = c.client()) {
      final Script s = new Script();
      final List<byte[]> requests = new ArrayList<>();
      int longest = 0;
      for (int i = 0; i < 500; i++) {
        final int from = s.requests.length();
        final String v = (i + "-").repeat(4000).substring(0, 4000);
        s.set("q" + i, v, false);
        if (i % 10 == 0) {
          s.get(v, "q" + i);
        }
        final byte[] b = s.requests.substring(from).getBytes(StandardCharsets.ISO_8859_1);
        requests.add(b);
        longest = Math.max(longest, b.length);
      }
      final Memcached server = c.servers.get(0);
      server.freeze();
      final AtomicLong written = new AtomicLong();
      final Future<?> writer =
          pool.submit(
              () -> {
                for (final byte[] b : requests) {
                  client.send(b);
                  written.addAndGet(b.length);
                }
              });
      // Wait until the middleware stopped reading: bytes wait in its receive queue and in the
      // client's send queue (the writer is held by flow control), and neither queue nor the
      // writer moves over three samples in a row. A middleware that still reads, however
      // slowly, takes bytes from its queue between two of them.
      final int mw = c.middleware.port();
      final int me = client.localPort();
      List<Long> before = List.of();
      int unchanged = 0;
      while (unchanged < 3) {
        Thread.sleep(300);
        final List<Long> now = List.of(written.get(), TcpQueues.of(me, mw).tx(),
            TcpQueues.of(mw, me).rx());
        final boolean held = now.get(1) > 0 && now.get(2) > 0;
        unchanged = held && now.equals(before) ? unchanged + 1 : 0;
        before = now;
      }
      // Bytes the middleware took from its socket, at most: the send in progress may have put
      // up to one request more into the client's queue than "written" counts.
      final long consumed = before.get(0) + longest - before.get(1) - before.get(2);
      final long readBuffer = 16 * 1024; // the middleware's input buffer for such requests
      final long bound = (limit + 1L) * longest + readBuffer;
      assertTrue(consumed <= bound, "took " + consumed + " bytes of " + written.get()
          + " sent; at most " + bound + " with " + limit + " requests unanswered");
      server.thaw();
      check(client, s);
      ErrorPathTest.await(writer);
    }
  }

  @BothDesigns
  void requestsSplitAtEveryByteBoundaryOverTheNetwork(final String design) throws Exception {
    try (Cluster c = new Cluster(1, dir, "--design", design, "-t", "2");
        TextClient client = c.client()) {
      final Script s = new Script();
      s.set("s", "hello world", false);
      s.get("hello world", "s");
      s.get("hello world", "s", "s");
      s.error("nope", "ERROR");
      final byte[] all = s.requests.toString().getBytes(StandardCharsets.ISO_8859_1);
      for (int cut = 1; cut < all.length; cut++) {
        client.send(java.util.Arrays.copyOfRange(all, 0, cut));
        Thread.sleep(2);
        client.send(java.util.Arrays.copyOfRange(all, cut, all.length));
        check(client, s);
      }
    }
  }
}
