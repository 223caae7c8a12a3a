package org.mwlab.middleware;

import java.nio.ByteBuffer;

/**
 * What a route answers for one request: the client's reply, or that a pipelined attempt has to be
 * served again on its own.
 *
 * <p>The replies of the hot path allocate nothing: {@link Data} and {@link Relay} are one per
 * thread, around its reusable reply buffer and its server connections' read buffers; {@link
 * Fixed} and {@link Retry} are constants. Only a {@link Failed} reply is created per request,
 * where its message is composed anyway.
 */
sealed interface RouteReply
    permits RouteReply.Data, RouteReply.Relay, RouteReply.Fixed, RouteReply.Retry,
        RouteReply.Failed {

  /** Hands the reply to the client's connection. */
  void answer(Request r);

  /** True if the client is told that the request failed. */
  default boolean error() {
    return false;
  }

  /**
   * The reply is the content of {@code reply}, a thread's reusable buffer: lent to the client's
   * connection, which copies it only if it cannot write it at once.
   */
  record Data(ByteSink reply) implements RouteReply {
    @Override
    public void answer(final Request r) {
      r.connection.complete(r, reply.array(), reply.length(), true);
    }
  }

  /**
   * The reply is a server's reply as it came, still in that connection's read buffer (off the
   * heap): lent to the client's connection, which writes it from there when it is next in line
   * and copies it only if it cannot write it at once. Set with {@link #of} for each reply.
   */
  final class Relay implements RouteReply {
    private ByteBuffer reply;

    Relay of(final ByteBuffer b) {
      reply = b;
      return this;
    }

    @Override
    public void answer(final Request r) {
      final ByteBuffer b = reply;
      reply = null;
      r.connection.complete(r, b);
    }
  }

  /** A reply that is always the same bytes. */
  enum Fixed implements RouteReply {
    STORED(Replies.STORED),
    /** A {@code noreply} SET that was stored: nothing is sent. */
    NOREPLY(Replies.EMPTY);

    private final byte[] bytes;

    Fixed(final byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public void answer(final Request r) {
      r.connection.complete(r, bytes);
    }
  }

  /**
   * A pipelined attempt failed (its failure is noted): the request is served again on its own, so
   * there is nothing to answer yet.
   */
  enum Retry implements RouteReply {
    RETRY;

    @Override
    public void answer(final Request r) {
      throw new IllegalStateException("a retried request is served again, not answered");
    }
  }

  /** {@code SERVER_ERROR <reason>}. */
  record Failed(String reason) implements RouteReply {
    /** A SET some replica did not store; {@code failures} names each. */
    static Failed set(final CharSequence failures) {
      return new Failed("set failed on " + failures);
    }

    /** A GET for which no replica answered; {@code failures} names each attempt. */
    static Failed get(final CharSequence failures) {
      return new Failed("get failed on " + failures);
    }

    /** A bug; the client still gets an answer. */
    static Failed internal(final RuntimeException e) {
      return new Failed("internal error: " + e);
    }

    @Override
    public boolean error() {
      return true;
    }

    @Override
    public void answer(final Request r) {
      r.connection.complete(r, Replies.serverError(reason));
    }
  }
}
