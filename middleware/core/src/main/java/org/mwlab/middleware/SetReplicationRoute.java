package org.mwlab.middleware;

import org.mwlab.common.memcached.ReplyKind;
import org.mwlab.common.memcached.ReplyParser;
import org.mwlab.middleware.ServerConnection.ServerException;

/**
 * SET replication over a worker's blocking connections.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>A SET goes to every replica of its key, each asked once: it is sent to all of them before
 *       any reply is read, so they store it in parallel.
 *   <li>The client gets {@code STORED} (nothing for {@code noreply}) only when every replica
 *       replied {@code STORED}; otherwise {@code SERVER_ERROR set failed on} followed by each
 *       failure as {@code <address> <reason>}, separated by "; " (see {@link #reply}).
 *   <li>A replica that is down, times out, breaks the connection or replies anything but {@code
 *       STORED} counts as failed; its connection is dropped when its stream is out of step.
 *   <li>Per-connection order: each connection's replies are read in the order its requests were
 *       sent, so a reply is never taken for another request's.
 * </ul>
 *
 * <p>Design 2016's write threads keep to the same outcome over non-blocking connections: they use
 * {@link #reply} and {@link #notStored}.
 */
final class SetReplicationRoute {
  private final RouteContext ctx;
  /** Which replicas the SET in progress was sent to, by server index. */
  private final boolean[] sentTo;
  private final ReplyParser replies = ServerReplies.newParser();

  SetReplicationRoute(final RouteContext ctx) {
    this.ctx = ctx;
    this.sentTo = new boolean[ctx.conns.length];
  }

  /**
   * The client's reply once every replica has answered: {@code failures} are theirs, empty if
   * all stored.
   */
  static RouteReply reply(final Request r, final CharSequence failures) {
    if (failures.length() > 0) {
      return RouteReply.Failed.set(failures);
    }
    return r.noreply ? RouteReply.Fixed.NOREPLY : RouteReply.Fixed.STORED;
  }

  /** A replica's reply line {@code b[start, end)}: null if it stored, else the failure. */
  static String notStored(
      final ReplyParser replies, final byte[] b, final int start, final int end) {
    return replies.parse(b, start, end) == ReplyKind.STORED
        ? null
        : "replied " + ServerReplies.text(b, start, end);
  }

  RouteReply route(final Request r) {
    final int[] reps = ctx.selector.replicas(r.keys[0]);
    final long now = System.nanoTime();
    r.sentNs = now;
    final long deadline = now + ctx.timeoutNs;
    for (final int s : reps) {
      sentTo[s] = false;
      final ServerConnection c = ctx.conns[s];
      if (!c.available(now)) {
        ctx.unavailable(s);
        ctx.stats.server(s, 1, true, now);
        continue;
      }
      try {
        c.send(r.payload, 0, r.payload.length, deadline);
        sentTo[s] = true;
        ctx.servers.sent(s);
      } catch (ServerException e) {
        ctx.failure(s, e.getMessage());
        ctx.stats.server(s, 1, true, now);
      }
    }
    for (final int s : reps) {
      if (!sentTo[s]) {
        continue;
      }
      boolean ok = false;
      try {
        ok = readStored(s, deadline);
      } catch (ServerException e) {
        ctx.failure(s, e.getMessage());
      }
      ctx.servers.done(s);
      ctx.stats.server(s, 1, !ok, System.nanoTime());
    }
    return finish(r);
  }

  /** Reads server s's reply to a SET; false, with the failure noted, unless STORED. */
  boolean readStored(final int s, final long deadline) throws ServerException {
    final ServerConnection c = ctx.conns[s];
    final int len = c.readLine(deadline);
    final String failure = notStored(replies, c.line(), 0, len);
    if (failure != null) {
      ctx.failure(s, failure);
    }
    return failure == null;
  }

  /** Every replica has answered: the reply from the failures noted. */
  RouteReply finish(final Request r) {
    r.repliedNs = System.nanoTime();
    return reply(r, ctx.failures());
  }
}
