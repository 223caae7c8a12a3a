package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(90)
class PipelineTest {
  @TempDir Path dir;

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

  @Test
  void pipelinedRepliesKeepRequestOrderAcrossWorkers() {
    try (Cluster c = new Cluster(3, dir, "-t", "8", "-s", "true");
        TextClient client = c.client()) {
      final Script s = mixed(300, 100);
      client.send(s.requests.toString());
      check(client, s);
    }
  }

  @Test
  void fullQueueAndLongPipelinesPushBackWithoutLosingRequests() throws Exception {
    try (Cluster c =
            new Cluster(2, dir, "-t", "2", "--queue-capacity", "2", "--max-pipeline", "8");
        TextClient client = c.client()) {
      final Script s = mixed(1500, 1000);
      final byte[] bytes = s.requests.toString().getBytes(StandardCharsets.ISO_8859_1);
      final AtomicReference<Throwable> failed = new AtomicReference<>();
      // The writer runs ahead; the middleware must stop reading rather than buffer everything.
      final Thread writer =
          new Thread(
              () -> {
                try {
                  client.send(bytes);
                } catch (RuntimeException e) {
                  failed.set(e);
                }
              });
      writer.start();
      check(client, s);
      writer.join(10_000);
      assertEquals(null, failed.get());
    }
  }

  @Test
  void requestsSplitAtEveryByteBoundaryOverTheNetwork() throws Exception {
    try (Cluster c = new Cluster(1, dir, "-t", "2"); TextClient client = c.client()) {
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
