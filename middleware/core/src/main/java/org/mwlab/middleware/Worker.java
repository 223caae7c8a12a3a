package org.mwlab.middleware;

import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import org.mwlab.middleware.ServerConnection.ServerException;
import org.mwlab.middleware.stats.Recorder;

/**
 * A worker takes requests from the shared queue, forwards them over its own connections to the
 * servers, waits for every reply it needs and answers the client.
 */
final class Worker implements Runnable {
  private static final byte[] STORED = RequestDecoder.ascii("STORED\r\n");
  private static final byte[] END = RequestDecoder.ascii("END\r\n");
  private static final byte[] GET = RequestDecoder.ascii("get");
  private static final byte[] EMPTY = new byte[0];

  private final BlockingQueue<Request> queue;
  private final HashRing ring;
  private final ServerConnection[] conns;
  private final Recorder stats;
  private final AtomicIntegerArray outstanding;
  private final boolean sharded;
  private final ReadBalance balance;
  private final long timeoutNs;
  private final int traceSample;
  private volatile boolean running = true;

  private final ByteSink reply = new ByteSink(64 * 1024);
  private final ByteSink cmd = new ByteSink(4 * 1024);
  private final ByteSink values = new ByteSink(64 * 1024);
  private final boolean[] sentTo;
  private final boolean[] failedServer;
  private final int[] perServer;
  private final int[] all;
  private int[] assign = new int[16];
  private int[] valueStart = new int[16];
  private int[] valueEnd = new int[16];
  private final StringBuilder failures = new StringBuilder();
  private final ServerReplyParser parser = new ServerReplyParser();

  // Outcome of the request being handled.
  private int valuesReturned;
  private boolean error;

  Worker(
      final Config config,
      final BlockingQueue<Request> queue,
      final HashRing ring,
      final Recorder stats,
      final AtomicIntegerArray outstanding,
      final AtomicLongArray connectedAt,
      final Watchdog watchdog) {
    this.queue = queue;
    this.ring = ring;
    this.stats = stats;
    this.outstanding = outstanding;
    this.sharded = config.sharded();
    this.balance = config.readBalance();
    this.timeoutNs = config.serverTimeoutMs() * 1_000_000L;
    this.traceSample = config.traceSample();
    final int n = config.servers().size();
    conns = new ServerConnection[n];
    for (int i = 0; i < n; i++) {
      conns[i] =
          new ServerConnection(i, config.servers().get(i), config.serverTimeoutMs(),
              config.reconnectMinMs(), config.reconnectMaxMs(), connectedAt);
      watchdog.watch(conns[i]);
    }
    sentTo = new boolean[n];
    failedServer = new boolean[n];
    perServer = new int[n];
    all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
  }

  /** Opens the server connections; returns the failures, empty if all connected. */
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

  void stop() {
    running = false;
  }

  @Override
  public void run() {
    try {
      while (running || !queue.isEmpty()) {
        final Request r;
        try {
          r = queue.poll(50, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          return;
        }
        if (r != null) {
          handle(r);
        }
      }
    } finally {
      for (final ServerConnection c : conns) {
        c.close();
      }
    }
  }

  void handle(final Request r) {
    r.dequeueNs = System.nanoTime();
    valuesReturned = 0;
    error = false;
    failures.setLength(0);
    byte[] out;
    try {
      out = r.type == RequestType.SET ? set(r) : get(r);
    } catch (RuntimeException e) {
      // Never leave a client without an answer.
      error = true;
      out = serverError("internal error: " + e);
    }
    if (r.sentNs != 0 && r.repliedNs == 0) {
      r.repliedNs = System.nanoTime();
    }
    if (out == null) {
      r.connection.complete(r, reply.array(), reply.length(), true);
    } else {
      r.connection.complete(r, out);
    }
    r.writtenNs = System.nanoTime();
    stats.request(r.type.ordinal(), r.keys.length, r.arrivalNs, r.enqueueNs, r.dequeueNs,
        r.sentNs, r.repliedNs, r.writtenNs, valuesReturned, error,
        traceSample > 0 && r.id % traceSample == 0);
  }

  // --- SET ----------------------------------------------------------------------------------

  private byte[] set(final Request r) {
    final int[] reps = ring.replicas(r.keys[0]);
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
        outstanding.incrementAndGet(s);
      } catch (ServerException e) {
        failure(s, e.getMessage());
        stats.server(s, 1, true, now);
      }
    }
    for (final int s : reps) {
      if (!sentTo[s]) {
        continue;
      }
      final ServerConnection c = conns[s];
      boolean ok = false;
      try {
        final int end = c.readLine(deadline);
        ok = ServerReplyParser.stored(c.buffer(), c.lineStart, end);
        if (!ok) {
          failure(s, "replied " + ServerReplyParser.text(c.buffer(), c.lineStart, end));
        }
      } catch (ServerException e) {
        failure(s, e.getMessage());
      }
      outstanding.decrementAndGet(s);
      stats.server(s, 1, !ok, System.nanoTime());
    }
    r.repliedNs = System.nanoTime();
    if (failures.length() > 0) {
      error = true;
      return serverError("set failed on " + failures);
    }
    return r.noreply ? EMPTY : STORED;
  }

  // --- GET and multi-GET --------------------------------------------------------------------
  // A successful GET leaves its reply in {@link #reply} and returns null.

  private byte[] get(final Request r) {
    if (r.type == RequestType.MULTIGET && sharded) {
      return sharded(r);
    }
    final int[] candidates =
        r.type == RequestType.GET ? ring.replicas(r.keys[0]) : commonReplicas(r.keys);
    if (candidates.length == 0) {
      // No server holds every key: the keys have to be split.
      return sharded(r);
    }
    final int n = candidates.length;
    final int first = pick(candidates, r.ticket);
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
      outstanding.incrementAndGet(s);
      final boolean ok = fetch(c, r.keys, null, 0, r.keys.length, now + timeoutNs);
      outstanding.decrementAndGet(s);
      stats.server(s, r.keys.length, !ok, System.nanoTime());
      if (ok) {
        r.repliedNs = System.nanoTime();
        reply.append(END);
        return null;
      }
    }
    r.repliedNs = System.nanoTime();
    error = true;
    return serverError("get failed on " + failures);
  }

  /** Index into {@code candidates} of the server to ask first. */
  private int pick(final int[] candidates, final long ticket) {
    final int n = candidates.length;
    final int rr = (int) Math.floorMod(ticket, (long) n);
    if (balance == ReadBalance.ROUND_ROBIN || n == 1) {
      return rr;
    }
    int best = rr;
    int bestLoad = Integer.MAX_VALUE;
    for (int k = 0; k < n; k++) {
      final int i = (rr + k) % n;
      final int load = conns[candidates[i]].connected() ? outstanding.get(candidates[i]) : 1 << 20;
      if (load < bestLoad) {
        bestLoad = load;
        best = i;
      }
    }
    return best;
  }

  /** Servers that are replicas of every key, in ring order of the first key. */
  private int[] commonReplicas(final byte[][] keys) {
    if (ring.replication() == ring.servers()) {
      return all;
    }
    int[] common = ring.replicas(keys[0]).clone();
    int n = common.length;
    for (int i = 1; i < keys.length && n > 0; i++) {
      final int[] reps = ring.replicas(keys[i]);
      int m = 0;
      for (int j = 0; j < n; j++) {
        for (final int s : reps) {
          if (s == common[j]) {
            common[m++] = common[j];
            break;
          }
        }
      }
      n = m;
    }
    return n == common.length ? common : Arrays.copyOf(common, n);
  }

  /**
   * Sends {@code get} for {@code keys} to one server and reads its reply. With {@code positions}
   * null the VALUE blocks are relayed into {@link #reply}; otherwise each block is stored in
   * {@link #values} under the client's key position. Returns false after recording a failure.
   */
  private boolean fetch(
      final ServerConnection c,
      final byte[][] keys,
      final int[] positions,
      final int from,
      final int to,
      final long deadline) {
    try {
      send(c, keys, positions, from, to, deadline);
      return receive(c, keys, positions, from, to, deadline);
    } catch (ServerException e) {
      failure(c.index, e.getMessage());
      return false;
    }
  }

  private void send(
      final ServerConnection c,
      final byte[][] keys,
      final int[] positions,
      final int from,
      final int to,
      final long deadline)
      throws ServerException {
    cmd.reset();
    cmd.append(GET);
    for (int i = from; i < to; i++) {
      cmd.append((byte) ' ');
      cmd.append(keys[positions == null ? i : positions[i]]);
    }
    cmd.crlf();
    c.send(cmd.array(), 0, cmd.length(), deadline);
  }

  private boolean receive(
      final ServerConnection c,
      final byte[][] keys,
      final int[] positions,
      final int from,
      final int to,
      final long deadline)
      throws ServerException {
    parser.expect(keys, positions, from, to);
    while (true) {
      final int end = c.readLine(deadline);
      final byte[] b = c.buffer();
      final int start = c.lineStart;
      final ServerReplyParser.Line line = parser.line(b, start, end);
      if (line instanceof ServerReplyParser.End) {
        return true;
      }
      if (line instanceof ServerReplyParser.Failure f) {
        return failed(c, f);
      }
      final ServerReplyParser.Value v = (ServerReplyParser.Value) line;
      final ByteSink sink = positions == null ? reply : values;
      final int blockStart = sink.length();
      sink.append(b, start, end - start);
      sink.crlf();
      c.readInto(v.bytes() + 2, sink, deadline);
      final ServerReplyParser.Failure bad =
          ServerReplyParser.dataBlock(sink.array(), sink.length());
      if (bad != null) {
        return failed(c, bad);
      }
      if (positions != null) {
        valueStart[positions[v.slot()]] = blockStart;
        valueEnd[positions[v.slot()]] = sink.length();
      }
      valuesReturned++;
    }
  }

  private boolean failed(final ServerConnection c, final ServerReplyParser.Failure f) {
    if (f.outOfStep()) {
      c.markFailed(f.dropReason());
    }
    failure(c.index, f.message());
    return false;
  }

  /** Splits the keys over their replicas, fetches the parts and reassembles in key order. */
  private byte[] sharded(final Request r) {
    final byte[][] keys = r.keys;
    final int n = keys.length;
    if (assign.length < n) {
      assign = new int[n];
      valueStart = new int[n];
      valueEnd = new int[n];
    }
    Arrays.fill(perServer, 0);
    Arrays.fill(failedServer, false);
    Arrays.fill(valueStart, 0, n, -1);
    values.reset();
    final int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      final int[] reps = ring.replicas(keys[i]);
      int best = -1;
      int bestLoad = Integer.MAX_VALUE;
      for (int k = 0; k < reps.length; k++) {
        final int s = reps[(int) Math.floorMod(r.ticket + i + k, (long) reps.length)];
        int load = perServer[s] << 16;
        if (balance == ReadBalance.LEAST_OUTSTANDING) {
          load += Math.min(outstanding.get(s), 0xffff);
        }
        if (load < bestLoad) {
          bestLoad = load;
          best = s;
        }
      }
      assign[i] = best;
      perServer[best]++;
    }
    r.sentNs = System.nanoTime();
    boolean pendingKeys = true;
    while (pendingKeys) {
      // Group key positions by server, keeping the client's order within each group.
      int k = 0;
      final int[] groupStart = new int[conns.length + 1];
      for (int s = 0; s < conns.length; s++) {
        groupStart[s] = k;
        for (int i = 0; i < n; i++) {
          if (assign[i] == s && valueStart[i] == -1) {
            order[k++] = i;
          }
        }
      }
      groupStart[conns.length] = k;
      final long now = System.nanoTime();
      final long deadline = now + timeoutNs;
      for (int s = 0; s < conns.length; s++) {
        sentTo[s] = false;
        if (groupStart[s] == groupStart[s + 1]) {
          continue;
        }
        final ServerConnection c = conns[s];
        if (!c.available(now)) {
          failure(s, "unavailable (" + c.lastFailure() + ")");
          failedServer[s] = true;
          stats.server(s, groupStart[s + 1] - groupStart[s], true, now);
          continue;
        }
        try {
          send(c, keys, order, groupStart[s], groupStart[s + 1], deadline);
          sentTo[s] = true;
          outstanding.incrementAndGet(s);
        } catch (ServerException e) {
          failure(s, e.getMessage());
          failedServer[s] = true;
          stats.server(s, groupStart[s + 1] - groupStart[s], true, now);
        }
      }
      for (int s = 0; s < conns.length; s++) {
        if (!sentTo[s]) {
          continue;
        }
        boolean ok;
        try {
          ok = receive(conns[s], keys, order, groupStart[s], groupStart[s + 1], deadline);
        } catch (ServerException e) {
          failure(s, e.getMessage());
          ok = false;
        }
        outstanding.decrementAndGet(s);
        stats.server(s, groupStart[s + 1] - groupStart[s], !ok, System.nanoTime());
        if (ok) {
          // Misses of a successful part are final.
          for (int j = groupStart[s]; j < groupStart[s + 1]; j++) {
            if (valueStart[order[j]] == -1) {
              valueStart[order[j]] = -2;
            }
          }
        } else {
          failedServer[s] = true;
          for (int j = groupStart[s]; j < groupStart[s + 1]; j++) {
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
        for (final int s : ring.replicas(keys[i])) {
          if (!failedServer[s]) {
            alt = s;
            break;
          }
        }
        if (alt < 0) {
          r.repliedNs = System.nanoTime();
          error = true;
          valuesReturned = 0;
          return serverError("get failed on " + failures);
        }
        assign[i] = alt;
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
    reply.append(END);
    return null;
  }

  // --- helpers ------------------------------------------------------------------------------

  private void failure(final int server, final String reason) {
    if (failures.length() > 0) {
      failures.append("; ");
    }
    failures.append(conns[server].address).append(' ').append(reason);
  }

  private static byte[] serverError(final String reason) {
    return RequestDecoder.ascii(
        "SERVER_ERROR " + reason.replace('\r', ' ').replace('\n', ' ') + "\r\n");
  }
}
