package org.mwlab.middleware;

import org.mwlab.common.Ascii;
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
  private String failure;
  private int values;

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

  /** The second half of {@link #fetch}: reads the reply. */
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
    while (true) {
      final int end = c.readLine(deadline);
      final byte[] b = c.buffer();
      final int start = c.lineStart();
      final ServerReplies.Line line = replies.line(b, start, end);
      if (line instanceof ServerReplies.End) {
        return true;
      }
      if (line instanceof ServerReplies.Failure f) {
        return failed(c, f);
      }
      final ServerReplies.Value v = (ServerReplies.Value) line;
      final int blockStart = sink.length();
      sink.append(b, start, end - start);
      sink.crlf();
      c.readInto(v.bytes() + 2, sink, deadline);
      final ServerReplies.Failure bad = ServerReplies.dataBlock(sink.array(), sink.length());
      if (bad != null) {
        return failed(c, bad);
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
