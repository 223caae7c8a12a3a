package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A worker's get exchange over a real connection to a server in the test, through read buffers
 * from far smaller than a reply to larger than all of them. Whether the reply stays in the read
 * buffer (relayed) or has to move into a copy, the client's bytes are the server's, and the
 * connection stays in step for the next exchange.
 */
class RelayTest {
  private static final String BIG = "v".repeat(5000);

  /** What the server answers to the i-th get, in turn. */
  private static final List<String> REPLIES =
      List.of(
          "VALUE k 0 3\r\nabc\r\nEND\r\n",
          "END\r\n",
          "VALUE k 7 5000\r\n" + BIG + "\r\nEND\r\n",
          "VALUE k 0 0\r\n\r\nVALUE k2 1 2\r\nhi\r\nEND\r\n",
          // A server's bare LF ends a line as CR LF does; the client gets memcached's CR LF.
          "VALUE k 0 3\nabc\r\nEND\n");

  @ParameterizedTest
  @ValueSource(ints = {8, 31, 64, 4096, 16 * 1024})
  void theClientGetsTheServersReplyWhateverTheReadBuffer(final int readBuffer) throws Exception {
    try (FakeServer server =
            new FakeServer(
                s -> {
                  final BufferedReader in =
                      new BufferedReader(
                          new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
                  final OutputStream out = s.getOutputStream();
                  for (final String reply : REPLIES) {
                    in.readLine();
                    out.write(reply.getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                  }
                })) {
      final ServerPool pool = new ServerPool(Main.parse("-p", "0", "-m", server.address()));
      final ServerConnection c = pool.blockingConnection(0, readBuffer);
      assertTrue(c.available(System.nanoTime()), c.lastFailure());
      final GetExchange exchange = new GetExchange(true);
      final byte[][] keys = {ascii("k"), ascii("k2")};
      final ByteSink sink = new ByteSink(16);
      for (final String reply : REPLIES) {
        sink.reset();
        final boolean ok =
            exchange.fetch(c, keys, null, 0, 2, System.nanoTime() + 5_000_000_000L, sink, null);
        assertTrue(ok, exchange.failure());
        final ByteBuffer relayed = exchange.relayed(c);
        final String got;
        if (relayed != null) {
          final byte[] b = new byte[relayed.remaining()];
          relayed.get(b);
          got = new String(b, StandardCharsets.US_ASCII);
        } else {
          sink.append(Replies.END);
          got = new String(sink.array(), 0, sink.length(), StandardCharsets.US_ASCII);
        }
        assertEquals(reply.replace("\r\n", "\n").replace("\n", "\r\n"), got,
            "read buffer " + readBuffer);
      }
      c.close();
    }
  }

  private static byte[] ascii(final String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
