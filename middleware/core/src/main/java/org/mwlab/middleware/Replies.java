package org.mwlab.middleware;

/** The replies the middleware itself composes for forwarded requests. */
final class Replies {
  static final byte[] STORED = RequestDecoder.ascii("STORED\r\n");
  static final byte[] END = RequestDecoder.ascii("END\r\n");
  static final byte[] EMPTY = new byte[0];

  private Replies() {}

  /** {@code SERVER_ERROR <reason>}, the reason on one line. */
  static byte[] serverError(final String reason) {
    return RequestDecoder.ascii(
        "SERVER_ERROR " + reason.replace('\r', ' ').replace('\n', ' ') + "\r\n");
  }
}
