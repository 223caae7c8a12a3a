package org.mwlab.simplemq.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes and decodes the bodies of SimpleMQ's frames (the module's README gives the layout).
 * Every integer is big-endian. A frame is a u32 length and that many body bytes; {@link
 * FrameReader} cuts them out of a stream.
 */
public final class Codec {

  /** Bytes of the length prefix. */
  public static final int PREFIX = 4;
  /** Request id and operation. */
  public static final int REQUEST_HEADER = 5;
  /**
   * The most messages one read leases: its reply (at most 16 bodies of 4 KiB) stays within
   * the default --max-output of one client.
   */
  public static final int MAX_READ = 16;
  /** The most sends or acks one batch holds (its frame must also fit --max-frame). */
  public static final int MAX_BATCH = 64;
  /** The longest a pop or read waits for a message. */
  public static final int MAX_WAIT_MS = 60_000;

  private Codec() {}

  /** The outcome of decoding a request body. */
  public sealed interface Decoded {}

  /** A well-formed request. */
  public record Valid(Request request) implements Decoded {}

  /** A body that is not a request, with the error reply it gets. */
  public record Invalid(Reply.Failure reply) implements Decoded {}

  // --- requests -----------------------------------------------------------------------------

  /** The whole frame of a request, prefix included. */
  public static byte[] frame(final Request r) {
    final int length = REQUEST_HEADER + r.fieldBytes();
    final ByteBuffer b = ByteBuffer.allocate(PREFIX + length);
    b.putInt(length).putInt(r.requestId()).put((byte) r.op().code);
    r.writeFields(b);
    return b.array();
  }

  /**
   * Decodes a request body (the bytes after the length prefix).
   *
   * @param maxBody the longest message body accepted, in bytes
   */
  public static Decoded request(final ByteBuffer body, final int maxBody) {
    if (body.remaining() < REQUEST_HEADER) {
      final int id = body.remaining() >= 4 ? body.getInt(body.position()) : 0;
      return invalid(id, Status.MALFORMED,
          "a frame of " + body.remaining() + " bytes is shorter than a request header (5)");
    }
    final int id = body.getInt();
    final int code = body.get() & 0xff;
    final Op op = Op.of(code);
    if (op == null) {
      return invalid(id, Status.UNKNOWN_OP, "unknown operation " + code);
    }
    try {
      final Decoded d =
          switch (op) {
            case CREATE_CLIENT -> valid(new Request.CreateClient(id, body.getInt()));
            case DELETE_CLIENT -> valid(new Request.DeleteClient(id, body.getInt()));
            case CREATE_QUEUE -> valid(new Request.CreateQueue(id));
            case DELETE_QUEUE -> valid(new Request.DeleteQueue(id, body.getInt()));
            case SEND -> send(id, body, maxBody, false);
            case SEND_ONCE -> send(id, body, maxBody, true);
            case PEEK_QUEUE -> valid(new Request.PeekQueue(id, body.getInt(), body.getInt()));
            case POP_QUEUE -> valid(new Request.PopQueue(id, body.getInt(), body.getInt()));
            case POP_FROM_SENDER ->
                valid(new Request.PopFromSender(id, body.getInt(), body.getInt()));
            case QUERY_QUEUES -> valid(new Request.QueryQueues(id, body.getInt()));
            case READ -> read(id, body);
            case ACK -> valid(new Request.Ack(id, body.getLong()));
            case NACK -> valid(new Request.Nack(id, body.getLong()));
            case SEND_BATCH -> sendBatch(id, body, maxBody);
            case POP_BATCH -> popBatch(id, body);
            case ACK_BATCH -> ackBatch(id, body);
            case QUEUE_METRICS -> valid(new Request.QueueMetrics(id, body.getInt()));
            case POP_WAIT -> waiting(id, new Request.PopWait(id, body.getInt(), body.getInt(),
                body.getInt()));
            case READ_WAIT -> {
              final Request.ReadWait r = new Request.ReadWait(id, body.getInt(), body.getInt(),
                  body.getInt(), body.getInt(), body.getInt());
              yield read(id, r.now()) instanceof Invalid bad ? bad : waiting(id, r);
            }
          };
      if (d instanceof Valid && body.hasRemaining()) {
        return invalid(id, Status.MALFORMED,
            body.remaining() + " bytes after the fields of " + name(op));
      }
      return d;
    } catch (final BufferUnderflowException e) {
      return invalid(id, Status.MALFORMED, "the frame ends inside the fields of " + name(op));
    }
  }

  private static Decoded send(final int id, final ByteBuffer body, final int maxBody,
      final boolean once) {
    final int sender = body.getInt();
    final int receiver = body.getInt();
    final int queue = body.getInt();
    final long sentAt = body.getLong();
    final long key = once ? body.getLong() : 0;
    final long length = body.getInt() & 0xffffffffL;
    if (length > maxBody) {
      return invalid(id, Status.PAYLOAD_TOO_LARGE,
          "a body of " + length + " bytes is longer than the " + maxBody + " accepted");
    }
    if (length != body.remaining()) {
      return invalid(id, Status.MALFORMED,
          "a body of " + length + " bytes declared, " + body.remaining() + " sent");
    }
    final byte[] text = new byte[(int) length];
    body.get(text);
    if (!isAscii(text)) {
      return invalid(id, Status.MALFORMED, "the body is not ASCII");
    }
    return valid(once ? new Request.SendOnce(id, sender, receiver, queue, sentAt, key, text)
        : new Request.Send(id, sender, receiver, queue, sentAt, text));
  }

  private static Decoded sendBatch(final int id, final ByteBuffer body, final int maxBody) {
    final int sender = body.getInt();
    final int receiver = body.getInt();
    final int queue = body.getInt();
    final long sentAt = body.getLong();
    final int m = body.getShort() & 0xffff;
    if (m < 1 || m > MAX_BATCH) {
      return invalid(id, Status.MALFORMED, "a batch of " + m + " sends: from 1 to " + MAX_BATCH);
    }
    final List<byte[]> bodies = new ArrayList<>(m);
    for (int i = 0; i < m; i++) {
      final long length = body.getInt() & 0xffffffffL;
      if (length > maxBody) {
        return invalid(id, Status.PAYLOAD_TOO_LARGE, "body " + (i + 1) + " of the batch has "
            + length + " bytes, more than the " + maxBody + " accepted");
      }
      if (length > body.remaining()) {
        return invalid(id, Status.MALFORMED, "body " + (i + 1) + " of the batch declares "
            + length + " bytes, " + body.remaining() + " sent");
      }
      final byte[] text = new byte[(int) length];
      body.get(text);
      if (!isAscii(text)) {
        return invalid(id, Status.MALFORMED, "body " + (i + 1) + " of the batch is not ASCII");
      }
      bodies.add(text);
    }
    return valid(new Request.SendBatch(id, sender, receiver, queue, sentAt, bodies));
  }

  private static Decoded popBatch(final int id, final ByteBuffer body) {
    final Request.PopBatch r =
        new Request.PopBatch(id, body.getInt(), body.getInt(), body.getInt());
    if (r.max() < 1 || r.max() > MAX_READ) {
      return invalid(id, Status.MALFORMED,
          "a batch pop of " + r.max() + " messages: from 1 to " + MAX_READ);
    }
    return valid(r);
  }

  private static Decoded ackBatch(final int id, final ByteBuffer body) {
    final int m = body.getShort() & 0xffff;
    if (m < 1 || m > MAX_BATCH) {
      return invalid(id, Status.MALFORMED, "a batch of " + m + " acks: from 1 to " + MAX_BATCH);
    }
    final long[] ids = new long[m];
    for (int i = 0; i < m; i++) {
      ids[i] = body.getLong();
    }
    return valid(new Request.AckBatch(id, ids));
  }

  private static Decoded waiting(final int id, final Request.Waiting r) {
    if (r.waitMs() < 0 || r.waitMs() > MAX_WAIT_MS) {
      return invalid(id, Status.MALFORMED,
          "a wait of " + r.waitMs() + " ms: from 0 to " + MAX_WAIT_MS);
    }
    return valid(r);
  }

  private static Decoded read(final int id, final ByteBuffer body) {
    return read(id,
        new Request.Read(id, body.getInt(), body.getInt(), body.getInt(), body.getInt()));
  }

  private static Decoded read(final int id, final Request r0) {
    final Request.Read r = (Request.Read) r0;
    if (r.visibilityMs() < 0) {
      return invalid(id, Status.MALFORMED, "a visibility timeout of " + r.visibilityMs() + " ms");
    }
    if (r.max() < 1 || r.max() > MAX_READ) {
      return invalid(id, Status.MALFORMED,
          "a read of " + r.max() + " messages: from 1 to " + MAX_READ);
    }
    return valid(r);
  }

  private static String name(final Op op) {
    return op.name().toLowerCase(java.util.Locale.ROOT);
  }

  private static Valid valid(final Request r) {
    return new Valid(r);
  }

  private static Invalid invalid(final int id, final Status status, final String text) {
    return new Invalid(new Reply.Failure(id, status, text));
  }

  static boolean isAscii(final byte[] b) {
    for (final byte x : b) {
      if (x < 0) {
        return false;
      }
    }
    return true;
  }

  // --- replies ------------------------------------------------------------------------------

  /** The whole frame of a reply, prefix included. */
  public static byte[] frame(final Reply r) {
    final int length = 4 + 1 + r.resultBytes();
    final ByteBuffer b = ByteBuffer.allocate(PREFIX + length);
    b.putInt(length).putInt(r.requestId()).put((byte) r.status().code);
    r.writeResult(b);
    return b.array();
  }

  /** Thrown for bytes that are not a reply: the peer does not speak this protocol. */
  public static final class NotAReply extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotAReply(final String why) {
      super(why);
    }
  }

  /** Decodes a reply body (the bytes after the length prefix). */
  public static Reply reply(final ByteBuffer body) {
    try {
      final int id = body.getInt();
      final int code = body.get() & 0xff;
      final Status status = Status.of(code);
      if (status == null) {
        throw new NotAReply("unknown status " + code);
      }
      final Reply r;
      if (status == Status.EMPTY) {
        r = new Reply.Empty(id);
      } else if (status == Status.NOT_LEASED) {
        r = new Reply.NotLeased(id);
      } else if (status.isError()) {
        final byte[] text = new byte[body.getShort() & 0xffff];
        body.get(text);
        r = new Reply.Failure(id, status, new String(text, StandardCharsets.UTF_8));
      } else {
        final int shape = body.get() & 0xff;
        r =
            switch (shape) {
              case Reply.SHAPE_NONE -> new Reply.Done(id);
              case Reply.SHAPE_ID -> new Reply.Created(id, body.getLong());
              case Reply.SHAPE_MESSAGE -> new Reply.Delivered(id, message(body, false).message());
              case Reply.SHAPE_LEASED -> {
                final int n = body.getInt();
                // A leased message takes at least 36 bytes: a count beyond them is a lie.
                if (n < 1 || (long) n * 36 > body.remaining()) {
                  throw new NotAReply(n + " leased messages declared, " + body.remaining()
                      + " bytes sent");
                }
                final List<LeasedMessage> leased = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                  leased.add(message(body, true));
                }
                yield new Reply.Leased(id, leased);
              }
              case Reply.SHAPE_METRICS -> new Reply.Metrics(id, body.getLong(), body.getLong(),
                  body.getLong(), body.getLong());
              case Reply.SHAPE_IDS -> {
                final int n = body.getInt();
                if (n < 0 || (long) n * 8 > body.remaining()) {
                  throw new NotAReply(n + " ids declared, " + body.remaining() + " bytes sent");
                }
                final long[] ids = new long[n];
                for (int i = 0; i < n; i++) {
                  ids[i] = body.getLong();
                }
                yield new Reply.Ids(id, ids);
              }
              case Reply.SHAPE_MESSAGES -> {
                final int n = body.getInt();
                // A message takes at least 32 bytes: a count beyond them is a lie.
                if (n < 1 || (long) n * 32 > body.remaining()) {
                  throw new NotAReply(n + " messages declared, " + body.remaining()
                      + " bytes sent");
                }
                final List<Message> popped = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                  popped.add(message(body, false).message());
                }
                yield new Reply.Popped(id, popped);
              }
              case Reply.SHAPE_QUEUES -> {
                final int n = body.getInt();
                if (n < 0 || (long) n * 4 > body.remaining()) {
                  throw new NotAReply(n + " queues declared, " + body.remaining() + " bytes sent");
                }
                final int[] queues = new int[n];
                for (int i = 0; i < n; i++) {
                  queues[i] = body.getInt();
                }
                yield new Reply.Queues(id, queues);
              }
              default -> throw new NotAReply("unknown result shape " + shape);
            };
      }
      if (body.hasRemaining()) {
        throw new NotAReply(body.remaining() + " bytes after a reply");
      }
      return r;
    } catch (final BufferUnderflowException e) {
      throw new NotAReply("the frame ends inside a reply");
    }
  }

  /** A message of a reply; a leased one has its i32 delivery count before its body. */
  private static LeasedMessage message(final ByteBuffer body, final boolean leased) {
    final long msg = body.getLong();
    final int sender = body.getInt();
    final int receiver = body.getInt();
    final int queue = body.getInt();
    final long sentAt = body.getLong();
    final int deliveries = leased ? body.getInt() : 0;
    final int length = body.getInt();
    if (length < 0 || length > body.remaining()) {
      throw new NotAReply("a message body of " + length + " bytes declared, " + body.remaining()
          + " sent");
    }
    final byte[] text = new byte[length];
    body.get(text);
    return new LeasedMessage(new Message(msg, sender, receiver, queue, sentAt, text), deliveries);
  }
}
