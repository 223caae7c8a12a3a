package org.mwlab.simplemq.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * {@link FrameReader}'s limit: a declared length is checked before anything is allocated, an
 * oversized frame is refused as soon as its request id arrived, and a frame's buffer grows with
 * what arrived.
 */
class FrameReaderTest {

  private static final int MAX_FRAME = 64 * 1024;

  @Test
  void theLongestLengthsAreRefusedAtTheirRequestId() {
    for (final long length : new long[] {Integer.MAX_VALUE, 0xffffffffL, MAX_FRAME + 1}) {
      final FrameReader reader = new FrameReader(MAX_FRAME);
      final ByteBuffer head = ByteBuffer.allocate(8).putInt((int) length).putInt(77).flip();
      final FrameReader.Oversized o =
          assertInstanceOf(FrameReader.Oversized.class, reader.next(head));
      assertEquals(77, o.requestId());
      assertEquals(length, o.length());
      // The rest is skipped, not buffered: the reader is inside the frame until it ends.
      assertNull(reader.next(ByteBuffer.allocate(4096)));
      assertTrue(reader.inFrame());
    }
  }

  @Test
  void anOversizedFrameIsSkippedAndTheNextOneRead() {
    final FrameReader reader = new FrameReader(MAX_FRAME);
    final int length = MAX_FRAME + 10;
    final ByteBuffer in = ByteBuffer.allocate(4 + length + 17);
    in.putInt(length).putInt(5).position(4 + length);
    in.put(Codec.frame(new Request.PopQueue(6, 1, 2))).flip();
    assertEquals(5, assertInstanceOf(FrameReader.Oversized.class, reader.next(in)).requestId());
    final FrameReader.Frame f = assertInstanceOf(FrameReader.Frame.class, reader.next(in));
    final Codec.Valid v = assertInstanceOf(Codec.Valid.class, Codec.request(f.body(), 4096));
    assertEquals(new Request.PopQueue(6, 1, 2), v.request());
    assertFalse(reader.inFrame());
  }

  @Test
  void aLongFrameArrivingInPiecesComesOutWhole() {
    final byte[] body = new byte[MAX_FRAME];
    for (int i = 0; i < body.length; i++) {
      body[i] = (byte) (i * 31);
    }
    final ByteBuffer stream = ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body);
    stream.flip();
    final FrameReader reader = new FrameReader(MAX_FRAME);
    FrameReader.Event e = null;
    while (stream.hasRemaining()) {
      final int n = Math.min(1000, stream.remaining());
      final ByteBuffer piece = stream.slice(stream.position(), n);
      stream.position(stream.position() + n);
      final FrameReader.Event got = reader.next(piece);
      if (got != null) {
        assertNull(e, "one frame only");
        e = got;
      }
    }
    final ByteBuffer out = assertInstanceOf(FrameReader.Frame.class, e).body();
    final byte[] read = new byte[out.remaining()];
    out.get(read);
    assertArrayEquals(body, read);
  }
}
