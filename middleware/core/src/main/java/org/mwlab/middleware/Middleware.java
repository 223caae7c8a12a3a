package org.mwlab.middleware;

import java.io.IOException;
import org.mwlab.middleware.stats.StatsClock;
import org.mwlab.middleware.stats.StatsCollector;

/** The running middleware: net-thread, the design's queues and threads, and statistics. */
public final class Middleware implements AutoCloseable {
  private final Config config;
  private final StatsCollector collector;
  private final ServerPool servers;
  private final Dispatcher dispatcher;
  private final NetThread net;
  private final Thread netThread;
  private boolean closed;

  private Middleware(final Config config) throws IOException {
    this.config = config;
    final StatsClock clock = new StatsClock(config.statsWindowMs());
    collector =
        new StatsCollector(
            clock,
            config.statsDir(),
            Dispatcher.pools(config),
            config.servers().stream().map(HostPort::toString).toList(),
            config.traceSample() > 0,
            config.describe(),
            config.design().label());
    servers = new ServerPool(config);
    final HashRing ring =
        new HashRing(config.servers(), config.replication(), config.virtualNodes());
    dispatcher = Dispatcher.create(config, servers, ring, collector);
    final String failed = dispatcher.connect();
    if (!failed.isEmpty()) {
      System.err.println("middleware: warning: cannot reach " + failed + "; will retry");
    }
    net = new NetThread(config, dispatcher, clock, collector);
    netThread = new Thread(net, "net-thread");
  }

  /** Starts a middleware; it serves until {@link #close()}. */
  public static Middleware start(final Config config) throws IOException {
    final Middleware m = new Middleware(config);
    m.servers.start();
    m.dispatcher.start();
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

  /** Requests waiting in the design's queues now; -1 if the design does not say. */
  int queued() {
    return dispatcher.queued();
  }

  /** Requests the design's threads have taken and not yet answered; -1 if not known. */
  int inService() {
    return dispatcher.inService();
  }

  /** Threads and queues of the design, for the start-up line. */
  String describe() {
    return dispatcher.describe();
  }

  /**
   * Stops accepting and reading, lets the design's threads answer every request already read
   * (also those waiting behind an earlier request of their connection), then writes the remaining
   * statistics.
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
    dispatcher.stop(2L * config.serverTimeoutMs() + 2000);
    servers.stop();
    net.closeAll();
    collector.finish(clean);
  }

  static void join(final Thread t, final long ms) {
    try {
      t.join(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
