package org.mwlab.middleware;

/**
 * One client request on its way through the middleware, with its timestamps.
 *
 * <p>Created by the net-thread; owned by one worker after dequeue. The reply fields are guarded by
 * the client connection's lock.
 */
public final class Request {
  final RequestType type;
  final byte[][] keys;
  /** For SET: the command line without {@code noreply}, CRLF, data block and CRLF. */
  final byte[] payload;
  final boolean noreply;
  final ClientConnection connection;
  /** Round-robin ticket drawn by the net-thread. */
  long ticket;
  /** Global sequence number, for trace sampling. */
  long id;

  long arrivalNs;
  long enqueueNs;
  long dequeueNs;
  long sentNs;
  long repliedNs;
  long writtenNs;

  /** Bytes to send to the client; empty for noreply; null while not ready and once written. */
  byte[] reply;
  /** Bytes of {@link #reply} to send. */
  int replyLength;
  /** {@link #reply} is the worker's buffer: written before {@code complete} returns, or copied. */
  boolean borrowed;
  /**
   * A reply relayed from a server connection's read buffer (instead of {@link #reply}): written
   * before {@code complete} returns, or copied; null otherwise.
   */
  java.nio.ByteBuffer relayed;
  /** Close the connection after this reply is written. */
  boolean closeAfter;

  Request(
      final RequestType type,
      final byte[][] keys,
      final byte[] payload,
      final boolean noreply,
      final ClientConnection connection) {
    this.type = type;
    this.keys = keys;
    this.payload = payload;
    this.noreply = noreply;
    this.connection = connection;
  }

  /** An immediate reply (error or local answer) that only keeps its place in the reply order. */
  static Request local(final ClientConnection connection, final byte[] reply, final boolean close) {
    final Request r = new Request(null, null, null, false, connection);
    r.reply = reply;
    r.replyLength = reply == null ? 0 : reply.length;
    r.closeAfter = close;
    return r;
  }

  public RequestType type() {
    return type;
  }

  public int keyCount() {
    return keys == null ? 0 : keys.length;
  }

  public byte[][] keys() {
    return keys;
  }

  public byte[] payload() {
    return payload;
  }

  public boolean noreply() {
    return noreply;
  }
}
