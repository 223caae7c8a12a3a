package org.mwlab.middleware;

import org.mwlab.common.Ascii;
import org.mwlab.common.memcached.ReplyParser;

/**
 * What memcached's replies mean for a worker's {@code get} exchange with one server: the shared
 * {@link ReplyParser} classifies each line, this class checks it against the keys asked for.
 *
 * <p>The connection frames the stream: {@link #line} gets a reply line without its CRLF, and
 * after a {@link Value} the worker reads {@code bytes} + 2 bytes of data block and hands them to
 * {@link #dataBlock}. One instance follows one exchange at a time ({@link #expect}); it keeps no
 * bytes of its own.
 *
 * <p>An error reply from the server ends the exchange with the stream still in step. Anything
 * else unexpected leaves the position in the stream unknown: the connection has to be dropped.
 */
final class ServerReplies {

  /** Largest data block accepted: memcached's largest item size ({@code -I 1024m}). */
  static final int MAX_VALUE_BYTES = 1 << 30;

  /** What one reply line means for the exchange in progress. */
  sealed interface Line permits End, Value, Failure {}

  /** {@code END}: the reply is complete. */
  record End() implements Line {}

  /**
   * A {@code VALUE} header for the requested key at {@code slot} (an index into the range given
   * to {@link #expect}); a data block of {@code bytes} bytes and CRLF follows. One per instance,
   * reused for every value (no allocation per value): read it before the next line.
   */
  static final class Value implements Line {
    private int slot;
    private int bytes;

    int slot() {
      return slot;
    }

    int bytes() {
      return bytes;
    }
  }

  /**
   * The exchange failed.
   *
   * @param message what the server did, for the client's SERVER_ERROR
   * @param dropReason why the connection is out of step and must be dropped; null if it is not
   */
  record Failure(String message, String dropReason) implements Line {
    boolean outOfStep() {
      return dropReason != null;
    }
  }

  private static final End END_LINE = new End();

  private final ReplyParser parser = newParser();
  private final Value value = new Value();
  private byte[][] keys;
  private int[] positions;
  private int next;
  private int to;

  /** A parser of the servers' replies with the middleware's limit. */
  static ReplyParser newParser() {
    return new ReplyParser(MAX_VALUE_BYTES);
  }

  /**
   * Starts an exchange for the keys {@code keys[positions[i]]} (or {@code keys[i]} with {@code
   * positions} null), {@code from <= i < to}, in the order they were sent.
   */
  void expect(final byte[][] keys, final int[] positions, final int from, final int to) {
    this.keys = keys;
    this.positions = positions;
    this.next = from;
    this.to = to;
  }

  /** Interprets the reply line {@code b[start, end)} (CRLF removed). */
  Line line(final byte[] b, final int start, final int end) {
    return switch (parser.parse(b, start, end)) {
      case END -> END_LINE;
      case VALUE -> value(b);
      case MALFORMED_VALUE -> new Failure(
          "malformed VALUE line '" + text(b, start, end) + "'", "malformed VALUE line");
      case ERROR, CLIENT_ERROR, SERVER_ERROR -> new Failure("replied " + text(b, start, end), null);
      default -> {
        final String unexpected = "unexpected reply '" + text(b, start, end) + "'";
        yield new Failure(unexpected, unexpected);
      }
    };
  }

  /** The VALUE header just parsed: the server answers in request order, skipping misses. */
  private Line value(final byte[] b) {
    final int keyStart = parser.keyStart();
    final int keyEnd = parser.keyEnd();
    while (next < to
        && !Ascii.equals(b, keyStart, keyEnd, keys[positions == null ? next : positions[next]])) {
      next++;
    }
    if (next == to) {
      return new Failure("returned a key that was not requested", "unrequested key");
    }
    value.slot = next++;
    value.bytes = parser.valueBytes();
    return value;
  }

  /** A data block that does not end in CRLF. */
  static final Failure BAD_DATA_BLOCK =
      new Failure("sent a data block without CRLF", "bad data block");

  /** Checks the data block that ends at {@code b[end]}: null if it ends in CRLF. */
  static Failure dataBlock(final byte[] b, final int end) {
    return ReplyParser.endsInCrlf(b, end) ? null : BAD_DATA_BLOCK;
  }

  /** The start of a reply line, for error messages. */
  static String text(final byte[] b, final int from, final int to) {
    return Ascii.text(b, from, to, 200);
  }
}
