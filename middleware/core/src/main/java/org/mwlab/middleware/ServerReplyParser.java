package org.mwlab.middleware;

import java.nio.charset.StandardCharsets;

/**
 * Interprets memcached's replies as a worker reads them from one server connection.
 *
 * <p>The connection frames the stream: {@link #line} gets a reply line without its CRLF, and
 * after a {@link Value} the worker reads {@code bytes} + 2 bytes of data block and hands them to
 * {@link #dataBlock}. One parser follows one {@code get} exchange at a time ({@link #expect}); it
 * keeps no bytes of its own.
 *
 * <p>An error reply from the server ends the exchange with the stream still in step. Anything
 * else unexpected leaves the position in the stream unknown: the connection has to be dropped.
 */
final class ServerReplyParser {

  /** Largest data block accepted: memcached's largest item size ({@code -I 1024m}). */
  static final int MAX_VALUE_BYTES = 1 << 30;

  private static final byte[] END = RequestDecoder.ascii("END");
  private static final byte[] STORED = RequestDecoder.ascii("STORED");
  private static final byte[] VALUE = RequestDecoder.ascii("VALUE ");

  /** What one reply line means for the exchange in progress. */
  sealed interface Line permits End, Value, Failure {}

  /** {@code END}: the reply is complete. */
  record End() implements Line {}

  /**
   * A {@code VALUE} header for the requested key at {@code slot} (an index into the range given
   * to {@link #expect}); a data block of {@code bytes} bytes and CRLF follows.
   */
  record Value(int slot, int bytes) implements Line {}

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

  private byte[][] keys;
  private int[] positions;
  private int next;
  private int to;

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
    if (equals(b, start, end, END)) {
      return END_LINE;
    }
    if (!startsWith(b, start, end, VALUE)) {
      final String line = text(b, start, end);
      if (line.startsWith("SERVER_ERROR") || line.startsWith("CLIENT_ERROR")
          || line.equals("ERROR")) {
        return new Failure("replied " + line, null);
      }
      final String unexpected = "unexpected reply '" + line + "'";
      return new Failure(unexpected, unexpected);
    }
    // VALUE <key> <flags> <bytes> [<cas>]
    final int keyStart = start + VALUE.length;
    final int keyEnd = RequestDecoder.indexOf(b, keyStart, end, (byte) ' ');
    final int flagsEnd = keyEnd < 0 ? -1 : RequestDecoder.indexOf(b, keyEnd + 1, end, (byte) ' ');
    int bytesEnd = flagsEnd < 0 ? -1 : RequestDecoder.indexOf(b, flagsEnd + 1, end, (byte) ' ');
    if (bytesEnd < 0) {
      bytesEnd = end;
    }
    final long bytes =
        flagsEnd < 0
            ? -1
            : RequestDecoder.parseUnsigned(b, flagsEnd + 1, bytesEnd, MAX_VALUE_BYTES);
    if (bytes < 0) {
      return new Failure(
          "malformed VALUE line '" + text(b, start, end) + "'", "malformed VALUE line");
    }
    // The server answers in request order, skipping misses.
    while (next < to
        && !equals(b, keyStart, keyEnd, keys[positions == null ? next : positions[next]])) {
      next++;
    }
    if (next == to) {
      return new Failure("returned a key that was not requested", "unrequested key");
    }
    return new Value(next++, (int) bytes);
  }

  /** Checks the data block that ends at {@code b[end]}: null if it ends in CRLF. */
  static Failure dataBlock(final byte[] b, final int end) {
    if (b[end - 2] != '\r' || b[end - 1] != '\n') {
      return new Failure("sent a data block without CRLF", "bad data block");
    }
    return null;
  }

  /** True if {@code b[start, end)} is the reply to a successful {@code set}. */
  static boolean stored(final byte[] b, final int start, final int end) {
    return equals(b, start, end, STORED);
  }

  /** The start of a reply line, for error messages. */
  static String text(final byte[] b, final int from, final int to) {
    final int end = Math.min(to, from + 200);
    return new String(b, from, end - from, StandardCharsets.US_ASCII);
  }

  private static boolean equals(final byte[] b, final int from, final int to, final byte[] word) {
    if (to - from != word.length) {
      return false;
    }
    for (int i = 0; i < word.length; i++) {
      if (b[from + i] != word[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean startsWith(final byte[] b, final int from, final int to, final byte[] p) {
    if (to - from < p.length) {
      return false;
    }
    for (int i = 0; i < p.length; i++) {
      if (b[from + i] != p[i]) {
        return false;
      }
    }
    return true;
  }
}
