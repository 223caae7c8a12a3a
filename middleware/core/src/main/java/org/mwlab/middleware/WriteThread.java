package org.mwlab.middleware;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.mwlab.middleware.stats.Recorder;

/**
 * Design 2016: a server's write thread. It waits on a {@link Selector} over its non-blocking
 * connections to the replicas; queuing a SET wakes it. It sends each SET to all of the key's
 * replicas without waiting for their replies, so many SETs are in flight at once, and answers the
 * client when every replica has replied: {@code STORED} only if every replica stored the value,
 * otherwise a {@code SERVER_ERROR} that names each failure, in replica order ({@link
 * SetReplicationRoute#reply}, the reply rule design 2018 follows too).
 */
final class WriteThread implements Runnable {
  /** A SET in flight: one outcome per replica. Write thread only. */
  static final class PendingSet {
    final Part part;
    final int[] replicas;
    final String[] failures;
    int remaining;

    PendingSet(final Part part, final int[] replicas) {
      this.part = part;
      this.replicas = replicas;
      this.failures = new String[replicas.length];
      this.remaining = replicas.length;
    }
  }

  private final ConcurrentLinkedQueue<Part> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final Selector selector;
  private final ServerPool servers;
  private final ReplicaSelector replicas;
  private final int pool;
  private final Recorder stats;
  private final long timeoutNs;
  private final int traceSample;
  /** Connections by server index, opened on first use. */
  private final AsyncServerConnection[] conns;
  private int inFlight;
  private volatile boolean running = true;

  WriteThread(
      final Config config,
      final ServerPool servers,
      final ReplicaSelector replicas,
      final int server,
      final Recorder stats)
      throws IOException {
    this.selector = Selector.open();
    this.servers = servers;
    this.replicas = replicas;
    this.pool = Design2016.writePool(server);
    this.stats = stats;
    this.timeoutNs = servers.timeoutNs();
    this.traceSample = config.traceSample();
    this.conns = new AsyncServerConnection[servers.size()];
  }

  /** Net-thread: queues a SET and wakes the thread; returns the queue's length after. */
  int enqueue(final Part p) {
    queue.add(p);
    final int n = queued.incrementAndGet();
    selector.wakeup();
    return n;
  }

  /** SETs waiting in the queue. */
  int queued() {
    return queued.get();
  }

  void stop() {
    running = false;
    selector.wakeup();
  }

  @Override
  public void run() {
    try {
      // After stop: every SET queued or in flight is still answered (each has a deadline).
      while (running || queued.get() > 0 || inFlight > 0) {
        // Between rounds every time taken is recorded (a SET in flight has its enqueue and
        // dequeue recorded; its end comes with a later round's times).
        stats.idle();
        selector.select(waitMs());
        stats.hold();
        final long busyFrom = System.nanoTime();
        final Iterator<SelectionKey> it = selector.selectedKeys().iterator();
        while (it.hasNext()) {
          final SelectionKey k = it.next();
          it.remove();
          ((AsyncServerConnection) k.attachment()).ready(k);
        }
        Part p;
        while ((p = queue.poll()) != null) {
          queued.decrementAndGet();
          try {
            start(p);
          } catch (RuntimeException e) {
            // Never leave a client without an answer: its exchanges end with the connections.
            System.err.println("middleware: write thread: " + e);
            for (final AsyncServerConnection c : conns) {
              if (c != null) {
                c.fail("internal error: " + e);
              }
            }
          }
        }
        final long now = System.nanoTime();
        for (final AsyncServerConnection c : conns) {
          if (c != null) {
            c.expireIfLate(now);
          }
        }
        stats.busy(busyFrom, System.nanoTime());
      }
    } catch (IOException e) {
      System.err.println("middleware: write thread failed: " + e);
    } finally {
      stats.idle();
      for (final AsyncServerConnection c : conns) {
        if (c != null) {
          c.close();
        }
      }
      try {
        selector.close();
      } catch (IOException e) {
        // shutting down
      }
    }
  }

  /** Until the next deadline, at most 50 ms (to notice a stop), at least 1 ms. */
  private long waitMs() {
    long next = Long.MAX_VALUE;
    for (final AsyncServerConnection c : conns) {
      if (c != null) {
        next = Math.min(next, c.nextDeadline());
      }
    }
    if (next == Long.MAX_VALUE) {
      return 50;
    }
    final long ms = (next - System.nanoTime()) / 1_000_000L + 1;
    return Math.max(1, Math.min(50, ms));
  }

  private AsyncServerConnection conn(final int server) {
    AsyncServerConnection c = conns[server];
    if (c == null) {
      c = new AsyncServerConnection(servers, server, selector, this::ended);
      conns[server] = c;
    }
    return c;
  }

  /** Sends a SET to each replica of its key, without waiting for the replies. */
  private void start(final Part p) {
    final long now = System.nanoTime();
    p.dequeueNs = now;
    inFlight++;
    stats.dequeued(pool, inFlight, now);
    final Request r = p.request;
    final PendingSet set = new PendingSet(p, replicas.replicas(r.keys[0]));
    p.sentNs = now;
    final long deadline = now + timeoutNs;
    for (int k = 0; k < set.replicas.length; k++) {
      final int s = set.replicas[k];
      final AsyncServerConnection c = conn(s);
      if (!c.available(now)) {
        stats.server(s, 1, true, now);
        outcome(set, k, "unavailable (" + c.lastFailure() + ")");
        continue;
      }
      servers.sent(s);
      c.send(r.payload, new AsyncServerConnection.Exchange(set, k, deadline));
    }
  }

  /** A replica's exchange ended. */
  private void ended(final AsyncServerConnection.Exchange e, final String failure) {
    final int s = e.set().replicas[e.replica()];
    servers.done(s);
    stats.server(s, 1, failure != null, System.nanoTime());
    outcome(e.set(), e.replica(), failure);
  }

  private void outcome(final PendingSet set, final int replica, final String failure) {
    set.failures[replica] = failure;
    if (--set.remaining == 0) {
      answer(set);
    }
  }

  /** Every replica has answered: replies to the client and records the SET. */
  private void answer(final PendingSet set) {
    final Part p = set.part;
    final Request r = p.request;
    p.repliedNs = System.nanoTime();
    final StringBuilder failed = new StringBuilder();
    for (int k = 0; k < set.replicas.length; k++) {
      if (set.failures[k] != null) {
        failed.append(failed.length() == 0 ? "" : "; ").append(servers.address(set.replicas[k]))
            .append(' ').append(set.failures[k]);
      }
    }
    final RouteReply reply = SetReplicationRoute.reply(r, failed);
    final boolean error = reply.error();
    reply.answer(r);
    r.writtenNs = System.nanoTime();
    inFlight--;
    r.dequeueNs = p.dequeueNs;
    r.sentNs = p.sentNs;
    r.repliedNs = p.repliedNs;
    final int type = r.type.ordinal();
    stats.request(type, 1, r.arrivalNs, r.enqueueNs, r.dequeueNs, r.sentNs, r.repliedNs,
        r.writtenNs, 0, error, traceSample > 0 && r.id % traceSample == 0, pool, 1);
    stats.part(pool, type, 1, 1, p.dequeueNs - p.enqueueNs, p.repliedNs - p.sentNs,
        r.writtenNs - r.arrivalNs, error, r.writtenNs);
    stats.partDone(pool, r.writtenNs);
  }
}
