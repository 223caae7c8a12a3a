package org.mwlab.middleware;

import org.mwlab.common.Ascii;

/**
 * Incremental decoder of the memcached text protocol for one client connection.
 *
 * <p>It reads from a byte range and reports how many bytes it consumed. A request split over
 * several reads yields {@link NeedMore} until it is complete. After a malformed request it
 * resynchronises where the protocol allows: it skips a declared data block, or the rest of an
 * over-long {@code get} line. Where the stream cannot be resynchronised the reply asks the caller
 * to close the connection.
 */
public final class RequestDecoder {

  /** The outcome of one {@link #decode} call; {@code consumed} bytes may be dropped. */
  public sealed interface Result permits NeedMore, Command, Reply {
    int consumed();
  }

  /**
   * Not enough bytes for the next request.
   *
   * @param needed bytes the next request needs from the new start, 0 if not known yet
   */
  public record NeedMore(int consumed, int needed) implements Result {}

  /** A request to forward. */
  public record Command(
      RequestType type, byte[][] keys, byte[] payload, boolean noreply, int consumed)
      implements Result {}

  /** A reply the middleware gives itself (errors, version, quit). */
  public record Reply(byte[] reply, boolean close, int consumed) implements Result {}

  static final byte[] ERROR = Ascii.bytes("ERROR\r\n");
  private static final byte[] BAD_FORMAT = Ascii.bytes("CLIENT_ERROR bad command line format\r\n");
  private static final byte[] BAD_CHUNK = Ascii.bytes("CLIENT_ERROR bad data chunk\r\n");
  private static final byte[] KEY_TOO_LONG = Ascii.bytes("CLIENT_ERROR key too long\r\n");
  private static final byte[] LINE_TOO_LONG = Ascii.bytes("CLIENT_ERROR line too long\r\n");
  private static final byte[] VERSION = Ascii.bytes("VERSION mwlab-middleware-1.0.0\r\n");
  private static final byte[] NOTHING = new byte[0];

  private final int maxKeyLength;
  private final int maxValueBytes;
  private final int maxLineLength;
  private final int maxKeysPerGet;
  private final byte[] valueTooLarge;
  private final byte[] tooManyKeys;

  private final int[] tokStart;
  private final int[] tokEnd;

  /** Bytes of a rejected data block still to skip. */
  private long swallow;
  /** Skipping the rest of an over-long get line. */
  private boolean discardingLine;

  public RequestDecoder(
      final int maxKeyLength,
      final int maxValueBytes,
      final int maxLineLength,
      final int maxKeysPerGet) {
    this.maxKeyLength = maxKeyLength;
    this.maxValueBytes = maxValueBytes;
    this.maxLineLength = maxLineLength;
    this.maxKeysPerGet = maxKeysPerGet;
    this.valueTooLarge =
        Ascii.bytes("CLIENT_ERROR value too large (max " + maxValueBytes + " bytes)\r\n");
    this.tooManyKeys = Ascii.bytes("CLIENT_ERROR too many keys (max " + maxKeysPerGet + ")\r\n");
    // Room for the longest valid command: get with all its keys, or set with noreply (6).
    final int maxTokens = Math.max(maxKeysPerGet + 2, 6);
    this.tokStart = new int[maxTokens];
    this.tokEnd = new int[maxTokens];
  }

  public static RequestDecoder of(final Config c) {
    return new RequestDecoder(c.maxKeyLength(), c.maxValueBytes(), c.maxLineLength(),
        c.maxKeysPerGet());
  }

  /** Largest buffer a single request can need. */
  public int maxRequestBytes() {
    return maxLineLength + 2 + maxValueBytes + 2;
  }

  /** True when no data block is being skipped and no over-long line discarded. */
  boolean idle() {
    return swallow == 0 && !discardingLine;
  }

  /** Decodes at most one request from {@code buf[start, end)}. */
  public Result decode(final byte[] buf, final int start, final int end) {
    int p = start;
    if (swallow > 0) {
      final int n = (int) Math.min(swallow, end - p);
      swallow -= n;
      p += n;
      if (swallow > 0) {
        return new NeedMore(p - start, 0);
      }
    }
    if (discardingLine) {
      final int nl = Ascii.indexOf(buf, p, end, (byte) '\n');
      if (nl < 0) {
        return new NeedMore(end - start, 0);
      }
      discardingLine = false;
      return new Reply(LINE_TOO_LONG, false, nl + 1 - start);
    }
    if (p == end) {
      return new NeedMore(p - start, 0);
    }
    final int window = Math.min(end, p + maxLineLength + 2);
    final int nl = Ascii.indexOf(buf, p, window, (byte) '\n');
    if (nl < 0) {
      if (end - p < maxLineLength + 2) {
        return new NeedMore(p - start, 0);
      }
      if (Ascii.startsWith(buf, p, end, "get ")) {
        final int later = Ascii.indexOf(buf, window, end, (byte) '\n');
        if (later >= 0) {
          return new Reply(LINE_TOO_LONG, false, later + 1 - start);
        }
        discardingLine = true;
        return new NeedMore(end - start, 0);
      }
      return new Reply(LINE_TOO_LONG, true, end - start);
    }
    int lineEnd = nl;
    if (lineEnd > p && buf[lineEnd - 1] == '\r') {
      lineEnd--;
    }
    if (lineEnd - p > maxLineLength) {
      final boolean get = Ascii.startsWith(buf, p, end, "get ");
      return new Reply(LINE_TOO_LONG, !get, nl + 1 - start);
    }
    final int lineConsumed = nl + 1 - start;
    final int ntok = tokenize(buf, p, lineEnd);
    if (ntok == 0) {
      return new Reply(ERROR, false, lineConsumed);
    }
    if (tokenIs(buf, 0, "get")) {
      return decodeGet(buf, ntok, lineConsumed);
    }
    if (tokenIs(buf, 0, "set")) {
      return decodeSet(buf, p, nl, ntok, start, end);
    }
    if (ntok == 1 && tokenIs(buf, 0, "version")) {
      return new Reply(VERSION, false, lineConsumed);
    }
    if (ntok == 1 && tokenIs(buf, 0, "quit")) {
      return new Reply(NOTHING, true, lineConsumed);
    }
    return new Reply(ERROR, false, lineConsumed);
  }

  private Result decodeGet(final byte[] buf, final int ntok, final int consumed) {
    if (ntok == 1) {
      return new Reply(ERROR, false, consumed);
    }
    if (ntok - 1 > maxKeysPerGet) {
      return new Reply(tooManyKeys, false, consumed);
    }
    final byte[][] keys = new byte[ntok - 1][];
    for (int i = 1; i < ntok; i++) {
      final int len = tokEnd[i] - tokStart[i];
      if (len > maxKeyLength) {
        return new Reply(KEY_TOO_LONG, false, consumed);
      }
      keys[i - 1] = java.util.Arrays.copyOfRange(buf, tokStart[i], tokEnd[i]);
    }
    return new Command(
        keys.length == 1 ? RequestType.GET : RequestType.MULTIGET, keys, null, false, consumed);
  }

  private Result decodeSet(
      final byte[] buf, final int p, final int nl, final int ntok, final int start, final int end) {
    final int lineConsumed = nl + 1 - start;
    if (ntok < 5) {
      // Without a byte count the data block cannot be skipped.
      return new Reply(BAD_FORMAT, true, lineConsumed);
    }
    final long bytes = Ascii.parseUnsigned(buf, tokStart[4], tokEnd[4], Integer.MAX_VALUE - 4L);
    if (bytes < 0) {
      return new Reply(BAD_CHUNK, true, lineConsumed);
    }
    byte[] error = null;
    if (tokEnd[1] - tokStart[1] > maxKeyLength) {
      error = KEY_TOO_LONG;
    } else if (Ascii.parseUnsigned(buf, tokStart[2], tokEnd[2], 0xFFFF_FFFFL) < 0
        || !isSignedInt(buf, tokStart[3], tokEnd[3])
        || ntok > 6
        || (ntok == 6 && !tokenIs(buf, 5, "noreply"))) {
      error = BAD_FORMAT;
    } else if (bytes > maxValueBytes) {
      error = valueTooLarge;
    }
    if (error != null) {
      swallow = bytes + 2;
      final int n = (int) Math.min(swallow, end - (nl + 1));
      swallow -= n;
      return new Reply(error, false, lineConsumed + n);
    }
    final int total = lineConsumed + (int) bytes + 2;
    if (end - start < total) {
      // Bytes of a rejected block skipped in this call are consumed; the request starts at p.
      return new NeedMore(p - start, total - (p - start));
    }
    final int data = nl + 1;
    final int dataEnd = data + (int) bytes;
    if (buf[dataEnd] != '\r' || buf[dataEnd + 1] != '\n') {
      return new Reply(BAD_CHUNK, false, total);
    }
    final byte[] payload;
    if (ntok == 5 && tokEnd[4] + 1 == nl && buf[nl - 1] == '\r') {
      // The request as sent is the payload: one copy, and no zeroing of a new array before it.
      payload = java.util.Arrays.copyOfRange(buf, p, dataEnd + 2);
    } else {
      final int head = tokEnd[4] - p;
      payload = new byte[head + 2 + (int) bytes + 2];
      System.arraycopy(buf, p, payload, 0, head);
      payload[head] = '\r';
      payload[head + 1] = '\n';
      System.arraycopy(buf, data, payload, head + 2, (int) bytes + 2);
    }
    final byte[][] keys = {java.util.Arrays.copyOfRange(buf, tokStart[1], tokEnd[1])};
    return new Command(RequestType.SET, keys, payload, ntok == 6, total);
  }

  /** Splits on spaces; returns the token count, capped at the token array size. */
  private int tokenize(final byte[] buf, final int from, final int to) {
    int n = 0;
    int i = from;
    while (i < to) {
      while (i < to && buf[i] == ' ') {
        i++;
      }
      if (i == to) {
        break;
      }
      final int s = i;
      while (i < to && buf[i] != ' ') {
        i++;
      }
      if (n == tokStart.length) {
        return n + 1; // more tokens than any valid command has
      }
      tokStart[n] = s;
      tokEnd[n] = i;
      n++;
    }
    return n;
  }

  private boolean tokenIs(final byte[] buf, final int tok, final String word) {
    final int len = tokEnd[tok] - tokStart[tok];
    if (len != word.length()) {
      return false;
    }
    for (int i = 0; i < len; i++) {
      if (buf[tokStart[tok] + i] != word.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  private static boolean isSignedInt(final byte[] buf, final int from, final int to) {
    final int s = from < to && buf[from] == '-' ? from + 1 : from;
    return Ascii.parseUnsigned(buf, s, to, Integer.MAX_VALUE) >= 0;
  }
}
