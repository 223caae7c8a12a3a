package org.mwlab.middleware;

import org.mwlab.common.Ascii;

/** The replies the middleware itself composes for forwarded requests. */
final class Replies {
  static final byte[] STORED = Ascii.bytes("STORED\r\n");
  static final byte[] END = Ascii.bytes("END\r\n");
  static final byte[] EMPTY = new byte[0];

  private Replies() {}

  /** {@code SERVER_ERROR <reason>}, the reason on one line. */
  static byte[] serverError(final String reason) {
    return Ascii.bytes(
        "SERVER_ERROR " + reason.replace('\r', ' ').replace('\n', ' ') + "\r\n");
  }
}
