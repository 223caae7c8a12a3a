package org.mwlab.middleware;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.mwlab.middleware.stats.Recorder;

/**
 * Design 2016: one of a server's T read threads. It owns one blocking connection to its server
 * and serves one GET part at a time from the server's read queue.
 */
final class ReadThread extends QueueThread<Part> {
  private final Design2016 design;
  private final ServerPool servers;
  private final int server;
  private final AtomicInteger inFlight;
  private final Recorder stats;
  private final ServerConnection conn;
  private final long timeoutNs;
  private final int traceSample;
  private final GetExchange exchange = new GetExchange(false);
  private final ByteSink reply = new ByteSink(64 * 1024);
  /** The reply that is the content of {@link #reply}. */
  private final RouteReply.Data data = new RouteReply.Data(reply);
  private final ByteSink scratch = new ByteSink(16 * 1024);

  ReadThread(
      final Design2016 design,
      final Config config,
      final ServerPool servers,
      final int server,
      final BlockingQueue<Part> queue,
      final AtomicInteger inFlight,
      final Recorder stats) {
    super(queue);
    this.design = design;
    this.servers = servers;
    this.server = server;
    this.inFlight = inFlight;
    this.stats = stats;
    this.conn = servers.blockingConnection(server);
    this.timeoutNs = servers.timeoutNs();
    this.traceSample = config.traceSample();
  }

  /** Opens the connection; returns the failure, empty if connected. */
  @Override
  String connect() {
    return conn.available(System.nanoTime()) ? "" : conn.address + " " + conn.lastFailure();
  }

  @Override
  Recorder recorder() {
    return stats;
  }

  @Override
  void close() {
    conn.close();
  }

  @Override
  void handle(final Part p) {
    p.dequeueNs = System.nanoTime();
    stats.dequeued(p.pool, inFlight.incrementAndGet(), p.dequeueNs);
    final Fanout f = p.fanout;
    try {
      if (!f.failed) {
        fetch(p, f);
      }
    } catch (RuntimeException e) {
      // Never leave a client without an answer.
      f.failure(conn.address, "internal error: " + e);
      f.failed = true;
    }
    if (p.repliedNs == 0) {
      p.repliedNs = System.nanoTime();
    }
    long done = p.repliedNs;
    if (f.remaining.decrementAndGet() == 0) {
      done = answer(f);
    }
    inFlight.decrementAndGet();
    stats.partDone(p.pool, done);
    stats.busy(p.dequeueNs, done);
  }

  /** Asks the server for the part's keys; on failure hands the keys to the next replica. */
  private void fetch(final Part p, final Fanout f) {
    final Request r = p.request;
    final long now = System.nanoTime();
    final String failure;
    if (!conn.available(now)) {
      failure = "unavailable (" + conn.lastFailure() + ")";
      stats.server(server, p.keys(), true, now);
    } else {
      p.sentNs = now;
      final byte[][] values = f.values;
      final boolean ok;
      servers.sent(server);
      if (values == null) {
        // The request's only part: the reply is relayed as the server sent it.
        reply.reset();
        ok = exchange.fetch(conn, r.keys, p.positions, 0, p.keys(), now + timeoutNs, reply, null);
      } else {
        scratch.reset();
        ok = exchange.fetch(conn, r.keys, p.positions, 0, p.keys(), now + timeoutNs, scratch,
            (position, start, end) ->
                values[position] = Arrays.copyOfRange(scratch.array(), start, end));
      }
      servers.done(server);
      p.repliedNs = System.nanoTime();
      stats.server(server, p.keys(), !ok, p.repliedNs);
      if (ok) {
        f.valuesReturned.addAndGet(exchange.values());
        return;
      }
      failure = exchange.failure();
      if (values != null) {
        // Values of a failed exchange do not count; its keys are asked again elsewhere.
        for (int i = 0; i < p.keys(); i++) {
          values[p.position(i)] = null;
        }
      }
    }
    f.failure(conn.address, failure);
    design.failover(p, stats);
  }

  /** The last part is done: answers the client and records the request and all its parts. */
  private long answer(final Fanout f) {
    final Request r = f.request;
    final boolean error = f.failed;
    final int values = error ? 0 : f.valuesReturned.get();
    final RouteReply out;
    if (error) {
      out = RouteReply.Failed.get(f.failures());
    } else {
      final byte[][] blocks = f.values;
      if (blocks != null) {
        reply.reset();
        for (final byte[] b : blocks) {
          if (b != null) {
            reply.append(b);
          }
        }
      }
      reply.append(Replies.END);
      out = data;
    }
    out.answer(r);
    r.writtenNs = System.nanoTime();
    final List<Part> parts = f.parts();
    Part critical = parts.get(0);
    for (final Part q : parts) {
      if (q.repliedNs - critical.repliedNs > 0) {
        critical = q;
      }
    }
    r.dequeueNs = critical.dequeueNs;
    r.sentNs = critical.sentNs;
    r.repliedNs = critical.sentNs == 0 ? 0 : critical.repliedNs;
    final int type = r.type.ordinal();
    stats.request(type, r.keys.length, r.arrivalNs, r.enqueueNs, r.dequeueNs, r.sentNs,
        r.repliedNs, r.writtenNs, values, error, traceSample > 0 && r.id % traceSample == 0,
        critical.pool, parts.size());
    for (final Part q : parts) {
      stats.part(q.pool, type, r.keys.length, q.keys(), q.dequeueNs - q.enqueueNs,
          q.sentNs == 0 ? 0 : q.repliedNs - q.sentNs, r.writtenNs - r.arrivalNs, error,
          r.writtenNs);
    }
    return r.writtenNs;
  }
}
