package org.mwlab.loadgen;

import java.nio.ByteBuffer;

/**
 * The replies on one connection: the read buffer and what the reply to the outstanding request
 * says so far (complete, hits, error).
 *
 * <p>Data blocks are skipped as they arrive, so the buffer only ever holds one reply line; it
 * grows for a longer line.
 */
final class ReplyReader {

  /** What the bytes read so far amount to. */
  enum Status {
    /** The reply is not complete yet. */
    PENDING,
    /** The reply is complete; bytes after it, if any, are {@link #unread}. */
    COMPLETE
  }

  private ByteBuffer in;

  private OpType type = OpType.SET;
  private int hits;
  private boolean error;
  /** Bytes of the current data block (and its CRLF) still to skip. */
  private int skip;

  /** A reader whose buffer starts at {@code initialCapacity} bytes. */
  ReplyReader(final int initialCapacity) {
    if (initialCapacity < 1) {
      throw new IllegalArgumentException("buffer size must be positive, got " + initialCapacity);
    }
    this.in = ByteBuffer.allocate(initialCapacity);
  }

  /** Where to read the next bytes into (in write mode). */
  ByteBuffer buffer() {
    return in;
  }

  /** A request of {@code type} was sent: its reply comes next. */
  void expect(final OpType type) {
    this.type = type;
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
      // A reply line longer than the buffer: grow it rather than stall.
      final ByteBuffer bigger = ByteBuffer.allocate(in.capacity() * 2);
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
        final int k = Math.min(skip, lim - pos);
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
      int i = to - 1;
      while (i > from && a[i] != ' ') {
        i--;
      }
      int length = 0;
      for (int j = i + 1; j < to; j++) {
        length = length * 10 + (a[j] - '0');
      }
      skip = length + 2;
      hits++;
      return false;
    }
    if (!startsWith(a, from, to, "END")) {
      error = true;
    }
    return true;
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
