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
 * to every server, takes a whole request and sends it to the servers it needs. With {@code
 * --max-batch} above 1 the net-thread hands over each selector round's requests together ({@link
 * #flush}) and a worker takes up to that many at once ({@link BatchQueue}).
 */
final class Design2018 implements Dispatcher {
  /** Batch size 1: the queue, one hand-off per request. */
  private final LinkedBlockingQueue<Request> queue;
  /** Batch size above 1: the queue and the net-thread's requests of the current round. */
  private final BatchQueue batchQueue;
  private final List<Request> round = new ArrayList<>();
  private int[] lengths = new int[64];
  private final List<Worker> workers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final Recorder net;
  private final int maxBatch;
  private final AtomicInteger inFlight;

  Design2018(
      final Config config,
      final ServerPool servers,
      final ReplicaSelector selector,
      final StatsCollector stats) {
    maxBatch = config.maxBatch();
    final boolean batching = config.maxBatch() > 1;
    queue = batching ? null : new LinkedBlockingQueue<>(config.queueCapacity());
    batchQueue = batching ? new BatchQueue(config.queueCapacity(), config.maxBatch()) : null;
    net = stats.net();
    inFlight = new AtomicInteger();
    final QueueThread.Source<Request> source =
        batching ? batchQueue : QueueThread.Source.of(queue);
    for (int i = 0; i < config.workers(); i++) {
      final Worker w = new Worker(config, source, selector, servers, stats.worker(i), inFlight);
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
    if (batchQueue != null) {
      round.add(r);
      return;
    }
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
    net.queued(r.enqueueNs, length);
    net.enqueued(Worker.POOL, r.enqueueNs, length);
  }

  /** Net-thread: queues the round's requests together, waiting while the queue is full. */
  @Override
  public void flush() {
    if (round.isEmpty()) {
      return;
    }
    if (lengths.length < round.size()) {
      lengths = new int[Math.max(round.size(), 2 * lengths.length)];
    }
    int done = 0;
    while (true) {
      final int from = done;
      final long now = System.nanoTime();
      done += batchQueue.offer(round, from, now, lengths);
      for (int i = from; i < done; i++) {
        final Request r = round.get(i);
        net.queued(r.enqueueNs, lengths[i]);
        net.enqueued(Worker.POOL, r.enqueueNs, lengths[i]);
      }
      if (done == round.size()) {
        break;
      }
      // Full: as with one request at a time, wait for the workers.
      LockSupport.parkNanos(20_000);
    }
    round.clear();
  }

  @Override
  public void stop(final long joinMs) {
    workers.forEach(Worker::stop);
    for (final Thread t : threads) {
      Middleware.join(t, joinMs);
    }
  }

  @Override
  public int queued() {
    return batchQueue != null ? batchQueue.size() : queue.size();
  }

  @Override
  public int inService() {
    return inFlight.get();
  }

  @Override
  public String describe() {
    return "design 2018, " + workers.size() + " workers"
        + (batchQueue == null ? "" : ", batches of up to " + maxBatch);
  }
}
