package org.mwlab.common.memcached;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The read buffer of one connection's reply stream and the lines and data blocks taken from it.
 * The connection does the reading, blocking or not: into {@link #array} from {@link #limit} then
 * {@link #filled}, or into {@link #space} then {@link #spaceFilled}.
 *
 * <p>A line ends at LF; a CR just before the LF is not part of it. A data block is taken by its
 * length with {@link #consume}. The buffer keeps only unread bytes: {@link #makeRoom} moves them
 * to its start and, once a line not ended yet fills it, doubles it up to a bound. The longest line
 * that can be framed is therefore the bound, CRLF included.
 */
public final class LineFramer {
  private final int maxCapacity;
  private byte[] buf;
  /** {@link #buf} for channels, made when first asked for; its position is kept at {@link #lim}. */
  private ByteBuffer view;
  /** The first unread byte. */
  private int pos;
  /** The end of the bytes read. */
  private int lim;
  /** Where the search for the next LF goes on: {@code pos <= scan <= lim}. */
  private int scan;
  private int lineStart;

  /** A buffer of {@code initialCapacity} bytes that grows to {@code maxCapacity} at most. */
  public LineFramer(final int initialCapacity, final int maxCapacity) {
    if (initialCapacity < 1 || maxCapacity < initialCapacity) {
      throw new IllegalArgumentException("buffer bounds must satisfy 1 <= initial <= max, got "
          + initialCapacity + " and " + maxCapacity);
    }
    this.maxCapacity = maxCapacity;
    this.buf = new byte[initialCapacity];
  }

  /**
   * Takes the next complete line: returns where it ends in {@link #array} (before CR LF or LF),
   * its start is {@link #lineStart}; -1 if no complete line has been read yet. The line stays in
   * place until the next {@link #makeRoom}, {@link #compact} or {@link #clear}.
   */
  public int nextLine() {
    final byte[] b = buf;
    for (int i = scan; i < lim; i++) {
      if (b[i] == '\n') {
        lineStart = pos;
        pos = i + 1;
        scan = pos;
        return i > lineStart && b[i - 1] == '\r' ? i - 1 : i;
      }
    }
    scan = lim;
    return -1;
  }

  /** Where the line {@link #nextLine} returned starts. */
  public int lineStart() {
    return lineStart;
  }

  /** The buffer; replaced when it grows. */
  public byte[] array() {
    return buf;
  }

  /** Where the unread bytes start in {@link #array}. */
  public int position() {
    return pos;
  }

  /** Bytes read and not yet taken. */
  public int available() {
    return lim - pos;
  }

  /** Takes the next {@code n} unread bytes (a data block or part of one). */
  public void consume(final int n) {
    if (n < 0 || n > lim - pos) {
      throw new IndexOutOfBoundsException(n + " bytes to take, " + (lim - pos) + " unread");
    }
    pos += n;
    if (scan < pos) {
      scan = pos;
    }
  }

  /** Moves the unread bytes to the start of the buffer. */
  public void compact() {
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, lim - pos);
      lim -= pos;
      scan -= pos;
      pos = 0;
      syncView();
    }
  }

  /**
   * Makes room to read into: {@link #compact}, and if the unread bytes (a line not ended yet) fill
   * the buffer, doubles it up to the bound. False if they fill the bound: the line is too long.
   */
  public boolean makeRoom() {
    compact();
    if (lim < buf.length) {
      return true;
    }
    if (buf.length >= maxCapacity) {
      return false;
    }
    buf = Arrays.copyOf(buf, (int) Math.min(maxCapacity, 2L * buf.length));
    view = null;
    return true;
  }

  /** Where to read into {@link #array}: the end of the bytes read. */
  public int limit() {
    return lim;
  }

  /** Bytes that fit into {@link #array} after {@link #limit}. */
  public int room() {
    return buf.length - lim;
  }

  /** {@code n} bytes were read into {@link #array} at {@link #limit}. */
  public void filled(final int n) {
    if (n < 0 || n > buf.length - lim) {
      throw new IndexOutOfBoundsException(n + " bytes read, room for " + (buf.length - lim));
    }
    lim += n;
    syncView();
  }

  /** The free space after the bytes read, for a channel to read into; then {@link #spaceFilled}. */
  public ByteBuffer space() {
    if (view == null) {
      view = ByteBuffer.wrap(buf);
      syncView();
    }
    return view;
  }

  /** Takes what was read into {@link #space} (up to its position) as read. */
  public void spaceFilled() {
    if (view != null) {
      lim = view.position();
    }
  }

  /** Drops every unread byte (the buffer keeps its size). */
  public void clear() {
    pos = 0;
    lim = 0;
    scan = 0;
    syncView();
  }

  /** The buffer's size now. */
  public int capacity() {
    return buf.length;
  }

  private void syncView() {
    if (view != null) {
      view.clear().position(lim);
    }
  }
}
