package org.mwlab.common.memcached;

/** What one line of memcached's text-protocol replies is, as {@link ReplyParser} reads it. */
public enum ReplyKind {
  /**
   * {@code VALUE <key> <flags> <bytes>[ <cas>]}: a data block of {@code bytes} bytes and CRLF
   * follows; the parser holds the header's fields.
   */
  VALUE,
  /** {@code END}: a retrieval reply is complete. */
  END,
  STORED,
  NOT_STORED,
  EXISTS,
  NOT_FOUND,
  DELETED,
  /** {@code ERROR}: the server does not know the command. */
  ERROR,
  /** {@code CLIENT_ERROR <message>}: the server rejected the command. */
  CLIENT_ERROR,
  /** {@code SERVER_ERROR <message>}: the server failed to carry out the command. */
  SERVER_ERROR,
  /**
   * A line opening with {@code VALUE } whose byte count is missing, not a decimal or beyond the
   * parser's limit: where its data block ends is unknown.
   */
  MALFORMED_VALUE,
  /** Any other line. */
  MALFORMED;

  /** True for {@link #ERROR}, {@link #CLIENT_ERROR} and {@link #SERVER_ERROR}. */
  public boolean isError() {
    return this == ERROR || this == CLIENT_ERROR || this == SERVER_ERROR;
  }
}
