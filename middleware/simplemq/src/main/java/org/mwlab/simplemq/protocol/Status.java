package org.mwlab.simplemq.protocol;

/**
 * The status byte of a reply. Below 16 the request succeeded; from 16 on the reply is an error
 * with a text, and the connection stays usable.
 */
public enum Status {
  /** Done; the reply carries the operation's result, if it has one. */
  OK(0),
  /** A peek, pop or read found no message. Not an error: counted apart from the throughput. */
  EMPTY(1),
  /**
   * An ack or nack named no leased message: acked already, dead-lettered, never read, or no
   * such message. Not an error: at-least-once delivery makes it a normal outcome.
   */
  NOT_LEASED(2),
  /** The frame's fields do not match its operation (too short, too long, not ASCII). */
  MALFORMED(16),
  /** The frame is longer than the middleware accepts; its bytes were skipped. */
  FRAME_TOO_LARGE(17),
  /** The operation code is unknown. */
  UNKNOWN_OP(18),
  /** A client or queue id that does not exist (a foreign key), or one still referenced. */
  UNKNOWN_REFERENCE(19),
  /** The message body is longer than the middleware accepts. */
  PAYLOAD_TOO_LARGE(20),
  /** The request conflicts with the stored state (a client id taken already). */
  CONFLICT(21),
  /** The client or queue to delete does not exist. */
  NOT_FOUND(22),
  /** The database failed the request for another reason; the text says which. */
  DATABASE(23),
  /** The middleware is shutting down and took no new request. */
  SHUTTING_DOWN(24),
  /**
   * The middleware serves as many connections as it accepts: this one is refused and closed.
   * Sent unasked, with request id 0, as the connection's only frame.
   */
  TOO_MANY_CONNECTIONS(25);

  private static final Status[] BY_CODE = new Status[32];

  static {
    for (final Status s : values()) {
      BY_CODE[s.code] = s;
    }
  }

  public final int code;

  Status(final int code) {
    this.code = code;
  }

  public boolean isError() {
    return code >= 16;
  }

  /** The status of a code, or null for an unknown one. */
  public static Status of(final int code) {
    return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
  }
}
