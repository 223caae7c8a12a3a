package org.mwlab.middleware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.mwlab.middleware.stats.PoolSpec;
import org.mwlab.middleware.stats.Recorder;
import org.mwlab.middleware.stats.StatsCollector;

/**
 * The 2016 design: per memcached server a read queue served by its read workers (--workers read
 * threads), each with its own blocking connection to that server and one GET at a time, and a
 * write queue served by one write thread that keeps many SETs in flight to the replicas over
 * non-blocking connections.
 *
 * <p>A key's primary is the first server of its replica set on the ring; its replicas are the
 * primary and the next R−1 servers. A SET goes to its primary's write queue and from there to
 * every replica. A GET goes to its primary's read queue; only if the primary fails does it move
 * to the next replica's read queue. A multi-key GET is split by primary and reassembled in the
 * client's key order.
 */
final class Design2016 implements Dispatcher {
  private final ReplicaSelector selector;
  /** Net-thread only. */
  private final MultiGetPlan plan;
  private final List<LinkedBlockingQueue<Part>> readQueues = new ArrayList<>();
  private final List<ReadThread> readers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<WriteThread> writers = new ArrayList<>();
  private final Recorder net;
  private final ServerPool servers;
  private final int capacity;
  private final int readWorkersPerServer;

  Design2016(
      final Config config,
      final ServerPool servers,
      final ReplicaSelector selector,
      final StatsCollector stats) {
    this.servers = servers;
    this.selector = selector;
    this.capacity = config.queueCapacity();
    this.readWorkersPerServer = config.workers();
    this.net = stats.net();
    final int n = servers.size();
    plan = new MultiGetPlan(n);
    for (int s = 0; s < n; s++) {
      // Unbounded: the net-thread keeps to the capacity; failovers from read threads must never
      // wait (read threads waiting on each other's full queues would deadlock).
      final LinkedBlockingQueue<Part> q = new LinkedBlockingQueue<>();
      readQueues.add(q);
      final AtomicInteger inFlight = new AtomicInteger();
      for (int t = 0; t < readWorkersPerServer; t++) {
        final ReadThread r =
            new ReadThread(this, config, servers, s, q, inFlight,
                stats.worker(s * readWorkersPerServer + t));
        readers.add(r);
        threads.add(daemon(r, "read-" + s + "-" + t));
      }
    }
    for (int s = 0; s < n; s++) {
      final WriteThread w;
      try {
        w = new WriteThread(
            config, servers, selector, s, stats.worker(n * readWorkersPerServer + s));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      writers.add(w);
      threads.add(daemon(w, "write-" + s));
    }
  }

  private static Thread daemon(final Runnable r, final String name) {
    final Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Statistics pool of server {@code s}'s read queue. */
  static int readPool(final int s) {
    return 2 * s;
  }

  /** Statistics pool of server {@code s}'s write queue. */
  static int writePool(final int s) {
    return 2 * s + 1;
  }

  static List<PoolSpec> pools(final Config config) {
    final int n = config.servers().size();
    final int readWorkers = config.workers();
    final List<PoolSpec> pools = new ArrayList<>();
    for (int s = 0; s < n; s++) {
      final String address = config.servers().get(s).toString();
      pools.add(new PoolSpec("read", s, address, readWorkers, s * readWorkers));
      pools.add(new PoolSpec("write", s, address, 1, n * readWorkers + s));
    }
    return pools;
  }

  @Override
  public String connect() {
    return QueueThread.connectAll(readers);
  }

  @Override
  public void start() {
    threads.forEach(Thread::start);
  }

  @Override
  public void dispatch(final Request r) {
    if (r.type == RequestType.SET) {
      final int s = selector.primary(r.keys[0]);
      final WriteThread w = writers.get(s);
      while (w.queued() >= capacity) {
        LockSupport.parkNanos(20_000);
      }
      final Part p = new Part(r, null, s, writePool(s), null, null);
      r.enqueueNs = p.enqueueNs = System.nanoTime();
      net.enqueued(p.pool, p.enqueueNs, w.enqueue(p));
    } else {
      final int[][] positions;
      final int[] targets;
      if (r.type == RequestType.GET) {
        targets = new int[] {selector.primary(r.keys[0])};
        positions = new int[][] {null};
      } else {
        plan.byPrimary(selector, r.keys);
        targets = new int[plan.groups()];
        positions = new int[targets.length][];
        int g = 0;
        for (int s = 0; s < servers.size(); s++) {
          if (plan.to(s) > plan.from(s)) {
            targets[g] = s;
            // One part only: it takes all the keys, in order, and relays its reply.
            positions[g++] = targets.length == 1 ? null : plan.positions(s);
          }
        }
      }
      final Fanout f = new Fanout(r, targets.length);
      if (targets.length > 1) {
        f.values = new byte[r.keys.length][];
      }
      for (final int s : targets) {
        while (readQueues.get(s).size() >= capacity) {
          LockSupport.parkNanos(20_000);
        }
      }
      final long now = System.nanoTime();
      r.enqueueNs = now;
      for (int g = 0; g < targets.length; g++) {
        final Part p = new Part(r, f, targets[g], readPool(targets[g]), positions[g], new BitSet());
        p.enqueueNs = now;
        f.add(p);
        final LinkedBlockingQueue<Part> q = readQueues.get(targets[g]);
        q.add(p);
        net.enqueued(p.pool, now, q.size());
      }
    }
    net.queued(r.enqueueNs, waiting());
  }

  /** Parts waiting in all queues. */
  private long waiting() {
    long n = 0;
    for (final LinkedBlockingQueue<Part> q : readQueues) {
      n += q.size();
    }
    for (final WriteThread w : writers) {
      n += w.queued();
    }
    return n;
  }

  /**
   * A read thread's part failed on its server: its keys go as new parts to each key's next replica
   * not yet tried, or, where a key has none left, the request fails. Called before the failed part
   * counts itself done, so the request cannot be answered in between.
   */
  void failover(final Part p, final Recorder stats) {
    final Fanout f = p.fanout;
    if (f.failed) {
      return;
    }
    final BitSet tried = (BitSet) p.tried.clone();
    tried.set(p.server);
    final byte[][] keys = p.request.keys;
    final int k = p.keys();
    final int[] alt = new int[k];
    for (int i = 0; i < k; i++) {
      alt[i] = selector.untried(keys[p.position(i)], tried);
      if (alt[i] < 0) {
        f.failed = true;
        return;
      }
    }
    if (f.values == null) {
      f.values = new byte[keys.length][];
    }
    final List<Part> parts = new ArrayList<>();
    final long now = System.nanoTime();
    for (int s = 0; s < servers.size(); s++) {
      int count = 0;
      for (final int a : alt) {
        if (a == s) {
          count++;
        }
      }
      if (count == 0) {
        continue;
      }
      final int[] positions = new int[count];
      int j = 0;
      for (int i = 0; i < k; i++) {
        if (alt[i] == s) {
          positions[j++] = p.position(i);
        }
      }
      final Part q = new Part(p.request, f, s, readPool(s), positions, tried);
      q.enqueueNs = now;
      parts.add(q);
    }
    f.remaining.addAndGet(parts.size());
    for (final Part q : parts) {
      f.add(q);
      final LinkedBlockingQueue<Part> queue = readQueues.get(q.server);
      queue.add(q);
      stats.enqueued(q.pool, now, queue.size());
    }
  }

  @Override
  public void stop(final long joinMs) {
    readers.forEach(ReadThread::stop);
    writers.forEach(WriteThread::stop);
    for (final Thread t : threads) {
      Middleware.join(t, joinMs);
    }
  }

  @Override
  public String describe() {
    return "design 2016, " + readWorkersPerServer + " read threads and 1 write thread per server";
  }
}
