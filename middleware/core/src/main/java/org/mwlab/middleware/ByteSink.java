package org.mwlab.middleware;

import java.nio.ByteBuffer;
import java.util.Arrays;

/** A reusable growable byte array for building replies and server commands. */
final class ByteSink {
  private byte[] buf;
  private int len;

  ByteSink(final int initial) {
    buf = new byte[initial];
  }

  void reset() {
    len = 0;
  }

  int length() {
    return len;
  }

  byte[] array() {
    return buf;
  }

  void append(final byte[] b, final int off, final int n) {
    ensure(n);
    System.arraycopy(b, off, buf, len, n);
    len += n;
  }

  /** Appends {@code n} bytes of {@code b} from index {@code index} (its position unchanged). */
  void append(final ByteBuffer b, final int index, final int n) {
    ensure(n);
    b.get(index, buf, len, n);
    len += n;
  }

  void append(final byte[] b) {
    append(b, 0, b.length);
  }

  void append(final byte b) {
    ensure(1);
    buf[len++] = b;
  }

  void crlf() {
    ensure(2);
    buf[len++] = '\r';
    buf[len++] = '\n';
  }

  byte[] toByteArray() {
    return Arrays.copyOf(buf, len);
  }

  private void ensure(final int n) {
    if (len + n > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(len + n, buf.length * 2));
    }
  }
}
