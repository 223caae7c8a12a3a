package org.mwlab.loadgen;

import java.nio.ByteBuffer;
import org.mwlab.common.memcached.LineFramer;
import org.mwlab.common.memcached.ReplyKind;
import org.mwlab.common.memcached.ReplyParser;

/**
 * The replies on one connection: the read buffer and what the reply to the outstanding request
 * says so far (complete, hits, error), checked against the request.
 *
 * <p>Data blocks are skipped as they arrive, unchecked, so the buffer only ever holds one reply
 * line; it grows for a long line up to a bound, beyond which the stream is given up.
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

  private final LineFramer in;
  /** Any data block an int can count is skipped. */
  private final ReplyParser parser = new ReplyParser(Integer.MAX_VALUE);

  private OpType type = OpType.SET;
  private int keysRequested;
  private int hits;
  private boolean error;
  /** Bytes of the current data block (and its CRLF) still to skip. */
  private long skip;

  /** A buffer of {@code initialCapacity} bytes that grows to {@code maxCapacity} at most. */
  ReplyReader(final int initialCapacity, final int maxCapacity) {
    this.in = new LineFramer(initialCapacity, maxCapacity);
  }

  /** Where to read the next bytes into (in write mode). */
  ByteBuffer buffer() {
    return in.space();
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
    in.spaceFilled();
    if (scan()) {
      in.compact();
      return Status.COMPLETE;
    }
    // A reply line longer than the buffer: grow it rather than stall, up to the bound.
    return in.makeRoom() ? Status.PENDING : Status.LINE_TOO_LONG;
  }

  /** Bytes in the buffer after the complete reply. */
  int unread() {
    return in.available();
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
    while (true) {
      if (skip > 0) {
        final int k = (int) Math.min(skip, in.available());
        if (k == 0) {
          return false;
        }
        in.consume(k);
        skip -= k;
        continue;
      }
      final int end = in.nextLine();
      if (end < 0) {
        return false;
      }
      if (line(in.array(), in.lineStart(), end)) {
        return true;
      }
    }
  }

  private boolean line(final byte[] a, final int from, final int to) {
    final ReplyKind kind = parser.parse(a, from, to);
    if (type == OpType.SET) {
      error = kind != ReplyKind.STORED;
      return true;
    }
    if (kind == ReplyKind.VALUE) {
      skip = parser.valueBytes() + 2L;
    } else if (kind == ReplyKind.MALFORMED_VALUE) {
      // Where the data block ends is unknown: read on line by line, the reply is wrong anyway.
      error = true;
    } else {
      // END, or the error that ends the reply early.
      error |= kind != ReplyKind.END;
      return true;
    }
    hits++;
    if (hits > keysRequested) {
      error = true; // more values than keys asked for
    }
    return false;
  }
}
