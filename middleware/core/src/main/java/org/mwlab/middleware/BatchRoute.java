package org.mwlab.middleware;

import java.util.ArrayList;
import java.util.List;
import org.mwlab.middleware.ServerConnection.ServerException;

/**
 * A worker's batch of requests ({@code --max-batch} above 1), served together over its blocking
 * connections.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>Batching never reorders a connection's replies: a client connection has at most one
 *       request queued or in flight, so a batch holds at most one of its requests and their order
 *       among each other is free; each server connection's replies are read in the order its
 *       requests were sent (memcached answers in order).
 *   <li>GETs, non-sharded multi-GETs and SETs are pipelined: each server's share goes out in one
 *       write, then the replies are read in the order sent and each client is answered as soon as
 *       its reply is complete.
 *   <li>A pipelined SET keeps {@link SetReplicationRoute}'s contract: each replica is asked
 *       once, and the reply is {@code STORED} only when every replica stored.
 *   <li>Sharded multi-GETs, requests whose server is down or whose share does not fit, and GETs
 *       whose server failed during the batch are served one by one afterwards by the routes for
 *       single requests (with their failover); a failed GET's failure stays in its reply's list.
 *   <li>A server's share never exceeds what the socket buffers hold while the server, blocked on
 *       its replies, does not read ({@link #MAX_PIPELINED_BYTES}).
 * </ul>
 */
final class BatchRoute {
  /** Server read buffer when batching: 16 replies with the study's 4 KB values and then some. */
  static final int READ_BUFFER = 128 * 1024;

  /**
   * Most bytes pipelined to one server in one batch (beyond its first request): the write must
   * fit into the socket buffers even while the server, blocked on its replies, does not read.
   */
  private static final int MAX_PIPELINED_BYTES = 64 * 1024;

  /** How a request of the batch is served. */
  private enum Mode {
    /** On its own after the pipelined requests. */
    LATER,
    PIPELINED_GET,
    PIPELINED_SET
  }

  private final Worker worker;
  private final RouteContext ctx;
  private final SetReplicationRoute set;
  private final GetFailoverRoute get;
  private final boolean sharded;

  private Mode[] mode = new Mode[0];
  /** GET: the server asked. */
  private int[] target = new int[0];
  /** SET: the replicas and which of them were sent the request. */
  private int[][] replicaSets = new int[0][];
  private boolean[][] sentSet = new boolean[0][];
  /** Servers with commands of this batch. */
  private final boolean[] used;
  /** A GET's command, before it is staged. */
  private final ByteSink command = new ByteSink(256);
  /** Why a server's connection failed during the batch (its later replies are lost); or null. */
  private final String[] broken;
  /** Served on their own afterwards, each with the failures of its pipelined attempt. */
  private final List<Request> later = new ArrayList<>();
  private final List<String> laterWhy = new ArrayList<>();

  BatchRoute(
      final Worker worker,
      final RouteContext ctx,
      final SetReplicationRoute set,
      final GetFailoverRoute get,
      final boolean sharded) {
    this.worker = worker;
    this.ctx = ctx;
    this.set = set;
    this.get = get;
    this.sharded = sharded;
    final int n = ctx.conns.length;
    used = new boolean[n];
    broken = new String[n];
  }

  /** Serves the batch: answers every request and records it. */
  void serve(final List<Request> batch) {
    final ServerConnection[] conns = ctx.conns;
    final int size = batch.size();
    ctx.stats.batch(size);
    final long start = System.nanoTime();
    if (mode.length < size) {
      mode = new Mode[size];
      target = new int[size];
      replicaSets = new int[size][];
      sentSet = new boolean[size][conns.length];
    }
    for (int s = 0; s < conns.length; s++) {
      conns[s].clearStaged();
      used[s] = false;
      broken[s] = null;
    }
    later.clear();
    laterWhy.clear();
    for (int i = 0; i < size; i++) {
      final Request r = batch.get(i);
      worker.begin(r, start);
      try {
        mode[i] = plan(r, i, start);
      } catch (RuntimeException e) {
        mode[i] = Mode.LATER;
      }
      if (mode[i] == Mode.LATER) {
        later.add(r);
        laterWhy.add("");
      }
    }
    final long sent = System.nanoTime();
    final long deadline = sent + ctx.timeoutNs;
    for (int s = 0; s < conns.length; s++) {
      if (!used[s]) {
        continue;
      }
      try {
        conns[s].sendStaged(deadline);
      } catch (ServerException e) {
        broken[s] = e.getMessage();
      }
    }
    for (int i = 0; i < size; i++) {
      if (mode[i] == Mode.LATER) {
        continue;
      }
      final Request r = batch.get(i);
      r.sentNs = sent;
      ctx.start();
      RouteReply out;
      try {
        out = mode[i] == Mode.PIPELINED_SET
            ? receiveSet(r, i, deadline)
            : receiveGet(r, i, deadline);
      } catch (RuntimeException e) {
        // The connections' positions in their reply streams are unknown now.
        for (int s = 0; s < conns.length; s++) {
          if (used[s] && broken[s] == null) {
            conns[s].markFailed("internal error");
            broken[s] = "internal error";
          }
        }
        out = RouteReply.Failed.internal(e);
      }
      if (out instanceof RouteReply.Retry) {
        later.add(r);
        laterWhy.add(ctx.failures().toString());
        continue;
      }
      worker.finish(r, out, false);
    }
    for (int k = 0; k < later.size(); k++) {
      final Request r = later.get(k);
      worker.finish(r, worker.process(r, laterWhy.get(k)), false);
    }
    ctx.stats.busy(start, System.nanoTime());
  }

  /** Adds {@code r} to its servers' outgoing bytes; returns how it is served. */
  private Mode plan(final Request r, final int i, final long now) {
    if (r.type == RequestType.SET) {
      final int[] reps = ctx.selector.replicas(r.keys[0]);
      for (final int s : reps) {
        if (!fits(s, r.payload.length)) {
          return Mode.LATER;
        }
      }
      replicaSets[i] = reps;
      for (final int s : reps) {
        final ServerConnection c = ctx.conns[s];
        sentSet[i][s] = c.available(now);
        if (sentSet[i][s]) {
          c.stage(r.payload, 0, r.payload.length);
          used[s] = true;
          ctx.servers.sent(s);
        } else {
          ctx.stats.server(s, 1, true, now);
        }
      }
      return Mode.PIPELINED_SET;
    }
    if (r.type == RequestType.MULTIGET && sharded) {
      return Mode.LATER;
    }
    final int[] candidates = get.candidates(r);
    if (candidates.length == 0) {
      return Mode.LATER;
    }
    final int s = candidates[ctx.selector.first(candidates, r.ticket, ctx.connected)];
    int bytes = 5;
    for (final byte[] k : r.keys) {
      bytes += k.length + 1;
    }
    if (!fits(s, bytes) || !ctx.conns[s].available(now)) {
      return Mode.LATER;
    }
    command.reset();
    GetExchange.command(command, r.keys, null, 0, r.keys.length);
    ctx.conns[s].stage(command.array(), 0, command.length());
    used[s] = true;
    ctx.servers.sent(s);
    target[i] = s;
    return Mode.PIPELINED_GET;
  }

  private boolean fits(final int server, final int bytes) {
    final int have = ctx.conns[server].staged();
    return have == 0 || have + bytes <= MAX_PIPELINED_BYTES;
  }

  /** The reply to pipelined GET {@code i}, or {@link RouteReply.Retry} if its server failed. */
  private RouteReply receiveGet(final Request r, final int i, final long deadline) {
    final int s = target[i];
    final ServerConnection c = ctx.conns[s];
    final GetExchange exchange = ctx.exchange;
    final ByteSink reply = ctx.reply;
    final int n = r.keys.length;
    boolean ok = false;
    String why = broken[s];
    if (why == null) {
      reply.reset();
      try {
        ok = exchange.receive(c, r.keys, null, 0, n, deadline, reply, null);
        if (!ok) {
          why = exchange.failure();
        }
      } catch (ServerException e) {
        why = e.getMessage();
      }
      if (!ok && !c.connected()) {
        broken[s] = why;
      }
    }
    ctx.servers.done(s);
    ctx.stats.server(s, n, !ok, System.nanoTime());
    if (!ok) {
      ctx.failure(s, why);
      return RouteReply.Retry.RETRY;
    }
    ctx.values = exchange.values();
    r.repliedNs = System.nanoTime();
    return ctx.got(c);
  }

  /** The reply to pipelined SET {@code i}: its replicas' replies, in replica order. */
  private RouteReply receiveSet(final Request r, final int i, final long deadline) {
    for (final int s : replicaSets[i]) {
      if (!sentSet[i][s]) {
        ctx.unavailable(s);
        continue;
      }
      boolean ok = false;
      if (broken[s] != null) {
        ctx.failure(s, broken[s]);
      } else {
        try {
          ok = set.readStored(s, deadline);
        } catch (ServerException e) {
          broken[s] = e.getMessage();
          ctx.failure(s, e.getMessage());
        }
      }
      ctx.servers.done(s);
      ctx.stats.server(s, 1, !ok, System.nanoTime());
    }
    return set.finish(r);
  }
}
