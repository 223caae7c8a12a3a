package org.mwlab.middleware;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import org.mwlab.middleware.stats.StatsClock;
import org.mwlab.middleware.stats.StatsCollector;

/** The running middleware: net-thread, bounded queue, workers and statistics. */
public final class Middleware implements AutoCloseable {
  private final Config config;
  private final StatsCollector collector;
  private final NetThread net;
  private final LinkedBlockingQueue<Request> queue;
  private final List<Worker> workers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final Thread netThread;
  private final Watchdog watchdog;
  private final Thread watchdogThread;
  private boolean closed;

  private Middleware(final Config config) throws IOException {
    this.config = config;
    final StatsClock clock = new StatsClock(config.statsWindowMs());
    collector =
        new StatsCollector(
            clock,
            config.statsDir(),
            config.workers(),
            config.servers().stream().map(HostPort::toString).toList(),
            config.traceSample() > 0,
            config.describe());
    queue = new LinkedBlockingQueue<>(config.queueCapacity());
    final HashRing ring =
        new HashRing(config.servers(), config.replication(), config.virtualNodes());
    final AtomicIntegerArray outstanding = new AtomicIntegerArray(config.servers().size());
    final AtomicLongArray connectedAt = new AtomicLongArray(config.servers().size());
    watchdog = new Watchdog(config.serverTimeoutMs());
    watchdogThread = new Thread(watchdog, "watchdog");
    for (int i = 0; i < config.workers(); i++) {
      final Worker w = new Worker(config, queue, ring, collector.worker(i), outstanding,
          connectedAt, watchdog);
      final String failed = w.connect();
      if (!failed.isEmpty() && i == 0) {
        System.err.println("middleware: warning: cannot reach " + failed + "; will retry");
      }
      workers.add(w);
    }
    net = new NetThread(config, queue, clock, collector);
    netThread = new Thread(net, "net-thread");
  }

  /** Starts a middleware; it serves until {@link #close()}. */
  public static Middleware start(final Config config) throws IOException {
    final Middleware m = new Middleware(config);
    m.watchdogThread.setDaemon(true);
    m.watchdogThread.start();
    for (int i = 0; i < m.workers.size(); i++) {
      final Thread t = new Thread(m.workers.get(i), "worker-" + i);
      t.setDaemon(true);
      m.threads.add(t);
      t.start();
    }
    m.netThread.setDaemon(true);
    m.netThread.start();
    m.collector.start();
    return m;
  }

  public int port() {
    return net.localPort();
  }

  public Config config() {
    return config;
  }

  /**
   * Stops accepting and reading, lets the workers answer every request already read (also those
   * waiting behind an earlier request of their connection), then writes the remaining statistics.
   */
  @Override
  public synchronized void close() {
    shutdown(false);
  }

  /** As {@link #close()}, marking the statistics as written by a clean shutdown. */
  public synchronized void shutdown(final boolean clean) {
    if (closed) {
      return;
    }
    closed = true;
    net.stop();
    // The net-thread ends once every request it read is answered (it gives up on a stall).
    join(netThread, 0);
    for (final Worker w : workers) {
      w.stop();
    }
    for (final Thread t : threads) {
      join(t, 2L * config.serverTimeoutMs() + 2000);
    }
    watchdog.stop();
    net.closeAll();
    collector.finish(clean);
  }

  private static void join(final Thread t, final long ms) {
    try {
      t.join(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
