package org.mwlab.simplemq.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A SimpleMQ middleware: a distributor and its workers, each worker with its own database
 * connection. {@link #stop} drains it: requests already read are run and answered (so a pop
 * that removed a row reaches its client), new ones are refused, then the threads end.
 */
public final class Middleware implements AutoCloseable {

  /** How the middleware runs. */
  public record Config(
      InetSocketAddress listen,
      String databaseUrl,
      int workers,
      int maxFrame,
      int maxBody,
      Path statsDir,
      int statsWindowMs,
      Limits limits,
      Path holdJournal,
      long holdAfterPops,
      int groupCommit,
      boolean blockingWaits) {

    /** With the default limits, each request its own transaction, no test-only commit hold. */
    public Config(final InetSocketAddress listen, final String databaseUrl, final int workers,
        final int maxFrame, final int maxBody, final Path statsDir, final int statsWindowMs) {
      this(listen, databaseUrl, workers, maxFrame, maxBody, statsDir, statsWindowMs,
          Limits.DEFAULTS, null, -1, 1, false);
    }
  }

  private final Config config;
  private final Stats stats;
  private final Dispatch dispatch;
  private final Distributor distributor;
  private final List<Worker> workers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final Thread distributorThread;
  private final Waiter waiter;
  private final Thread waiterThread;

  /** Opens every worker's database connection, then starts listening. */
  public Middleware(final Config config) throws IOException, SQLException {
    this.config = config;
    this.stats =
        new Stats(config.workers(), config.statsDir() == null ? null
            : new WindowStats(config.statsDir(), config.statsWindowMs(), config.workers()));
    this.dispatch = Dispatch.of(config.workers(), config.groupCommit());
    this.distributor =
        new Distributor(config.listen(), dispatch, config.maxFrame(), config.maxBody(),
            config.limits(), stats);
    final List<Database> databases = new ArrayList<>();
    try {
      for (int i = 0; i < config.workers(); i++) {
        databases.add(new Database(config.databaseUrl()));
      }
    } catch (final SQLException e) {
      for (final Database d : databases) {
        d.close();
      }
      throw e;
    }
    final CommitHold hold = config.holdJournal() == null ? null
        : new CommitHold(config.holdAfterPops(), config.holdJournal());
    if (config.blockingWaits()) {
      try {
        this.waiter = new Waiter(config.databaseUrl(), distributor, stats);
      } catch (final SQLException | IOException e) {
        for (final Database d : databases) {
          d.close();
        }
        throw e;
      }
    } else {
      this.waiter = null;
    }
    for (int i = 0; i < config.workers(); i++) {
      final Worker w =
          new Worker(i, databases.get(i), dispatch, distributor, stats, hold, waiter);
      workers.add(w);
      final Thread t = new Thread(w, "worker-" + i);
      threads.add(t);
      t.start();
    }
    distributorThread = new Thread(distributor, "distributor");
    distributorThread.start();
    if (waiter != null) {
      waiterThread = new Thread(waiter, "waiter");
      waiterThread.start();
    } else {
      waiterThread = null;
    }
  }

  public InetSocketAddress address() throws IOException {
    return distributor.address();
  }

  /**
   * Drains and stops; waits up to {@code timeoutMs} for the requests in flight. Writes the
   * statistics.
   */
  public void stop(final long timeoutMs) throws InterruptedException, IOException {
    if (waiter != null) {
      // Parked requests are answered with what they find now, so the drain can end.
      waiter.stop();
    }
    distributor.drain();
    distributorThread.join(timeoutMs);
    if (waiterThread != null) {
      waiterThread.join(timeoutMs);
    }
    for (final Worker w : workers) {
      if (!dispatch.stop(w, TimeUnit.MILLISECONDS.toNanos(timeoutMs))) {
        break;
      }
    }
    for (final Thread t : threads) {
      t.join(timeoutMs);
    }
    if (config.statsDir() != null) {
      stats.write(config.statsDir(), describe());
    }
  }

  private Map<String, Object> describe() {
    final Map<String, Object> m = new LinkedHashMap<>();
    m.put("listen", config.listen().getHostString() + ":" + config.listen().getPort());
    m.put("workers", config.workers());
    m.put("group_commit", config.groupCommit());
    m.put("notify", config.blockingWaits());
    m.put("max_frame", config.maxFrame());
    m.put("max_body", config.maxBody());
    m.put("max_connections", config.limits().maxConnections());
    m.put("max_pending", config.limits().maxPending());
    m.put("max_output", config.limits().maxOutputBytes());
    m.put("frame_timeout_ms", config.limits().frameTimeoutMs());
    m.put("stats_window_ms", config.statsWindowMs());
    return m;
  }

  @Override
  public void close() throws IOException {
    try {
      stop(10_000);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
