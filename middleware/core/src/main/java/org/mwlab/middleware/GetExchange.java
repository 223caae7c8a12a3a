package org.mwlab.middleware;

import java.nio.ByteBuffer;
import org.mwlab.common.Ascii;
import org.mwlab.common.memcached.ReplyParser;
import org.mwlab.middleware.ServerConnection.ServerException;

/**
 * A {@code get} exchange with one server over a blocking {@link ServerConnection}: the command for
 * some of a request's keys, then the reply read value by value with {@link ServerReplies}.
 * One per thread, reused.
 */
final class GetExchange {
  /** Where each value of a split request landed. */
  @FunctionalInterface
  interface Slots {
    /** The value of the client's key at {@code position} is {@code sink[start, end)}. */
    void value(int position, int start, int end);
  }

  private static final byte[] GET = Ascii.bytes("get");

  private final ByteSink cmd = new ByteSink(4 * 1024);
  private final ServerReplies replies = new ServerReplies();
  /** Whether a reply that passes through unchanged stays in the read buffer ({@link #relayed}). */
  private final boolean relay;
  private String failure;
  private int values;

  /**
   * @param relay whether a reply that passes through unchanged is left in the connection's read
   *     buffer, to be written to the client from there ({@link #relayed})
   */
  GetExchange(final boolean relay) {
    this.relay = relay;
  }

  /** Why the last exchange failed. */
  String failure() {
    return failure;
  }

  /** Values the last successful exchange returned. */
  int values() {
    return values;
  }

  /**
   * Sends {@code get} for the keys {@code keys[positions[i]]} (or {@code keys[i]} with {@code
   * positions} null), {@code from <= i < to}, and reads the reply: each VALUE block is appended to
   * {@code sink} and, with {@code slots}, reported under its key position. Returns false after a
   * failure ({@link #failure()}); a connection out of step is dropped.
   */
  boolean fetch(
      final ServerConnection c,
      final byte[][] keys,
      final int[] positions,
      final int from,
      final int to,
      final long deadline,
      final ByteSink sink,
      final Slots slots) {
    try {
      send(c, keys, positions, from, to, deadline);
      return receive(c, keys, positions, from, to, deadline, sink, slots);
    } catch (ServerException e) {
      failure = e.getMessage();
      return false;
    }
  }

  /** The first half of {@link #fetch}: sends the command. */
  void send(
      final ServerConnection c,
      final byte[][] keys,
      final int[] positions,
      final int from,
      final int to,
      final long deadline)
      throws ServerException {
    cmd.reset();
    command(cmd, keys, positions, from, to);
    c.send(cmd.array(), 0, cmd.length(), deadline);
  }

  /** Appends the {@code get} command of {@link #send} to {@code out}. */
  static void command(
      final ByteSink out, final byte[][] keys, final int[] positions, final int from,
      final int to) {
    out.append(GET);
    for (int i = from; i < to; i++) {
      out.append((byte) ' ');
      out.append(keys[positions == null ? i : positions[i]]);
    }
    out.crlf();
  }

  /**
   * The second half of {@link #fetch}: reads the reply. Without {@code slots} the reply passes
   * through unchanged: when this exchange relays, it is left in the connection's read buffer for
   * the caller to take with {@link #relayed} (or, if it could not stay there, it is in {@code
   * sink} without its END, as with copies).
   */
  boolean receive(
      final ServerConnection c,
      final byte[][] keys,
      final int[] positions,
      final int from,
      final int to,
      final long deadline,
      final ByteSink sink,
      final Slots slots)
      throws ServerException {
    values = 0;
    replies.expect(keys, positions, from, to);
    final ReplyBuffer buffer = c.replies();
    if (relay && slots == null) {
      buffer.relayFrom(sink);
    }
    boolean ok = false;
    try {
      ok = read(c, buffer, positions, deadline, sink, slots);
      return ok;
    } finally {
      if (!ok) {
        buffer.endRelay();
      }
    }
  }

  /**
   * The reply {@link #receive} left in {@code c}'s read buffer, to be written before the
   * connection is used again; null if it is in the sink.
   */
  ByteBuffer relayed(final ServerConnection c) {
    return c.replies().relayed();
  }

  private boolean read(
      final ServerConnection c,
      final ReplyBuffer buffer,
      final int[] positions,
      final long deadline,
      final ByteSink sink,
      final Slots slots)
      throws ServerException {
    while (true) {
      final int len = c.readLine(deadline);
      final byte[] b = c.line();
      final ServerReplies.Line line = replies.line(b, 0, len);
      if (line instanceof ServerReplies.End) {
        if (!buffer.lineEndedCrlf()) {
          // Relayed, the reply would end in the server's bare LF: the caller appends END.
          buffer.stopRelayBeforeLine();
        }
        return true;
      }
      if (line instanceof ServerReplies.Failure f) {
        return failed(c, f);
      }
      final ServerReplies.Value v = (ServerReplies.Value) line;
      if (!buffer.lineEndedCrlf()) {
        buffer.stopRelayBeforeLine();
      }
      final int blockStart = sink.length();
      if (!buffer.relaying()) {
        sink.append(b, 0, len);
        sink.crlf();
      }
      c.readInto(v.bytes() + 2, sink, deadline);
      final boolean crlf =
          buffer.relaying() ? buffer.takenEndsInCrlf() : ReplyParser.endsInCrlf(sink.array(),
              sink.length());
      if (!crlf) {
        return failed(c, ServerReplies.BAD_DATA_BLOCK);
      }
      if (slots != null) {
        slots.value(positions == null ? v.slot() : positions[v.slot()], blockStart, sink.length());
      }
      values++;
    }
  }

  private boolean failed(final ServerConnection c, final ServerReplies.Failure f) {
    if (f.outOfStep()) {
      c.markFailed(f.dropReason());
    }
    failure = f.message();
    return false;
  }
}
