package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzz test of {@link RequestDecoder}: any byte stream, cut anywhere, as a client connection
 * delivers it. Without {@code JAZZER_FUZZ} it replays the inputs in
 * {@code src/test/resources/org/mwlab/middleware/RequestDecoderFuzzTestInputs/decode/}.
 *
 * <p>Input layout: byte 0 picks the limits, byte 1 (low 4 bits) the number of cuts, then one byte
 * per cut (a chunk of 1-256 bytes), then the stream. The decoder sees the stream followed by CRLF
 * and {@code get k}.
 *
 * <p>Checked: no exception; every result is well-formed and within the limits; the bytes left
 * for a later read never exceed {@link RequestDecoder#maxRequestBytes()}, so a buffer of that size
 * never stalls; the results do not depend on where the stream was cut; and when the decoder has
 * consumed the stream and its CRLF with nothing pending, the {@code get k} that follows comes out.
 */
class RequestDecoderFuzzTest {

  private static final byte[] SENTINEL = "get k\r\n".getBytes(StandardCharsets.US_ASCII);

  /** Decoder limits: small ones make every limit reachable with short inputs. */
  private record Limits(int key, int value, int line, int keys) {
    static Limits of(final int b) {
      if ((b & 0x80) != 0) {
        return new Limits(250, 1 << 20, 8192, 1024); // the middleware's defaults
      }
      final int key = 1 + (b & 3) * 8;
      return new Limits(key, 1 + ((b >> 2) & 3) * 20, key + 64, 1 + ((b >> 4) & 7));
    }

    RequestDecoder decoder() {
      return new RequestDecoder(key, value, line, keys);
    }
  }

  /** What one pass over the stream produced. */
  private record Run(List<String> results, boolean closed, int leftover, int atBoundary) {}

  // CR and LF are common in the seeds; Jazzer writes them into the dictionary unescaped.
  @DictionaryEntries({"get ", "set ", " noreply", "version", "quit", " 0 0 "})
  @FuzzTest
  void decode(final byte[] input) {
    if (input.length < 2) {
      return;
    }
    final Limits limits = Limits.of(input[0] & 0xff);
    final int ncuts = Math.min(input[1] & 15, input.length - 2);
    final int[] chunks = new int[ncuts];
    for (int i = 0; i < ncuts; i++) {
      chunks[i] = (input[2 + i] & 0xff) + 1;
    }
    final int from = 2 + ncuts;
    final int boundary = input.length - from + 2;
    final byte[] stream = new byte[boundary + SENTINEL.length];
    System.arraycopy(input, from, stream, 0, input.length - from);
    stream[boundary - 2] = '\r';
    stream[boundary - 1] = '\n';
    System.arraycopy(SENTINEL, 0, stream, boundary, SENTINEL.length);

    final Run cut = run(limits, stream, chunks, boundary);
    final Run whole = run(limits, stream, new int[0], boundary);
    assertEquals(whole.results(), cut.results(), "results depend on where the stream was cut");
    assertEquals(whole.closed(), cut.closed());
    if (!cut.closed()) {
      assertEquals(whole.leftover(), cut.leftover());
    }
    if (cut.atBoundary() >= 0) {
      // Nothing pending at the boundary: the protocol is back in step.
      assertEquals(List.of("get k"), cut.results().subList(cut.atBoundary(), cut.results().size()));
      assertFalse(cut.closed());
      assertEquals(0, cut.leftover());
    }
  }

  @Test
  void setsDecodeWhateverTheKeysPerGetLimit() {
    for (int keys = 1; keys <= 4; keys++) {
      final RequestDecoder d = new RequestDecoder(250, 1024, 8192, keys);
      final byte[] b = "set k 0 0 1 noreply\r\nv\r\n".getBytes(StandardCharsets.US_ASCII);
      final RequestDecoder.Command c =
          (RequestDecoder.Command) d.decode(b, 0, b.length);
      assertEquals(RequestType.SET, c.type(), "max keys per get " + keys);
      assertTrue(c.noreply());
    }
  }

  @Test
  void aSkippedBlockEndingBeforeAPartialSetIsNotDecodedAgain() {
    final RequestDecoder d = new RequestDecoder(250, 4, 8192, 16);
    final byte[] first = "set a 0 0 12\r\nxxxx".getBytes(StandardCharsets.US_ASCII);
    assertEquals(first.length, d.decode(first, 0, first.length).consumed());
    // The rest of the rejected block, then a set whose data is still on its way.
    final byte[] next = "xxxxxxxx\r\nset b 0 0 1\r\n".getBytes(StandardCharsets.US_ASCII);
    final RequestDecoder.NeedMore m =
        (RequestDecoder.NeedMore) d.decode(next, 0, next.length);
    assertEquals(10, m.consumed());
    assertEquals(next.length - 10 + 3, m.needed());
    final byte[] rest = "set b 0 0 1\r\nv\r\n".getBytes(StandardCharsets.US_ASCII);
    final RequestDecoder.Command c = (RequestDecoder.Command) d.decode(rest, 0, rest.length);
    assertArrayEquals("b".getBytes(StandardCharsets.US_ASCII), c.keys()[0]);
  }

  /**
   * Delivers {@code stream} in chunks of the given lengths (the rest at once) into a buffer no
   * larger than the network thread's largest, decoding after each delivery as it does.
   */
  private static Run run(
      final Limits limits, final byte[] stream, final int[] chunks, final int boundary) {
    final RequestDecoder d = limits.decoder();
    final int cap = d.maxRequestBytes() + 1024;
    final byte[] buf = new byte[Math.min(cap, stream.length)];
    final List<String> results = new ArrayList<>();
    int len = 0;
    int off = 0;
    long consumed = 0;
    int atBoundary = -1;
    boolean closed = false;
    for (int c = 0; off < stream.length && !closed; c++) {
      int want = Math.min(c < chunks.length ? chunks[c] : stream.length, stream.length - off);
      while (want > 0 && !closed) {
        final int n = Math.min(want, buf.length - len);
        assertTrue(n > 0, "decoder stalls with a full buffer of " + len + " bytes");
        System.arraycopy(stream, off, buf, len, n);
        len += n;
        off += n;
        want -= n;
        int p = 0;
        while (true) {
          final RequestDecoder.Result r = d.decode(buf, p, len);
          check(r, len - p, limits, d);
          p += r.consumed();
          consumed += r.consumed();
          final boolean close = r instanceof RequestDecoder.Reply rep && rep.close();
          if (r instanceof RequestDecoder.NeedMore) {
            if (atBoundary < 0 && consumed == boundary && d.idle()) {
              atBoundary = results.size();
            }
            break;
          }
          assertTrue(r.consumed() > 0, "a result that consumes nothing");
          results.add(describe(r));
          if (close) {
            closed = true;
            break;
          }
          if (atBoundary < 0 && consumed == boundary && d.idle()) {
            atBoundary = results.size();
          }
        }
        System.arraycopy(buf, p, buf, 0, len - p);
        len -= p;
      }
    }
    return new Run(results, closed, len, atBoundary);
  }

  private static void check(
      final RequestDecoder.Result r, final int available, final Limits limits,
      final RequestDecoder d) {
    assertNotNull(r);
    assertTrue(r.consumed() >= 0 && r.consumed() <= available,
        "consumed " + r.consumed() + " of " + available);
    if (r instanceof RequestDecoder.NeedMore m) {
      final int left = available - m.consumed();
      assertTrue(left <= d.maxRequestBytes(), "retains " + left + " bytes");
      assertTrue(m.needed() == 0 || (m.needed() > left && m.needed() <= d.maxRequestBytes()),
          "needs " + m.needed() + " with " + left + " buffered");
    } else if (r instanceof RequestDecoder.Command c) {
      assertTrue(c.keys().length >= 1 && c.keys().length <= limits.keys());
      for (final byte[] k : c.keys()) {
        assertTrue(k.length >= 1 && k.length <= limits.key(), "key of " + k.length + " bytes");
        for (final byte b : k) {
          assertTrue(b != ' ' && b != '\n', "key with a separator");
        }
      }
      switch (c.type()) {
        case GET -> assertEquals(1, c.keys().length);
        case MULTIGET -> assertTrue(c.keys().length > 1);
        case SET -> checkSet(c, limits);
        default -> throw new AssertionError(c.type());
      }
    } else {
      final RequestDecoder.Reply rep = (RequestDecoder.Reply) r;
      final byte[] b = rep.reply();
      assertTrue(b.length == 0
          || (b.length >= 2 && b[b.length - 2] == '\r' && b[b.length - 1] == '\n'));
    }
  }

  /** The payload is the command line up to the byte count, CRLF, the data block and CRLF. */
  private static void checkSet(final RequestDecoder.Command c, final Limits limits) {
    assertEquals(1, c.keys().length);
    final byte[] p = c.payload();
    final int crlf = indexOfCrlf(p);
    assertTrue(crlf > 0 && crlf <= limits.line(), "command line of " + crlf + " bytes");
    final String[] words =
        new String(p, 0, crlf, StandardCharsets.ISO_8859_1).trim().split(" +");
    assertEquals(5, words.length, "forwarded line " + Arrays.toString(words));
    assertEquals("set", words[0]);
    assertArrayEquals(c.keys()[0], words[1].getBytes(StandardCharsets.ISO_8859_1));
    final int bytes = Integer.parseInt(words[4]);
    assertTrue(bytes <= limits.value());
    assertEquals(crlf + 2 + bytes + 2, p.length);
    assertEquals('\r', p[p.length - 2]);
    assertEquals('\n', p[p.length - 1]);
  }

  private static int indexOfCrlf(final byte[] p) {
    for (int i = 0; i + 1 < p.length; i++) {
      if (p[i] == '\r' && p[i + 1] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static String describe(final RequestDecoder.Result r) {
    if (r instanceof RequestDecoder.Command c) {
      final StringBuilder sb = new StringBuilder(c.type().label());
      for (final byte[] k : c.keys()) {
        sb.append(' ').append(new String(k, StandardCharsets.ISO_8859_1));
      }
      if (c.payload() != null) {
        sb.append(" [").append(new String(c.payload(), StandardCharsets.ISO_8859_1)).append(']');
      }
      return c.noreply() ? sb.append(" noreply").toString() : sb.toString();
    }
    final RequestDecoder.Reply rep = (RequestDecoder.Reply) r;
    return "reply " + new String(rep.reply(), StandardCharsets.ISO_8859_1).trim()
        + (rep.close() ? " close" : "");
  }
}
