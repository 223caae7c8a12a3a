package org.mwlab.simplemq.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The frames of SimpleMQ's wire protocol: what is sent is what is read, and bad frames. */
class CodecTest {

  private static final int MAX_BODY = 4096;

  private static byte[] ascii(final String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /** The body of a whole frame, cut out by a reader as a connection would. */
  private static ByteBuffer body(final byte[] frame) {
    final FrameReader.Event e = new FrameReader(1 << 20).next(ByteBuffer.wrap(frame));
    return assertInstanceOf(FrameReader.Frame.class, e).body();
  }

  private static Request roundTrip(final Request r) {
    final Codec.Decoded d = Codec.request(body(Codec.frame(r)), MAX_BODY);
    return assertInstanceOf(Codec.Valid.class, d).request();
  }

  private static Reply.Failure rejected(final byte[] frame) {
    final Codec.Decoded d = Codec.request(body(frame), MAX_BODY);
    return assertInstanceOf(Codec.Invalid.class, d).reply();
  }

  @Test
  void everyRequestReadsBackAsSent() {
    assertEquals(new Request.CreateClient(7, 42), roundTrip(new Request.CreateClient(7, 42)));
    assertEquals(new Request.DeleteClient(8, 42), roundTrip(new Request.DeleteClient(8, 42)));
    assertEquals(new Request.CreateQueue(9), roundTrip(new Request.CreateQueue(9)));
    assertEquals(new Request.DeleteQueue(10, 3), roundTrip(new Request.DeleteQueue(10, 3)));
    assertEquals(new Request.PeekQueue(11, 1, 2), roundTrip(new Request.PeekQueue(11, 1, 2)));
    assertEquals(new Request.PopQueue(12, 1, 2), roundTrip(new Request.PopQueue(12, 1, 2)));
    assertEquals(new Request.PopFromSender(13, 5, 2),
        roundTrip(new Request.PopFromSender(13, 5, 2)));
    assertEquals(new Request.QueryQueues(14, 2), roundTrip(new Request.QueryQueues(14, 2)));
    final Request.Send s = (Request.Send) roundTrip(
        new Request.Send(15, 1, 2, 3, 1_700_000_000_000_000L, ascii("1:0:xxxx")));
    assertEquals(List.of(15, 1, 2, 3), List.of(s.requestId(), s.sender(), s.receiver(), s.queue()));
    assertEquals(1_700_000_000_000_000L, s.sentAtMicros());
    assertArrayEquals(ascii("1:0:xxxx"), s.body());
    final Request.SendOnce once = (Request.SendOnce) roundTrip(s.once(1L << 40));
    assertEquals(Op.SEND_ONCE, once.op());
    assertEquals(List.of(15, 1, 2, 3), List.of(once.requestId(), once.sender(), once.receiver(),
        once.queue()));
    assertEquals(1L << 40, once.key());
    assertArrayEquals(ascii("1:0:xxxx"), once.body());
    assertEquals(s.once(1L << 40).retry(16).key(), once.key());
  }

  @Test
  void everyReplyReadsBackAsSent() {
    final Message m = new Message(99L, 1, 2, 3, 123L, ascii("hello"));
    final Reply.Delivered d =
        (Reply.Delivered) Codec.reply(body(Codec.frame(new Reply.Delivered(5, m))));
    assertEquals(5, d.requestId());
    assertEquals(List.of(99L, 1L, 2L, 3L, 123L), List.of(d.message().id(),
        (long) d.message().sender(), (long) d.message().receiver(), (long) d.message().queue(),
        d.message().sentAtMicros()));
    assertEquals("hello", d.message().text());
    assertEquals(new Reply.Done(1), Codec.reply(body(Codec.frame(new Reply.Done(1)))));
    assertEquals(new Reply.Created(2, 1L << 40),
        Codec.reply(body(Codec.frame(new Reply.Created(2, 1L << 40)))));
    assertEquals(new Reply.Empty(3), Codec.reply(body(Codec.frame(new Reply.Empty(3)))));
    assertArrayEquals(new int[] {1, 4},
        ((Reply.Queues) Codec.reply(body(Codec.frame(new Reply.Queues(4, new int[] {1, 4})))))
            .queues());
    final Reply.Failure f = (Reply.Failure) Codec.reply(body(Codec.frame(
        new Reply.Failure(6, Status.UNKNOWN_REFERENCE, "no client 9"))));
    assertEquals(Status.UNKNOWN_REFERENCE, f.status());
    assertEquals("no client 9", f.text());
  }

  @Test
  void badFramesGetTheirOwnErrorsWithTheirRequestId() {
    // An unknown operation.
    final ByteBuffer unknown = ByteBuffer.allocate(9).putInt(5).putInt(77).put((byte) 99);
    assertEquals(Status.UNKNOWN_OP, rejected(unknown.array()).status());
    assertEquals(77, rejected(unknown.array()).requestId());
    // Fields cut short, and bytes after the fields.
    final byte[] pop = Codec.frame(new Request.PopQueue(78, 1, 2));
    final byte[] cut = ByteBuffer.allocate(pop.length - 1).putInt(pop.length - 5)
        .put(pop, 4, pop.length - 5).array();
    assertEquals(Status.MALFORMED, rejected(cut).status());
    assertEquals(78, rejected(cut).requestId());
    final byte[] longer = ByteBuffer.allocate(pop.length + 1).putInt(pop.length - 3)
        .put(pop, 4, pop.length - 4).put((byte) 0).array();
    assertEquals(Status.MALFORMED, rejected(longer).status());
    // A body over the limit, a body that is not ASCII, a declared length that lies.
    final byte[] big = Codec.frame(new Request.Send(79, 1, 2, 1, 0, new byte[MAX_BODY + 1]));
    assertEquals(Status.PAYLOAD_TOO_LARGE, rejected(big).status());
    final byte[] utf8 = Codec.frame(new Request.Send(80, 1, 2, 1, 0,
        "é".getBytes(StandardCharsets.UTF_8)));
    assertEquals(Status.MALFORMED, rejected(utf8).status());
    // A frame too short for a header.
    assertEquals(Status.MALFORMED, rejected(new byte[] {0, 0, 0, 2, 1, 2}).status());
  }

  @Test
  void anOversizedFrameIsSkippedAndTheNextOneStillRead() {
    final FrameReader reader = new FrameReader(64);
    final byte[] pop = Codec.frame(new Request.PopQueue(43, 1, 1));
    final ByteBuffer stream = ByteBuffer.allocate(4 + 200 + pop.length);
    stream.putInt(200).putInt(4242).put(new byte[196]);
    stream.put(pop);
    stream.flip();
    final FrameReader.Oversized o =
        assertInstanceOf(FrameReader.Oversized.class, reader.next(stream));
    assertEquals(4242, o.requestId());
    assertEquals(200, o.length());
    final ByteBuffer next = assertInstanceOf(FrameReader.Frame.class, reader.next(stream)).body();
    assertEquals(new Request.PopQueue(43, 1, 1),
        ((Codec.Valid) Codec.request(next, MAX_BODY)).request());
    assertNull(reader.next(stream));
  }

  @Test
  void framesCutAnywhereComeOutWhole() {
    final List<byte[]> frames = List.of(Codec.frame(new Request.CreateClient(1, 1)),
        Codec.frame(new Request.Send(2, 1, 2, 1, 5, ascii("1:0:xx"))),
        Codec.frame(new Request.CreateQueue(3)));
    final ByteBuffer all = ByteBuffer.allocate(frames.stream().mapToInt(f -> f.length).sum());
    frames.forEach(all::put);
    final byte[] stream = all.array();
    for (int piece = 1; piece <= stream.length; piece++) {
      final FrameReader reader = new FrameReader(1024);
      final List<Integer> ids = new ArrayList<>();
      for (int at = 0; at < stream.length; at += piece) {
        final ByteBuffer chunk =
            ByteBuffer.wrap(stream, at, Math.min(piece, stream.length - at)).slice();
        for (FrameReader.Event e; (e = reader.next(chunk)) != null; ) {
          final Codec.Decoded d = Codec.request(((FrameReader.Frame) e).body(), MAX_BODY);
          ids.add(assertInstanceOf(Codec.Valid.class, d).request().requestId());
        }
      }
      assertEquals(List.of(1, 2, 3), ids, "pieces of " + piece);
    }
  }

  @Test
  void aReplyThatIsNotOneIsRefused() {
    assertThrows(Codec.NotAReply.class,
        () -> Codec.reply(ByteBuffer.wrap(new byte[] {0, 0, 0, 1, (byte) 200})));
    assertThrows(Codec.NotAReply.class, () -> Codec.reply(ByteBuffer.wrap(new byte[] {0, 0})));
  }

  @Test
  void theLeaseFramesReadBackAsSent() {
    assertEquals(new Request.Read(20, 1, 2, 30_000, 16),
        roundTrip(new Request.Read(20, 1, 2, 30_000, 16)));
    assertEquals(new Request.Ack(21, 1L << 40), roundTrip(new Request.Ack(21, 1L << 40)));
    assertEquals(new Request.Nack(22, 7L), roundTrip(new Request.Nack(22, 7L)));
    final List<LeasedMessage> sent = List.of(
        new LeasedMessage(new Message(5L, 1, 2, 3, 10L, ascii("1:0:x")), 1),
        new LeasedMessage(new Message(6L, 1, 2, 3, 11L, ascii("1:1:xx")), 3));
    final Reply.Leased back = assertInstanceOf(Reply.Leased.class,
        Codec.reply(body(Codec.frame(new Reply.Leased(23, sent)))));
    assertEquals(23, back.requestId());
    assertEquals(List.of(5L, 6L), back.messages().stream().map(l -> l.message().id()).toList());
    assertEquals(List.of(1, 3), back.messages().stream().map(LeasedMessage::deliveries).toList());
    assertArrayEquals(ascii("1:1:xx"), back.messages().get(1).message().body());
    assertEquals(Status.NOT_LEASED,
        Codec.reply(body(Codec.frame(new Reply.NotLeased(24)))).status());
  }

  @Test
  void aReadOutsideItsBoundsIsMalformed() {
    for (final Request.Read r : List.of(new Request.Read(30, 1, 1, 1000, 0),
        new Request.Read(31, 1, 1, 1000, Codec.MAX_READ + 1),
        new Request.Read(32, 1, 1, -1, 1))) {
      final Reply.Failure f = rejected(Codec.frame(r));
      assertEquals(Status.MALFORMED, f.status());
      assertEquals(r.requestId(), f.requestId());
    }
  }
}
