package org.mwlab.middleware;

import java.util.BitSet;
import org.mwlab.middleware.ServerConnection.ServerException;

/**
 * A multi-GET split over the servers ({@code --sharded}, or keys without a replica in common), over
 * a worker's blocking connections.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>Each key goes to one of its replicas, the keys spread evenly ({@link
 *       MultiGetPlan#balanced}); each server's part is sent before any reply is read, so the
 *       parts are served in parallel.
 *   <li>Every key is answered exactly once, in the client's key order: its VALUE block, or
 *       nothing for a miss; then one {@code END}.
 *   <li>Reassignment: when a part fails (server error, timeout, broken connection, server down),
 *       its keys, and any values it returned, go again to each key's first replica that has not
 *       failed this request; rounds repeat until every key is answered.
 *   <li>When some key has no replica left, the client gets {@code SERVER_ERROR get failed on}
 *       followed by each failure as {@code <address> <reason>}, separated by "; ", and no values.
 *   <li>Per-connection order: each server's reply is read completely in the order asked, or its
 *       connection is dropped when its stream is out of step.
 * </ul>
 */
final class ShardedGetRoute {
  private final RouteContext ctx;
  private final MultiGetPlan plan;
  private final KeySlots slots = new KeySlots();
  /** The VALUE blocks as they come, in any order; {@link #slots} says whose each is. */
  private final ByteSink values = new ByteSink(64 * 1024);
  /** Servers that failed the request in progress. */
  private final BitSet failed;
  /** Servers the current round's parts were sent to. */
  private final boolean[] sentTo;

  ShardedGetRoute(final RouteContext ctx) {
    this.ctx = ctx;
    final int n = ctx.conns.length;
    this.plan = new MultiGetPlan(n);
    this.failed = new BitSet(n);
    this.sentTo = new boolean[n];
  }

  RouteReply route(final Request r) {
    final byte[][] keys = r.keys;
    final ServerConnection[] conns = ctx.conns;
    final GetExchange exchange = ctx.exchange;
    failed.clear();
    slots.reset(keys.length);
    values.reset();
    plan.balanced(ctx.selector, keys, r.ticket);
    final int[] order = plan.order();
    r.sentNs = System.nanoTime();
    boolean pendingKeys = true;
    while (pendingKeys) {
      plan.group(slots.isPending);
      final long now = System.nanoTime();
      final long deadline = now + ctx.timeoutNs;
      for (int s = 0; s < conns.length; s++) {
        sentTo[s] = false;
        if (plan.from(s) == plan.to(s)) {
          continue;
        }
        final ServerConnection c = conns[s];
        if (!c.available(now)) {
          ctx.unavailable(s);
          failed.set(s);
          ctx.stats.server(s, plan.to(s) - plan.from(s), true, now);
          continue;
        }
        try {
          exchange.send(c, keys, order, plan.from(s), plan.to(s), deadline);
          sentTo[s] = true;
          ctx.servers.sent(s);
        } catch (ServerException e) {
          ctx.failure(s, e.getMessage());
          failed.set(s);
          ctx.stats.server(s, plan.to(s) - plan.from(s), true, now);
        }
      }
      for (int s = 0; s < conns.length; s++) {
        if (!sentTo[s]) {
          continue;
        }
        boolean ok;
        try {
          ok = exchange.receive(conns[s], keys, order, plan.from(s), plan.to(s), deadline, values,
              slots);
          if (ok) {
            ctx.values += exchange.values();
          } else {
            ctx.failure(s, exchange.failure());
          }
        } catch (ServerException e) {
          ctx.failure(s, e.getMessage());
          ok = false;
        }
        ctx.servers.done(s);
        ctx.stats.server(s, plan.to(s) - plan.from(s), !ok, System.nanoTime());
        if (ok) {
          slots.answered(order, plan.from(s), plan.to(s));
        } else {
          failed.set(s);
          slots.failed(order, plan.from(s), plan.to(s));
        }
      }
      // Move keys of failed parts to a replica that has not failed yet.
      pendingKeys = false;
      for (int i = 0; i < keys.length; i++) {
        if (!slots.pending(i)) {
          continue;
        }
        final int alt = ctx.selector.untried(keys[i], failed);
        if (alt < 0) {
          r.repliedNs = System.nanoTime();
          ctx.values = 0;
          return RouteReply.Failed.get(ctx.failures());
        }
        plan.reassign(i, alt);
        pendingKeys = true;
      }
    }
    r.repliedNs = System.nanoTime();
    final ByteSink reply = ctx.reply;
    reply.reset();
    slots.appendFound(values, reply);
    reply.append(Replies.END);
    return ctx.data;
  }
}
