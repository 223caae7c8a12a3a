package org.mwlab.simplemq.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzz test of the middleware's side of the protocol: any byte stream, cut anywhere, through
 * {@link FrameReader} and {@link Codec#request}. Without {@code JAZZER_FUZZ} it replays the
 * inputs in {@code src/test/resources/org/mwlab/simplemq/protocol/FrameFuzzTestInputs/decode/}.
 *
 * <p>Input layout: byte 0 (low 4 bits) the number of cuts, then one byte per cut (a chunk of
 * 1-256 bytes), then the stream. Checked: no exception; every valid request encodes back to the
 * bytes it came from; every refusal has an error status; the results do not depend on where
 * the stream was cut; and when the stream ends between frames, a well-formed pop sent after it
 * comes out.
 */
class FrameFuzzTest {

  private static final int MAX_FRAME = 512;
  private static final int MAX_BODY = 256;
  private static final byte[] SENTINEL = Codec.frame(new Request.PopQueue(0x5e17, 1, 1));

  @FuzzTest
  void decode(final byte[] input) {
    if (input.length < 1) {
      return;
    }
    final int cuts = input[0] & 0x0f;
    if (input.length < 1 + cuts) {
      return;
    }
    final byte[] stream = new byte[input.length - 1 - cuts];
    System.arraycopy(input, 1 + cuts, stream, 0, stream.length);
    final FrameReader reader = new FrameReader(MAX_FRAME);
    final List<String> whole = feed(reader, stream, new int[] {Math.max(1, stream.length)});
    final boolean between = !reader.inFrame();
    final List<String> after = feed(reader, SENTINEL, new int[] {SENTINEL.length});
    if (between) {
      assertEquals(List.of("POP_QUEUE " + 0x5e17), after,
          "the stream ended between frames, but the pop after it did not come out");
    }
    final int[] sizes = new int[cuts + 1];
    for (int i = 0; i < cuts; i++) {
      sizes[i] = 1 + (input[1 + i] & 0xff);
    }
    sizes[cuts] = Math.max(1, stream.length);
    assertEquals(whole, feed(new FrameReader(MAX_FRAME), stream, sizes),
        "the results depend on where the stream was cut");
  }

  /** Feeds `stream` in chunks of the given sizes (the last repeats); returns what came out. */
  private static List<String> feed(final FrameReader reader, final byte[] stream,
      final int[] sizes) {
    final List<String> out = new ArrayList<>();
    int at = 0;
    int k = 0;
    while (at < stream.length) {
      final int n = Math.min(sizes[Math.min(k++, sizes.length - 1)], stream.length - at);
      final ByteBuffer chunk = ByteBuffer.wrap(stream, at, n).slice();
      at += n;
      for (FrameReader.Event e; (e = reader.next(chunk)) != null; ) {
        out.add(describe(e));
      }
    }
    return out;
  }

  /** One event, checked: a valid request re-encodes to its bytes; a refusal is an error. */
  private static String describe(final FrameReader.Event e) {
    if (e instanceof FrameReader.Oversized o) {
      assertTrue(o.length() > MAX_FRAME);
      return "oversized " + o.requestId();
    }
    final ByteBuffer body = ((FrameReader.Frame) e).body();
    final byte[] bytes = new byte[body.remaining()];
    body.duplicate().get(bytes);
    final Codec.Decoded d = Codec.request(body, MAX_BODY);
    if (d instanceof Codec.Valid v) {
      final byte[] again = Codec.frame(v.request());
      assertEquals(bytes.length, again.length - Codec.PREFIX);
      for (int i = 0; i < bytes.length; i++) {
        assertEquals(bytes[i], again[Codec.PREFIX + i], "re-encoded byte " + i);
      }
      return v.request().op() + " " + v.request().requestId();
    }
    final Reply.Failure f = ((Codec.Invalid) d).reply();
    assertTrue(f.status().isError());
    Codec.frame(f); // an error reply always encodes
    return f.status() + " " + f.requestId();
  }
}
