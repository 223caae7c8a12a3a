package org.mwlab.middleware;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.mwlab.middleware.stats.PoolSpec;
import org.mwlab.middleware.stats.Recorder;
import org.mwlab.middleware.stats.StatsCollector;

/**
 * The 2018 design: one bounded queue shared by W workers; each worker owns a blocking connection
 * to every server, takes a whole request and sends it to the servers it needs.
 */
final class Design2018 implements Dispatcher {
  private final LinkedBlockingQueue<Request> queue;
  private final List<Worker> workers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final Recorder net;

  Design2018(
      final Config config,
      final ServerPool servers,
      final ReplicaSelector selector,
      final StatsCollector stats) {
    queue = new LinkedBlockingQueue<>(config.queueCapacity());
    net = stats.net();
    final AtomicInteger inFlight = new AtomicInteger();
    for (int i = 0; i < config.workers(); i++) {
      final Worker w = new Worker(config, queue, selector, servers, stats.worker(i), inFlight);
      workers.add(w);
      final Thread t = new Thread(w, "worker-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  static List<PoolSpec> pools(final Config config) {
    return List.of(new PoolSpec("shared", -1, null, config.workers(), 0));
  }

  @Override
  public String connect() {
    return QueueThread.connectAll(workers);
  }

  @Override
  public void start() {
    threads.forEach(Thread::start);
  }

  @Override
  public void dispatch(final Request r) {
    r.enqueueNs = System.nanoTime();
    if (!queue.offer(r)) {
      // Full: wait for the workers (they outlive the net-thread, and every server exchange has a
      // deadline).
      do {
        LockSupport.parkNanos(20_000);
        r.enqueueNs = System.nanoTime();
      } while (!queue.offer(r));
    }
    final int length = queue.size();
    net.arrival(r.arrivalNs, length);
    net.enqueued(Worker.POOL, r.enqueueNs, length);
  }

  @Override
  public void stop(final long joinMs) {
    workers.forEach(Worker::stop);
    for (final Thread t : threads) {
      Middleware.join(t, joinMs);
    }
  }

  @Override
  public String describe() {
    return "design 2018, " + workers.size() + " workers";
  }
}
