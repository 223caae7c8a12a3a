package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestDecoderTest {

  /** Feeds {@code input} in the given chunks as a connection would; returns readable outcomes. */
  private static List<String> decode(final RequestDecoder d, final byte[] input, final int... cuts) {
    final List<String> out = new ArrayList<>();
    byte[] buf = new byte[64];
    int len = 0;
    int from = 0;
    final int[] bounds = Arrays.copyOf(cuts, cuts.length + 1);
    bounds[cuts.length] = input.length;
    for (final int to : bounds) {
      if (len + (to - from) > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + to - from));
      }
      System.arraycopy(input, from, buf, len, to - from);
      len += to - from;
      from = to;
      int p = 0;
      while (true) {
        final RequestDecoder.Result r = d.decode(buf, p, len);
        p += r.consumed();
        if (r instanceof RequestDecoder.NeedMore) {
          break;
        }
        out.add(describe(r));
        if (r instanceof RequestDecoder.Reply rep && rep.close()) {
          return out;
        }
      }
      System.arraycopy(buf, p, buf, 0, len - p);
      len -= p;
    }
    return out;
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
      if (c.noreply()) {
        sb.append(" noreply");
      }
      return sb.toString();
    }
    final RequestDecoder.Reply rep = (RequestDecoder.Reply) r;
    return new String(rep.reply(), StandardCharsets.ISO_8859_1).trim() + (rep.close() ? " +close" : "");
  }

  private static RequestDecoder decoder() {
    return new RequestDecoder(250, 1024, 512, 16);
  }

  private static byte[] b(final String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static final String PIPELINE =
      "get a\r\n"
          + "set k 7 0 5\r\nhello\r\n"
          + "get a bb ccc\r\n"
          + "set n 0 0 3 noreply\r\nx\ry\r\n"
          + "bogus\r\n"
          + "set bad 0 0 2\r\nabcd\r\n"
          + "set big 0 0 2000\r\n" + "v".repeat(2000) + "\r\n"
          + "get " + "k".repeat(251) + "\r\n"
          + "set " + "k".repeat(251) + " 0 0 3\r\nabc\r\n"
          + "set f x 0 3\r\nabc\r\n"
          + "get\r\n"
          + "get 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\r\n"
          + "version\r\n"
          + "get z\n"
          + "set e 0 0 0\r\n\r\n";

  private static final List<String> EXPECTED =
      List.of(
          "get a",
          "set k [set k 7 0 5\r\nhello\r\n]",
          "multiget a bb ccc",
          "set n [set n 0 0 3\r\nx\ry\r\n] noreply",
          "ERROR",
          "CLIENT_ERROR bad data chunk",
          "ERROR",
          "CLIENT_ERROR value too large (max 1024 bytes)",
          "CLIENT_ERROR key too long",
          "CLIENT_ERROR key too long",
          "CLIENT_ERROR bad command line format",
          "ERROR",
          "CLIENT_ERROR too many keys (max 16)",
          "VERSION mwlab-middleware-1.0.0",
          "get z",
          "set e [set e 0 0 0\r\n\r\n]");

  @Test
  void decodesAPipelineInOneRead() {
    assertEquals(EXPECTED, decode(decoder(), b(PIPELINE)));
  }

  @Test
  void decodesTheSamePipelineSplitAtEveryByteBoundary() {
    final byte[] in = b(PIPELINE);
    for (int cut = 1; cut < in.length; cut++) {
      assertEquals(EXPECTED, decode(decoder(), in, cut), "split at byte " + cut);
    }
  }

  @Test
  void decodesTheSamePipelineOneByteAtATime() {
    final byte[] in = b(PIPELINE);
    final int[] cuts = new int[in.length - 1];
    for (int i = 0; i < cuts.length; i++) {
      cuts[i] = i + 1;
    }
    assertEquals(EXPECTED, decode(decoder(), in, cuts));
  }

  @Test
  void overlongGetLineIsSkippedAndTheConnectionResynchronises() {
    final String in = "get " + "k ".repeat(400) + "\r\nget ok\r\n";
    final byte[] bytes = b(in);
    for (final int cut : new int[] {5, 300, 600, 805, 808}) {
      assertEquals(List.of("CLIENT_ERROR line too long", "get ok"), decode(decoder(), bytes, cut));
    }
  }

  @Test
  void overlongSetLineCannotBeResynchronisedAndCloses() {
    final String in = "set " + "x".repeat(600) + " 0 0 1\r\na\r\nget ok\r\n";
    assertEquals(List.of("CLIENT_ERROR line too long +close"), decode(decoder(), b(in)));
  }

  @Test
  void setWithoutAByteCountCloses() {
    assertEquals(
        List.of("CLIENT_ERROR bad command line format +close"),
        decode(decoder(), b("set k 0 0\r\nabc\r\nget a\r\n")));
    assertEquals(
        List.of("CLIENT_ERROR bad data chunk +close"),
        decode(decoder(), b("set k 0 0 -3\r\nabc\r\nget a\r\n")));
  }

  @Test
  void quitClosesAfterEarlierReplies() {
    final List<String> r = decode(decoder(), b("get a\r\nquit\r\nget b\r\n"));
    assertEquals(List.of("get a", " +close"), r);
  }

  @Test
  void oversizedValueIsSwallowedEvenWhenItArrivesInPieces() {
    final ByteArrayOutputStream s = new ByteArrayOutputStream();
    s.writeBytes(b("set big 1 2 5000\r\n"));
    s.writeBytes(b("z".repeat(5000)));
    s.writeBytes(b("\r\nget after\r\n"));
    final byte[] in = s.toByteArray();
    assertEquals(
        List.of("CLIENT_ERROR value too large (max 1024 bytes)", "get after"),
        decode(decoder(), in, 10, 19, 100, 4000, 5010, 5019));
  }

  @Test
  void payloadDropsNoreplyAndKeepsBinaryData() {
    final byte[] data = {0, 1, '\r', '\n', (byte) 0xff};
    final ByteArrayOutputStream s = new ByteArrayOutputStream();
    s.writeBytes(b("set bin 3 100 5 noreply\r\n"));
    s.writeBytes(data);
    s.writeBytes(b("\r\n"));
    final RequestDecoder.Result r = decoder().decode(s.toByteArray(), 0, s.size());
    final RequestDecoder.Command c = (RequestDecoder.Command) r;
    assertTrue(c.noreply());
    assertEquals(s.size(), c.consumed());
    final ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.writeBytes(b("set bin 3 100 5\r\n"));
    expected.writeBytes(data);
    expected.writeBytes(b("\r\n"));
    assertArrayEquals(expected.toByteArray(), c.payload());
  }

  @Test
  void payloadEndsItsCommandLineWithCrlfWhateverTheLineEndedWith() {
    // As sent (the common case, copied whole), after a bare LF, and after trailing spaces.
    assertEquals(
        List.of("set a [set a 0 0 1\r\nx\r\n]", "set b [set b 0 0 1\r\ny\r\n]",
            "set c [set c 0 0 1\r\nz\r\n]"),
        decode(decoder(), b("set a 0 0 1\r\nx\r\nset b 0 0 1\ny\r\nset c 0 0 1  \r\nz\r\n")));
  }

  @Test
  void keyOfExactlyTheLimitIsAccepted() {
    final String key = "k".repeat(250);
    assertEquals(List.of("get " + key), decode(decoder(), b("get " + key + "\r\n")));
    assertFalse(decode(decoder(), b("get " + key + "k\r\n")).get(0).startsWith("get"));
  }
}
