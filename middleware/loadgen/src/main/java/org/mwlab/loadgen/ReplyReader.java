package org.mwlab.loadgen;

import java.nio.ByteBuffer;

/**
 * The replies on one connection: the read buffer and what the reply to the outstanding request
 * says so far (complete, hits, error).
 *
 * <p>Data blocks are skipped as they arrive, so the buffer only ever holds one reply line; it
 * grows for a long line up to a bound, beyond which the stream is given up.
 */
final class ReplyReader {

  /** What the bytes read so far amount to. */
  enum Status {
    /** The reply is not complete yet. */
    PENDING,
    /** The reply is complete; bytes after it, if any, are {@link #unread}. */
    COMPLETE,
    /** A reply line does not fit in the largest buffer: the stream cannot be followed. */
    LINE_TOO_LONG
  }

  private final int maxCapacity;
  private ByteBuffer in;

  private OpType type = OpType.SET;
  private int keysRequested;
  private int hits;
  private boolean error;
  /** Bytes of the current data block (and its CRLF) still to skip. */
  private long skip;

  /** A buffer of {@code initialCapacity} bytes that grows to {@code maxCapacity} at most. */
  ReplyReader(final int initialCapacity, final int maxCapacity) {
    if (initialCapacity < 1 || maxCapacity < initialCapacity) {
      throw new IllegalArgumentException("buffer bounds must satisfy 1 <= initial <= max, got "
          + initialCapacity + " and " + maxCapacity);
    }
    this.maxCapacity = maxCapacity;
    this.in = ByteBuffer.allocate(initialCapacity);
  }

  /** Where to read the next bytes into (in write mode). */
  ByteBuffer buffer() {
    return in;
  }

  /** A request of {@code type} for {@code keys} keys was sent: its reply comes next. */
  void expect(final OpType type, final int keys) {
    this.type = type;
    this.keysRequested = keys;
    hits = 0;
    error = false;
    skip = 0;
  }

  /** Parses what {@link #buffer} holds; call after every read into it. */
  Status parse() {
    in.flip();
    final boolean done = scan();
    in.compact();
    if (done) {
      return Status.COMPLETE;
    }
    if (in.position() == in.capacity()) {
      // A reply line longer than the buffer: grow it rather than stall, up to the bound.
      if (in.capacity() >= maxCapacity) {
        return Status.LINE_TOO_LONG;
      }
      final ByteBuffer bigger =
          ByteBuffer.allocate((int) Math.min(maxCapacity, 2L * in.capacity()));
      in.flip();
      bigger.put(in);
      in = bigger;
    }
    return Status.PENDING;
  }

  /** Bytes in the buffer after the complete reply. */
  int unread() {
    return in.position();
  }

  /** Drops the {@link #unread} bytes: the stream is out of step with the requests. */
  void dropUnread() {
    error = true;
    in.clear();
  }

  int hits() {
    return hits;
  }

  boolean error() {
    return error;
  }

  /** The buffer's size now. */
  int capacity() {
    return in.capacity();
  }

  /** Consumes lines and data blocks up to the end of the reply; true if it ended. */
  private boolean scan() {
    final byte[] a = in.array();
    int pos = in.position();
    final int lim = in.limit();
    boolean done = false;
    while (pos < lim && !done) {
      if (skip > 0) {
        final int k = (int) Math.min(skip, lim - pos);
        pos += k;
        skip -= k;
        continue;
      }
      int nl = -1;
      for (int i = pos; i < lim; i++) {
        if (a[i] == '\n') {
          nl = i;
          break;
        }
      }
      if (nl < 0) {
        break;
      }
      int end = nl;
      if (end > pos && a[end - 1] == '\r') {
        end--;
      }
      done = line(a, pos, end);
      pos = nl + 1;
    }
    in.position(pos);
    return done;
  }

  private boolean line(final byte[] a, final int from, final int to) {
    if (type == OpType.SET) {
      error = !startsWith(a, from, to, "STORED") || to - from != 6;
      return true;
    }
    if (startsWith(a, from, to, "VALUE ")) {
      // VALUE <key> <flags> <bytes>: the byte count is the last field.
      int i = to - 1;
      while (i > from && a[i] != ' ') {
        i--;
      }
      final long length = parseLength(a, i + 1, to);
      if (length < 0) {
        // Where the data block ends is unknown: read on line by line, the reply is wrong anyway.
        error = true;
      } else {
        skip = length + 2;
      }
      hits++;
      if (hits > keysRequested) {
        error = true; // more values than keys asked for
      }
      return false;
    }
    // END, or the error that ends the reply early.
    if (!startsWith(a, from, to, "END") || to - from != 3) {
      error = true;
    }
    return true;
  }

  /** A decimal byte count of at most {@link Integer#MAX_VALUE}, or -1. */
  private static long parseLength(final byte[] a, final int from, final int to) {
    if (from >= to || to - from > 10) {
      return -1;
    }
    long v = 0;
    for (int j = from; j < to; j++) {
      final int d = a[j] - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      v = v * 10 + d;
    }
    return v <= Integer.MAX_VALUE ? v : -1;
  }

  private static boolean startsWith(final byte[] a, final int from, final int to, final String p) {
    if (to - from < p.length()) {
      return false;
    }
    for (int i = 0; i < p.length(); i++) {
      if (a[from + i] != p.charAt(i)) {
        return false;
      }
    }
    return true;
  }
}
