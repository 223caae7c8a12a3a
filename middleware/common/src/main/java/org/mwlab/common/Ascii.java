package org.mwlab.common;

import java.nio.charset.StandardCharsets;

/**
 * Byte-level helpers for the memcached text protocol, which is ASCII: the middleware's request
 * decoder and the shared reply parser ({@link org.mwlab.common.memcached.ReplyParser}) work on
 * byte ranges {@code buf[from, to)} without making strings.
 */
public final class Ascii {
  private Ascii() {}

  /** The ASCII bytes of {@code s}. */
  public static byte[] bytes(final String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /** Index of the first {@code b} in {@code buf[from, to)}, or -1. */
  public static int indexOf(final byte[] buf, final int from, final int to, final byte b) {
    for (int i = from; i < to; i++) {
      if (buf[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /** True if {@code buf[from, to)} starts with {@code prefix} (ASCII). */
  public static boolean startsWith(
      final byte[] buf, final int from, final int to, final String prefix) {
    if (to - from < prefix.length()) {
      return false;
    }
    for (int i = 0; i < prefix.length(); i++) {
      if (buf[from + i] != prefix.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** True if {@code buf[from, to)} starts with {@code prefix}. */
  public static boolean startsWith(
      final byte[] buf, final int from, final int to, final byte[] prefix) {
    if (to - from < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (buf[from + i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  /** True if {@code buf[from, to)} is exactly {@code word}. */
  public static boolean equals(final byte[] buf, final int from, final int to, final byte[] word) {
    return to - from == word.length && startsWith(buf, from, to, word);
  }

  /**
   * The non-negative decimal {@code buf[from, to)} if it is at most {@code max} (and at most 10
   * digits), otherwise -1: empty, a sign, any other byte or too large.
   */
  public static long parseUnsigned(final byte[] buf, final int from, final int to, final long max) {
    if (from >= to || to - from > 10) {
      return -1;
    }
    long v = 0;
    for (int i = from; i < to; i++) {
      final int d = buf[i] - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      v = v * 10 + d;
    }
    return v <= max ? v : -1;
  }

  /** {@code buf[from, to)} as text, at most its first {@code limit} bytes, for messages. */
  public static String text(final byte[] buf, final int from, final int to, final int limit) {
    final int end = Math.min(to, from + limit);
    return new String(buf, from, end - from, StandardCharsets.US_ASCII);
  }
}
