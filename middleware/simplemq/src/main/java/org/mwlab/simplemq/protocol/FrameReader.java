package org.mwlab.simplemq.protocol;

import java.nio.ByteBuffer;

/**
 * Cuts length-prefixed frames out of one connection's byte stream, in whatever pieces the
 * stream arrives. A declared length is checked against the limit before anything is allocated,
 * and a frame's buffer grows with the bytes that arrived, not with the length declared. A frame
 * longer than the limit is not buffered: it is reported as soon as its request id is read and
 * the rest skipped, so the connection stays usable and the sender learns at once which request
 * was refused.
 */
public final class FrameReader {

  /** What {@link #next} found; null from it means it needs more bytes. */
  public sealed interface Event {}

  /** A whole frame's body (without its length prefix), positioned at its start. */
  public record Frame(ByteBuffer body) implements Event {}

  /**
   * A frame over the limit, reported once its first four body bytes, {@code requestId}, are
   * read; the rest of it is then skipped.
   */
  public record Oversized(int requestId, long length) implements Event {}

  private enum State {
    /** Reading the u32 length prefix. */
    LENGTH,
    /** Reading a body of known length. */
    BODY,
    /** Reading the request id of an oversized frame. */
    OVERSIZED_ID,
    /** Skipping the rest of an oversized frame. */
    SKIP
  }

  /** A body's first buffer; it doubles as bytes arrive, up to the length declared. */
  private static final int FIRST_BUFFER = 8 * 1024;

  private final int maxFrame;
  private final ByteBuffer length = ByteBuffer.allocate(Codec.PREFIX);
  private final ByteBuffer id = ByteBuffer.allocate(4);
  private State state = State.LENGTH;
  private ByteBuffer body;
  private int bodyLength;
  private long oversized;
  private long toSkip;

  /** @param maxFrame the longest body accepted, in bytes (at least a request header) */
  public FrameReader(final int maxFrame) {
    if (maxFrame < Codec.REQUEST_HEADER) {
      throw new IllegalArgumentException("a frame limit below " + Codec.REQUEST_HEADER);
    }
    this.maxFrame = maxFrame;
  }

  /** Whether a frame has begun and not ended: a connection closed now cut it. */
  public boolean inFrame() {
    return state != State.LENGTH || length.position() > 0;
  }

  /**
   * Consumes bytes from {@code in} until one frame (or oversized frame) is complete, and returns
   * it; returns null once {@code in} is empty without completing one.
   */
  public Event next(final ByteBuffer in) {
    while (in.hasRemaining()) {
      switch (state) {
        case LENGTH -> {
          copy(in, length);
          if (!length.hasRemaining()) {
            final long n = length.flip().getInt() & 0xffffffffL;
            length.clear();
            if (n > maxFrame) {
              oversized = n;
              toSkip = n - 4;
              id.clear();
              state = State.OVERSIZED_ID;
            } else {
              bodyLength = (int) n;
              body = ByteBuffer.allocate(Math.min(bodyLength, FIRST_BUFFER));
              state = State.BODY;
              if (n == 0) {
                return frame();
              }
            }
          }
        }
        case BODY -> {
          if (!body.hasRemaining()) {
            body = ByteBuffer.allocate((int) Math.min(bodyLength, 2L * body.capacity()))
                .put(body.flip());
          }
          copy(in, body);
          if (body.position() == bodyLength) {
            return frame();
          }
        }
        case OVERSIZED_ID -> {
          copy(in, id);
          if (!id.hasRemaining()) {
            state = State.SKIP;
            return new Oversized(id.flip().getInt(), oversized);
          }
        }
        case SKIP -> {
          final int n = (int) Math.min(toSkip, in.remaining());
          in.position(in.position() + n);
          toSkip -= n;
          if (toSkip == 0) {
            state = State.LENGTH;
          }
        }
      }
    }
    return null;
  }

  private Frame frame() {
    state = State.LENGTH;
    final ByteBuffer b = body.flip();
    body = null;
    return new Frame(b);
  }

  private static void copy(final ByteBuffer from, final ByteBuffer to) {
    final int n = Math.min(from.remaining(), to.remaining());
    final int limit = from.limit();
    from.limit(from.position() + n);
    to.put(from);
    from.limit(limit);
  }
}
