package org.mwlab.middleware;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/**
 * The read buffer of a blocking server connection, off the Java heap: the channel reads into it
 * without a copy, and a reply that goes to the client unchanged is written from it ({@link
 * #relayed}) without one either. Lines and data blocks are framed as in {@code LineFramer}: a line
 * ends at LF, a CR just before it is not part of it; each line is copied to a small heap array
 * ({@link #line}) for the parser.
 *
 * <p>Relaying ({@link #relayFrom}): the bytes taken from the start of a reply on stay in place. If
 * they would have to move because the reply fills the buffer, or if the caller cannot pass a
 * line on as it came ({@link #stopRelay}), what was taken so far is copied to the spill sink
 * and the reply goes on as a copy.
 */
final class ReplyBuffer {
  private final int maxCapacity;
  private ByteBuffer buf;
  /** {@link #buf} as the reply to relay; made with it. */
  private ByteBuffer view;
  private int pos;
  private int lim;
  private int scan;
  private int lineStart;
  private boolean lineCrlf;
  private byte[] line = new byte[256];
  /** Where the reply being relayed starts; -1 if none is. */
  private int relayStart = -1;
  private ByteSink spill;

  ReplyBuffer(final int initialCapacity, final int maxCapacity) {
    this.maxCapacity = maxCapacity;
    allocate(initialCapacity);
  }

  private void allocate(final int capacity) {
    final ByteBuffer b = ByteBuffer.allocateDirect(capacity);
    if (buf != null) {
      b.put(0, buf, 0, lim);
    }
    buf = b;
    view = b.duplicate();
  }

  /**
   * Takes the next complete line: returns its length (without CR LF), the line is at the start of
   * {@link #line}; -1 if no complete line has been read yet.
   */
  int nextLine() {
    final ByteBuffer b = buf;
    for (int i = scan; i < lim; i++) {
      if (b.get(i) == '\n') {
        lineStart = pos;
        lineCrlf = i > lineStart && b.get(i - 1) == '\r';
        final int len = (lineCrlf ? i - 1 : i) - lineStart;
        if (len > line.length) {
          line = new byte[Math.max(len, 2 * line.length)];
        }
        b.get(lineStart, line, 0, len);
        pos = i + 1;
        scan = pos;
        return len;
      }
    }
    scan = lim;
    return -1;
  }

  /** The line {@link #nextLine} took, at index 0. */
  byte[] line() {
    return line;
  }

  /** The line {@link #nextLine} took ended in CR LF. */
  boolean lineEndedCrlf() {
    return lineCrlf;
  }

  int available() {
    return lim - pos;
  }

  /** Takes the next {@code n} unread bytes. */
  void consume(final int n) {
    if (n < 0 || n > lim - pos) {
      throw new IndexOutOfBoundsException(n + " bytes to take, " + (lim - pos) + " unread");
    }
    pos += n;
    if (scan < pos) {
      scan = pos;
    }
  }

  /** Copies the next {@code n} unread bytes (at most {@link #available}) to {@code sink}. */
  void copyTo(final int n, final ByteSink sink) {
    sink.append(buf, pos, n);
    consume(n);
  }

  /** The last two bytes taken are CR LF. */
  boolean takenEndsInCrlf() {
    return pos >= 2 && buf.get(pos - 2) == '\r' && buf.get(pos - 1) == '\n';
  }

  /**
   * Makes room to read into, keeping the unread bytes and those of a reply being relayed; false
   * if a line not ended yet fills the largest buffer.
   */
  boolean makeRoom() {
    final int keep = relayStart >= 0 ? relayStart : pos;
    if (keep == lim) {
      // Nothing to keep: start over at the front (the usual case, one reply per read).
      shift(keep);
      return true;
    }
    if (keep > 0) {
      shift(keep);
      return true;
    }
    if (lim < buf.capacity()) {
      return true;
    }
    if (relayStart >= 0) {
      // The reply fills the buffer: it goes on as a copy.
      stopRelay(pos);
      return makeRoom();
    }
    if (buf.capacity() >= maxCapacity) {
      return false;
    }
    allocate((int) Math.min(maxCapacity, 2L * buf.capacity()));
    return true;
  }

  /** Moves the bytes from {@code from} on to the front. */
  private void shift(final int from) {
    if (from == 0) {
      return;
    }
    // compact() is defined for the overlapping move.
    buf.limit(lim).position(from);
    buf.compact();
    lim -= from;
    pos -= from;
    scan -= from;
    lineStart -= from;
    if (relayStart >= 0) {
      relayStart -= from;
    }
  }

  /** Reads once from {@code ch} after the bytes read; returns what the channel returned. */
  int readFrom(final ReadableByteChannel ch) throws IOException {
    buf.limit(buf.capacity()).position(lim);
    final int n = ch.read(buf);
    if (n > 0) {
      lim += n;
    }
    return n;
  }

  /** Drops every unread byte and any relay. */
  void clear() {
    pos = 0;
    lim = 0;
    scan = 0;
    lineStart = 0;
    relayStart = -1;
    spill = null;
  }

  /** A reply starts at the next unread byte: keep its bytes in place; {@code spill} if not. */
  void relayFrom(final ByteSink spill) {
    relayStart = pos;
    this.spill = spill;
  }

  boolean relaying() {
    return relayStart >= 0;
  }

  /** Copies what was taken of the reply before the last line to the spill sink; stops relaying. */
  void stopRelayBeforeLine() {
    stopRelay(lineStart);
  }

  private void stopRelay(final int upTo) {
    if (relayStart >= 0) {
      spill.append(buf, relayStart, upTo - relayStart);
      endRelay();
    }
  }

  /** Stops relaying and forgets the reply. */
  void endRelay() {
    relayStart = -1;
    spill = null;
  }

  /**
   * The reply taken since {@link #relayFrom}, in place, valid until the next read; null if it
   * went to the spill sink. Ends the relay.
   */
  ByteBuffer relayed() {
    if (relayStart < 0) {
      return null;
    }
    view.limit(pos).position(relayStart);
    endRelay();
    return view;
  }
}
