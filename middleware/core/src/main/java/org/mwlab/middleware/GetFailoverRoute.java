package org.mwlab.middleware;

/**
 * A GET, or a multi-GET that one server can answer whole, over a worker's blocking connections.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>The request goes to one server that holds all its keys (a replica of each): the one the
 *       read balance picks first ({@link ReplicaSelector#first}).
 *   <li>Failover: on a server error, a timeout, a broken connection or a server that is down, the
 *       whole request goes to the next such server in turn, each tried at most once. The first
 *       complete answer is relayed as the server sent it, with one {@code END}.
 *   <li>Only when every server failed does the client get {@code SERVER_ERROR get failed on}
 *       followed by each failure as {@code <address> <reason>}, separated by "; ".
 *   <li>A multi-GET whose keys have no replica in common is split: {@link ShardedGetRoute}.
 *   <li>Per-connection order: a connection carries one exchange at a time and reads its reply
 *       completely, or is dropped when its stream is out of step.
 * </ul>
 */
final class GetFailoverRoute {
  private final RouteContext ctx;
  private final ShardedGetRoute sharded;

  GetFailoverRoute(final RouteContext ctx, final ShardedGetRoute sharded) {
    this.ctx = ctx;
    this.sharded = sharded;
  }

  /** The servers that hold every key of {@code r}, in ring order; may be empty. */
  int[] candidates(final Request r) {
    return r.type == RequestType.GET
        ? ctx.selector.replicas(r.keys[0])
        : ctx.selector.commonReplicas(r.keys);
  }

  RouteReply route(final Request r) {
    final int[] candidates = candidates(r);
    if (candidates.length == 0) {
      // No server holds every key: the keys have to be split.
      return sharded.route(r);
    }
    final int n = candidates.length;
    final int first = ctx.selector.first(candidates, r.ticket, ctx.connected);
    final ByteSink reply = ctx.reply;
    final GetExchange exchange = ctx.exchange;
    r.sentNs = System.nanoTime();
    for (int k = 0; k < n; k++) {
      final int s = candidates[(first + k) % n];
      final ServerConnection c = ctx.conns[s];
      final long now = System.nanoTime();
      if (!c.available(now)) {
        ctx.unavailable(s);
        ctx.stats.server(s, r.keys.length, true, now);
        continue;
      }
      reply.reset();
      ctx.servers.sent(s);
      final boolean ok =
          exchange.fetch(c, r.keys, null, 0, r.keys.length, now + ctx.timeoutNs, reply, null);
      ctx.servers.done(s);
      ctx.stats.server(s, r.keys.length, !ok, System.nanoTime());
      if (ok) {
        ctx.values = exchange.values();
        r.repliedNs = System.nanoTime();
        return ctx.got(c);
      }
      ctx.failure(s, exchange.failure());
    }
    r.repliedNs = System.nanoTime();
    return RouteReply.Failed.get(ctx.failures());
  }
}
