package org.mwlab.middleware;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.mwlab.middleware.stats.Recorder;

/**
 * A design-2018 worker: takes requests from the shared queue, forwards them over its own
 * connections to the servers, waits for every reply it needs and answers the client.
 *
 * <p>It routes each request by type: SETs to {@link SetReplicationRoute}, GETs and multi-GETs to
 * {@link GetFailoverRoute}, or with {@code --sharded} multi-GETs to {@link ShardedGetRoute}; a
 * batch of requests goes to {@link BatchRoute}. The routes share the worker's connections and
 * buffers ({@link RouteContext}); the worker records each request once it is answered.
 */
final class Worker extends QueueThread<Request> {
  /** The shared queue is pool 0 in the statistics. */
  static final int POOL = 0;

  private final RouteContext ctx;
  private final SetReplicationRoute set;
  private final GetFailoverRoute get;
  private final ShardedGetRoute shardedGet;
  private final BatchRoute batch;
  private final Recorder stats;
  private final AtomicInteger inFlight;
  private final boolean sharded;
  private final int traceSample;

  Worker(
      final Config config,
      final QueueThread.Source<Request> queue,
      final ReplicaSelector selector,
      final ServerPool servers,
      final Recorder stats,
      final AtomicInteger inFlight) {
    super(queue, config.maxBatch());
    this.stats = stats;
    this.inFlight = inFlight;
    this.sharded = config.sharded();
    this.traceSample = config.traceSample();
    final int n = servers.size();
    final ServerConnection[] conns = new ServerConnection[n];
    // A batch's replies arrive back to back: a buffer that holds them all reads them in few calls.
    final int readBuffer =
        config.maxBatch() > 1 ? BatchRoute.READ_BUFFER : ServerConnection.DEFAULT_READ_BUFFER;
    for (int i = 0; i < n; i++) {
      conns[i] = servers.blockingConnection(i, readBuffer);
    }
    ctx = new RouteContext(selector, servers, conns, stats);
    set = new SetReplicationRoute(ctx);
    shardedGet = new ShardedGetRoute(ctx);
    get = new GetFailoverRoute(ctx, shardedGet);
    batch = new BatchRoute(this, ctx, set, get, sharded);
  }

  /** Opens the server connections; returns the failures, empty if all connected. */
  @Override
  String connect() {
    final StringBuilder sb = new StringBuilder();
    for (final ServerConnection c : ctx.conns) {
      if (!c.available(System.nanoTime())) {
        sb.append(sb.length() == 0 ? "" : "; ").append(c.address).append(' ')
            .append(c.lastFailure());
      }
    }
    return sb.toString();
  }

  @Override
  Recorder recorder() {
    return stats;
  }

  @Override
  void close() {
    for (final ServerConnection c : ctx.conns) {
      c.close();
    }
  }

  @Override
  void handle(final Request r) {
    stats.batch(1);
    begin(r, System.nanoTime());
    finish(r, process(r, ""), true);
  }

  @Override
  void handleBatch(final List<Request> requests) {
    batch.serve(requests);
  }

  /** {@code r} was taken from the queue at {@code now}. */
  void begin(final Request r, final long now) {
    r.dequeueNs = now;
    stats.dequeued(POOL, inFlight.incrementAndGet(), now);
  }

  /** Serves one request on its own; {@code earlier} is a failure of a batched attempt. */
  RouteReply process(final Request r, final String earlier) {
    ctx.start(earlier);
    try {
      if (r.type == RequestType.SET) {
        return set.route(r);
      }
      return r.type == RequestType.MULTIGET && sharded ? shardedGet.route(r) : get.route(r);
    } catch (RuntimeException e) {
      // Never leave a client without an answer.
      return RouteReply.Failed.internal(e);
    }
  }

  /**
   * Answers the client and records the request; {@code busy}: the worker's busy time is this
   * request's (not its batch's).
   */
  void finish(final Request r, final RouteReply out, final boolean busy) {
    if (r.sentNs != 0 && r.repliedNs == 0) {
      r.repliedNs = System.nanoTime();
    }
    out.answer(r);
    r.writtenNs = System.nanoTime();
    inFlight.decrementAndGet();
    final boolean error = out.error();
    final long serverNs = r.sentNs == 0 ? 0 : r.repliedNs - r.sentNs;
    stats.request(r.type.ordinal(), r.keys.length, r.arrivalNs, r.enqueueNs, r.dequeueNs,
        r.sentNs, r.repliedNs, r.writtenNs, ctx.values, error,
        traceSample > 0 && r.id % traceSample == 0, POOL, 1);
    stats.part(POOL, r.type.ordinal(), r.keys.length, r.keys.length, r.dequeueNs - r.enqueueNs,
        serverNs, r.writtenNs - r.arrivalNs, error, r.writtenNs);
    stats.partDone(POOL, r.writtenNs);
    if (busy) {
      stats.busy(r.dequeueNs, r.writtenNs);
    }
  }
}
