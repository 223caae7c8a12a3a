package org.mwlab.simplemq.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Blocking pops and reads ({@code --notify}): a request that found nothing is parked here,
 * holding no worker and making no database call, until a notification for its queue and
 * receiver arrives (sql/notify.sql: a committed insert, or a nack) or its wait ends; then it
 * goes back to the distributor and a worker tries it once more. One thread, with its own
 * connection that LISTENs.
 */
final class Waiter implements Runnable {

  /** The channel sql/notify.sql notifies, with the payload "queue:receiver". */
  static final String CHANNEL = "simplemq";
  /** How often waits are checked for their end, at least. */
  private static final int POLL_MS = 50;
  /** The advisory lock that keeps two middlewares from installing the triggers at once. */
  private static final long INSTALL_LOCK = 0x73696d706c656dL;

  record Key(int queue, int receiver) {}

  private record Parked(Worker.Job job, long deadlineNs) {}

  private final Connection connection;
  private final Distributor distributor;
  private final Stats stats;
  /** Notifications seen per key; a request parks only if none came since it was tried. */
  private final Map<Key, Long> generations = new HashMap<>();
  private final Map<Key, List<Parked>> parked = new HashMap<>();
  private final AtomicLong notifications = new AtomicLong();
  private volatile boolean stopping;

  /** Installs the triggers and LISTENs; {@code url} is the workers' database. */
  Waiter(final String url, final Distributor distributor, final Stats stats)
      throws SQLException, IOException {
    this.connection = DriverManager.getConnection(url);
    this.distributor = distributor;
    this.stats = stats;
    try (InputStream in = Waiter.class.getResourceAsStream("/sql/notify.sql")) {
      if (in == null) {
        throw new IOException("sql/notify.sql is not in the middleware's jar");
      }
      final String sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      connection.setAutoCommit(false);
      try (Statement s = connection.createStatement()) {
        s.execute("SELECT pg_advisory_xact_lock(" + INSTALL_LOCK + ")");
        s.execute(sql);
      }
      connection.commit();
      connection.setAutoCommit(true);
    }
    try (Statement s = connection.createStatement()) {
      s.execute("LISTEN " + CHANNEL);
    }
  }

  /** The notifications seen for a key so far: taken before a waiting request is tried. */
  synchronized long generation(final Key key) {
    return generations.getOrDefault(key, 0L);
  }

  /**
   * Parks a request that found nothing, unless a notification for its key came since
   * {@code seen} (then it goes back at once) or the middleware is stopping (false: answer it
   * now).
   */
  boolean park(final Worker.Job job, final Key key, final long seen, final long deadlineNs) {
    synchronized (this) {
      if (stopping) {
        return false;
      }
      if (generations.getOrDefault(key, 0L) == seen) {
        parked.computeIfAbsent(key, k -> new ArrayList<>()).add(new Parked(job, deadlineNs));
        stats.parked();
        return true;
      }
    }
    distributor.requeue(job);
    return true;
  }

  /** Wakes every parked request, which is then answered with what it finds. */
  void stop() {
    final List<Parked> all = new ArrayList<>();
    synchronized (this) {
      stopping = true;
      parked.values().forEach(all::addAll);
      parked.clear();
    }
    all.forEach(p -> distributor.requeue(p.job()));
  }

  @Override
  public void run() {
    final PGConnection pg;
    try {
      pg = connection.unwrap(PGConnection.class);
    } catch (final SQLException e) {
      throw new IllegalStateException(e);
    }
    try {
      while (!stopping) {
        final PGNotification[] got = pg.getNotifications(POLL_MS);
        final List<Worker.Job> woken = new ArrayList<>();
        synchronized (this) {
          for (final PGNotification n : got == null ? new PGNotification[0] : got) {
            final Key key = parse(n.getParameter());
            if (key == null) {
              continue;
            }
            notifications.incrementAndGet();
            generations.merge(key, 1L, Long::sum);
            final List<Parked> ps = parked.remove(key);
            if (ps != null) {
              ps.forEach(p -> woken.add(p.job()));
            }
          }
          final long now = System.nanoTime();
          for (final Iterator<List<Parked>> it = parked.values().iterator(); it.hasNext(); ) {
            final List<Parked> ps = it.next();
            ps.removeIf(p -> {
              final boolean ended = now - p.deadlineNs() >= 0;
              if (ended) {
                woken.add(p.job());
              }
              return ended;
            });
            if (ps.isEmpty()) {
              it.remove();
            }
          }
        }
        stats.woken(woken.size());
        woken.forEach(distributor::requeue);
      }
    } catch (final SQLException e) {
      if (!stopping) {
        System.err.println("simplemq: waiter: the LISTEN connection failed: " + e.getMessage()
            + "; parked requests are answered now");
        stop();
      }
    } finally {
      try {
        connection.close();
      } catch (final SQLException ignored) {
        // Shutting down.
      }
    }
  }

  long notifications() {
    return notifications.get();
  }

  private static Key parse(final String payload) {
    final int colon = payload.indexOf(':');
    try {
      return colon < 0 ? null : new Key(Integer.parseInt(payload.substring(0, colon)),
          Integer.parseInt(payload.substring(colon + 1)));
    } catch (final NumberFormatException e) {
      return null;
    }
  }
}
