package org.mwlab.middleware;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.mwlab.middleware.ServerConnection.ServerException;
import org.mwlab.middleware.stats.Recorder;

/**
 * A design-2018 worker: takes requests from the shared queue, forwards them over its own
 * connections to the servers, waits for every reply it needs and answers the client.
 */
final class Worker extends QueueThread<Request> {
  /** The shared queue is pool 0 in the statistics. */
  static final int POOL = 0;

  private final ReplicaSelector selector;
  private final MultiGetPlan plan;
  private final ServerPool servers;
  private final ServerConnection[] conns;
  private final Recorder stats;
  private final AtomicInteger inFlight;
  private final boolean sharded;
  private final long timeoutNs;
  private final int traceSample;

  private final ByteSink reply = new ByteSink(64 * 1024);
  private final ByteSink values = new ByteSink(64 * 1024);
  private final GetExchange exchange = new GetExchange();
  private final boolean[] sentTo;
  private final boolean[] failedServer;
  private int[] valueStart = new int[16];
  private int[] valueEnd = new int[16];
  private final StringBuilder failures = new StringBuilder();

  // Outcome of the request being handled.
  private int valuesReturned;
  private boolean error;

  Worker(
      final Config config,
      final QueueThread.Source<Request> queue,
      final ReplicaSelector selector,
      final ServerPool servers,
      final Recorder stats,
      final AtomicInteger inFlight) {
    super(queue, config.maxBatch());
    this.selector = selector;
    this.servers = servers;
    this.stats = stats;
    this.inFlight = inFlight;
    this.sharded = config.sharded();
    this.timeoutNs = servers.timeoutNs();
    this.traceSample = config.traceSample();
    final int n = servers.size();
    plan = new MultiGetPlan(n);
    conns = new ServerConnection[n];
    // A batch's replies arrive back to back: a buffer that holds them all reads them in few calls.
    final int readBuffer =
        config.maxBatch() > 1 ? BATCH_READ_BUFFER : ServerConnection.DEFAULT_READ_BUFFER;
    for (int i = 0; i < n; i++) {
      conns[i] = servers.blockingConnection(i, readBuffer);
    }
    sentTo = new boolean[n];
    failedServer = new boolean[n];
    outgoing = new ByteSink[n];
    for (int i = 0; i < n; i++) {
      outgoing[i] = new ByteSink(config.maxBatch() > 1 ? 16 * 1024 : 16);
    }
    broken = new String[n];
  }

  /** Opens the server connections; returns the failures, empty if all connected. */
  @Override
  String connect() {
    final StringBuilder sb = new StringBuilder();
    for (final ServerConnection c : conns) {
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
    for (final ServerConnection c : conns) {
      c.close();
    }
  }

  @Override
  void handle(final Request r) {
    stats.batch(1);
    begin(r, System.nanoTime());
    finish(r, process(r, ""), true);
  }

  private void begin(final Request r, final long now) {
    r.dequeueNs = now;
    stats.dequeued(POOL, inFlight.incrementAndGet(), now);
  }

  /** Serves one request on its own; {@code earlier} is a failure of a batched attempt. */
  private byte[] process(final Request r, final String earlier) {
    valuesReturned = 0;
    error = false;
    failures.setLength(0);
    failures.append(earlier);
    try {
      return r.type == RequestType.SET ? set(r) : get(r);
    } catch (RuntimeException e) {
      // Never leave a client without an answer.
      error = true;
      return Replies.serverError("internal error: " + e);
    }
  }

  /**
   * Answers the client ({@code out} null: the reply is in {@link #reply}) and records the
   * request; {@code busy}: the worker's busy time is this request's (not its batch's).
   */
  private void finish(final Request r, final byte[] out, final boolean busy) {
    if (r.sentNs != 0 && r.repliedNs == 0) {
      r.repliedNs = System.nanoTime();
    }
    if (out == null) {
      r.connection.complete(r, reply.array(), reply.length(), true);
    } else {
      r.connection.complete(r, out);
    }
    r.writtenNs = System.nanoTime();
    inFlight.decrementAndGet();
    final long serverNs = r.sentNs == 0 ? 0 : r.repliedNs - r.sentNs;
    stats.request(r.type.ordinal(), r.keys.length, r.arrivalNs, r.enqueueNs, r.dequeueNs,
        r.sentNs, r.repliedNs, r.writtenNs, valuesReturned, error,
        traceSample > 0 && r.id % traceSample == 0, POOL, 1);
    stats.part(POOL, r.type.ordinal(), r.keys.length, r.keys.length, r.dequeueNs - r.enqueueNs,
        serverNs, r.writtenNs - r.arrivalNs, error, r.writtenNs);
    stats.partDone(POOL, r.writtenNs);
    if (busy) {
      stats.busy(r.dequeueNs, r.writtenNs);
    }
  }

  // --- batches --------------------------------------------------------------------------------
  // The requests of a batch come from different client connections (a connection has at most one
  // request queued or in flight), so their order among each other is free. GETs, non-sharded
  // multi-GETs and SETs are pipelined: each server's share goes out in one write, then the
  // replies are read in the order sent and each client is answered as soon as its reply is
  // complete. Sharded multi-GETs, requests whose server is down, and GETs whose server failed
  // during the batch are served one by one afterwards, as without batching.

  /**
   * Most bytes pipelined to one server in one batch (beyond its first request): the write must
   * fit into the socket buffers even while the server, blocked on its replies, does not read.
   */
  private static final int MAX_PIPELINED_BYTES = 64 * 1024;

  /** Server read buffer when batching: 16 replies with the study's 4 KB values and then some. */
  private static final int BATCH_READ_BUFFER = 128 * 1024;

  private static final int LATER = 0;
  private static final int PIPELINED_GET = 1;
  private static final int PIPELINED_SET = 2;

  private int[] kind = new int[0];
  /** GET: the server asked. */
  private int[] target = new int[0];
  /** SET: the replicas and which of them were sent the request. */
  private int[][] replicaSets = new int[0][];
  private boolean[][] sentSet = new boolean[0][];
  private final ByteSink[] outgoing;
  /** Why a server's connection failed during the batch: its later replies are lost. */
  private final String[] broken;
  private final java.util.List<Request> later = new java.util.ArrayList<>();
  private final java.util.List<String> laterWhy = new java.util.ArrayList<>();

  @Override
  void handleBatch(final java.util.List<Request> batch) {
    final int size = batch.size();
    stats.batch(size);
    final long start = System.nanoTime();
    if (kind.length < size) {
      kind = new int[size];
      target = new int[size];
      replicaSets = new int[size][];
      sentSet = new boolean[size][conns.length];
    }
    for (int s = 0; s < conns.length; s++) {
      outgoing[s].reset();
      broken[s] = null;
    }
    later.clear();
    laterWhy.clear();
    for (int i = 0; i < size; i++) {
      final Request r = batch.get(i);
      begin(r, start);
      try {
        kind[i] = plan(r, i, start);
      } catch (RuntimeException e) {
        kind[i] = LATER;
      }
      if (kind[i] == LATER) {
        later.add(r);
        laterWhy.add("");
      }
    }
    final long sent = System.nanoTime();
    final long deadline = sent + timeoutNs;
    for (int s = 0; s < conns.length; s++) {
      if (outgoing[s].length() == 0) {
        continue;
      }
      try {
        conns[s].send(outgoing[s].array(), 0, outgoing[s].length(), deadline);
      } catch (ServerException e) {
        broken[s] = e.getMessage();
      }
    }
    for (int i = 0; i < size; i++) {
      if (kind[i] == LATER) {
        continue;
      }
      final Request r = batch.get(i);
      r.sentNs = sent;
      valuesReturned = 0;
      error = false;
      failures.setLength(0);
      byte[] out;
      try {
        out = kind[i] == PIPELINED_SET ? receiveSet(r, i, deadline) : receiveGet(r, i, deadline);
      } catch (RuntimeException e) {
        // The connections' positions in their reply streams are unknown now.
        for (int s = 0; s < conns.length; s++) {
          if (outgoing[s].length() > 0 && broken[s] == null) {
            conns[s].markFailed("internal error");
            broken[s] = "internal error";
          }
        }
        error = true;
        out = Replies.serverError("internal error: " + e);
      }
      if (out == RETRY) {
        later.add(r);
        laterWhy.add(failures.toString());
        continue;
      }
      finish(r, out, false);
    }
    for (int k = 0; k < later.size(); k++) {
      final Request r = later.get(k);
      finish(r, process(r, laterWhy.get(k)), false);
    }
    stats.busy(start, System.nanoTime());
  }

  /** Adds {@code r} to its servers' outgoing bytes; returns how it is served. */
  private int plan(final Request r, final int i, final long now) {
    if (r.type == RequestType.SET) {
      final int[] reps = selector.replicas(r.keys[0]);
      for (final int s : reps) {
        if (!fits(s, r.payload.length)) {
          return LATER;
        }
      }
      replicaSets[i] = reps;
      for (final int s : reps) {
        final ServerConnection c = conns[s];
        sentSet[i][s] = c.available(now);
        if (sentSet[i][s]) {
          outgoing[s].append(r.payload);
          servers.sent(s);
        } else {
          stats.server(s, 1, true, now);
        }
      }
      return PIPELINED_SET;
    }
    if (r.type == RequestType.MULTIGET && sharded) {
      return LATER;
    }
    final int[] candidates =
        r.type == RequestType.GET
            ? selector.replicas(r.keys[0])
            : selector.commonReplicas(r.keys);
    if (candidates.length == 0) {
      return LATER;
    }
    final int s = candidates[selector.first(candidates, r.ticket, x -> conns[x].connected())];
    int bytes = 5;
    for (final byte[] k : r.keys) {
      bytes += k.length + 1;
    }
    if (!fits(s, bytes) || !conns[s].available(now)) {
      return LATER;
    }
    GetExchange.command(outgoing[s], r.keys, null, 0, r.keys.length);
    servers.sent(s);
    target[i] = s;
    return PIPELINED_GET;
  }

  private boolean fits(final int server, final int bytes) {
    final int have = outgoing[server].length();
    return have == 0 || have + bytes <= MAX_PIPELINED_BYTES;
  }

  /** A pipelined GET failed: serve it again on its own. */
  private static final byte[] RETRY = new byte[0];

  private byte[] receiveGet(final Request r, final int i, final long deadline) {
    final int s = target[i];
    final ServerConnection c = conns[s];
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
    servers.done(s);
    stats.server(s, n, !ok, System.nanoTime());
    if (!ok) {
      failure(s, why);
      return RETRY;
    }
    valuesReturned = exchange.values();
    r.repliedNs = System.nanoTime();
    reply.append(Replies.END);
    return null;
  }

  private byte[] receiveSet(final Request r, final int i, final long deadline) {
    for (final int s : replicaSets[i]) {
      final ServerConnection c = conns[s];
      if (!sentSet[i][s]) {
        failure(s, "unavailable (" + c.lastFailure() + ")");
        continue;
      }
      boolean ok = false;
      if (broken[s] != null) {
        failure(s, broken[s]);
      } else {
        try {
          ok = readStored(s, deadline);
        } catch (ServerException e) {
          broken[s] = e.getMessage();
          failure(s, e.getMessage());
        }
      }
      servers.done(s);
      stats.server(s, 1, !ok, System.nanoTime());
    }
    return setReply(r);
  }

  /** Reads server s's reply to a SET; false, with the failure noted, unless STORED. */
  private boolean readStored(final int s, final long deadline) throws ServerException {
    final ServerConnection c = conns[s];
    final int end = c.readLine(deadline);
    final boolean ok = ServerReplyParser.stored(c.buffer(), c.lineStart, end);
    if (!ok) {
      failure(s, "replied " + ServerReplyParser.text(c.buffer(), c.lineStart, end));
    }
    return ok;
  }

  /** STORED only when every replica stored, else the failures. */
  private byte[] setReply(final Request r) {
    r.repliedNs = System.nanoTime();
    if (failures.length() > 0) {
      error = true;
      return Replies.serverError("set failed on " + failures);
    }
    return r.noreply ? Replies.EMPTY : Replies.STORED;
  }

  // --- SET ----------------------------------------------------------------------------------

  private byte[] set(final Request r) {
    final int[] reps = selector.replicas(r.keys[0]);
    final long now = System.nanoTime();
    r.sentNs = now;
    final long deadline = now + timeoutNs;
    for (final int s : reps) {
      sentTo[s] = false;
      final ServerConnection c = conns[s];
      if (!c.available(now)) {
        failure(s, "unavailable (" + c.lastFailure() + ")");
        stats.server(s, 1, true, now);
        continue;
      }
      try {
        c.send(r.payload, 0, r.payload.length, deadline);
        sentTo[s] = true;
        servers.sent(s);
      } catch (ServerException e) {
        failure(s, e.getMessage());
        stats.server(s, 1, true, now);
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
        failure(s, e.getMessage());
      }
      servers.done(s);
      stats.server(s, 1, !ok, System.nanoTime());
    }
    return setReply(r);
  }

  // --- GET and multi-GET --------------------------------------------------------------------
  // A successful GET leaves its reply in {@link #reply} and returns null.

  private byte[] get(final Request r) {
    if (r.type == RequestType.MULTIGET && sharded) {
      return sharded(r);
    }
    final int[] candidates =
        r.type == RequestType.GET
            ? selector.replicas(r.keys[0])
            : selector.commonReplicas(r.keys);
    if (candidates.length == 0) {
      // No server holds every key: the keys have to be split.
      return sharded(r);
    }
    final int n = candidates.length;
    final int first = selector.first(candidates, r.ticket, s -> conns[s].connected());
    r.sentNs = System.nanoTime();
    for (int k = 0; k < n; k++) {
      final int s = candidates[(first + k) % n];
      final ServerConnection c = conns[s];
      final long now = System.nanoTime();
      if (!c.available(now)) {
        failure(s, "unavailable (" + c.lastFailure() + ")");
        stats.server(s, r.keys.length, true, now);
        continue;
      }
      reply.reset();
      servers.sent(s);
      final boolean ok =
          exchange.fetch(c, r.keys, null, 0, r.keys.length, now + timeoutNs, reply, null);
      servers.done(s);
      stats.server(s, r.keys.length, !ok, System.nanoTime());
      if (ok) {
        valuesReturned = exchange.values();
        r.repliedNs = System.nanoTime();
        reply.append(Replies.END);
        return null;
      }
      failure(s, exchange.failure());
    }
    r.repliedNs = System.nanoTime();
    error = true;
    return Replies.serverError("get failed on " + failures);
  }

  /** Splits the keys over their replicas, fetches the parts and reassembles in key order. */
  private byte[] sharded(final Request r) {
    final byte[][] keys = r.keys;
    final int n = keys.length;
    if (valueStart.length < n) {
      valueStart = new int[n];
      valueEnd = new int[n];
    }
    Arrays.fill(failedServer, false);
    Arrays.fill(valueStart, 0, n, -1);
    values.reset();
    plan.balanced(selector, keys, r.ticket);
    final int[] order = plan.order();
    final GetExchange.Slots slots =
        (position, start, end) -> {
          valueStart[position] = start;
          valueEnd[position] = end;
        };
    r.sentNs = System.nanoTime();
    boolean pendingKeys = true;
    while (pendingKeys) {
      plan.group(i -> valueStart[i] == -1);
      final long now = System.nanoTime();
      final long deadline = now + timeoutNs;
      for (int s = 0; s < conns.length; s++) {
        sentTo[s] = false;
        if (plan.from(s) == plan.to(s)) {
          continue;
        }
        final ServerConnection c = conns[s];
        if (!c.available(now)) {
          failure(s, "unavailable (" + c.lastFailure() + ")");
          failedServer[s] = true;
          stats.server(s, plan.to(s) - plan.from(s), true, now);
          continue;
        }
        try {
          exchange.send(c, keys, order, plan.from(s), plan.to(s), deadline);
          sentTo[s] = true;
          servers.sent(s);
        } catch (ServerException e) {
          failure(s, e.getMessage());
          failedServer[s] = true;
          stats.server(s, plan.to(s) - plan.from(s), true, now);
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
            valuesReturned += exchange.values();
          } else {
            failure(s, exchange.failure());
          }
        } catch (ServerException e) {
          failure(s, e.getMessage());
          ok = false;
        }
        servers.done(s);
        stats.server(s, plan.to(s) - plan.from(s), !ok, System.nanoTime());
        if (ok) {
          // Misses of a successful part are final.
          for (int j = plan.from(s); j < plan.to(s); j++) {
            if (valueStart[order[j]] == -1) {
              valueStart[order[j]] = -2;
            }
          }
        } else {
          failedServer[s] = true;
          for (int j = plan.from(s); j < plan.to(s); j++) {
            valueStart[order[j]] = -1;
          }
        }
      }
      // Move keys of failed parts to a replica that has not failed yet.
      pendingKeys = false;
      for (int i = 0; i < n; i++) {
        if (valueStart[i] != -1) {
          continue;
        }
        int alt = -1;
        for (final int s : selector.replicas(keys[i])) {
          if (!failedServer[s]) {
            alt = s;
            break;
          }
        }
        if (alt < 0) {
          r.repliedNs = System.nanoTime();
          error = true;
          valuesReturned = 0;
          return Replies.serverError("get failed on " + failures);
        }
        plan.reassign(i, alt);
        pendingKeys = true;
      }
    }
    r.repliedNs = System.nanoTime();
    reply.reset();
    final byte[] v = values.array();
    for (int i = 0; i < n; i++) {
      if (valueStart[i] >= 0) {
        reply.append(v, valueStart[i], valueEnd[i] - valueStart[i]);
      }
    }
    reply.append(Replies.END);
    return null;
  }

  // --- helpers ------------------------------------------------------------------------------

  private void failure(final int server, final String reason) {
    if (failures.length() > 0) {
      failures.append("; ");
    }
    failures.append(conns[server].address).append(' ').append(reason);
  }
}
