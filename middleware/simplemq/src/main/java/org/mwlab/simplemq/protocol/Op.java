package org.mwlab.simplemq.protocol;

/** The operations of SimpleMQ's wire protocol, with their one-byte codes. */
public enum Op {
  CREATE_CLIENT(1),
  DELETE_CLIENT(2),
  CREATE_QUEUE(3),
  DELETE_QUEUE(4),
  SEND(5),
  PEEK_QUEUE(6),
  POP_QUEUE(7),
  POP_FROM_SENDER(8),
  QUERY_QUEUES(9),
  // The lease mode (at-least-once); the 2015 study never sends these.
  READ(10),
  ACK(11),
  NACK(12),
  // Idempotent send, beyond the study: a send that names its message with a key of its sender's.
  SEND_ONCE(13),
  // Batches, beyond the study: many sends, pops or acks in one request and one transaction.
  SEND_BATCH(14),
  POP_BATCH(15),
  ACK_BATCH(16),
  // Blocking pop and read, beyond the study: wait up to a timeout for a message, woken by
  // LISTEN/NOTIFY.
  POP_WAIT(17),
  READ_WAIT(18),
  // A queue's depth and oldest message's age, beyond the study.
  QUEUE_METRICS(19);

  private static final Op[] BY_CODE = new Op[32];

  static {
    for (final Op op : values()) {
      BY_CODE[op.code] = op;
    }
  }

  public final int code;

  Op(final int code) {
    this.code = code;
  }

  /** The operation of a code, or null for an unknown one. */
  public static Op of(final int code) {
    return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
  }
}
