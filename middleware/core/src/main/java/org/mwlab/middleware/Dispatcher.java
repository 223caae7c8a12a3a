package org.mwlab.middleware;

import java.util.List;
import org.mwlab.middleware.stats.PoolSpec;
import org.mwlab.middleware.stats.StatsCollector;

/**
 * Where the net-thread's requests go from here: the queues, the threads that serve them and how
 * they talk to the servers. This is all a design changes; the net-thread, the decoder, the
 * limits, the error replies, timeouts and reconnects, shutdown and the statistics are shared.
 */
sealed interface Dispatcher permits Design2018, Design2016 {

  /** The queues and threads of {@code config}'s design, as the statistics number them. */
  static List<PoolSpec> pools(final Config config) {
    return switch (config.design()) {
      case D2018 -> Design2018.pools(config);
      case D2016 -> Design2016.pools(config);
    };
  }

  static Dispatcher create(
      final Config config,
      final ServerPool servers,
      final HashRing ring,
      final StatsCollector stats) {
    final ReplicaSelector selector = new ReplicaSelector(ring, config.readBalance(), servers);
    return switch (config.design()) {
      case D2018 -> new Design2018(config, servers, selector, stats);
      case D2016 -> new Design2016(config, servers, selector, stats);
    };
  }

  /** Opens the server connections; returns the failures, empty if all connected. */
  String connect();

  void start();

  /**
   * Net-thread: a request whose turn has come (its predecessor on the same connection is
   * answered). Waits while the queue it goes to is full: not reading meanwhile is the
   * backpressure.
   */
  void dispatch(Request r);

  /**
   * Net-thread, once per selector round: hands over what {@link #dispatch} kept back to queue it
   * together with the round's other requests. Nothing is kept back by default.
   */
  default void flush() {}

  /**
   * After the net-thread has drained: the threads finish what is queued and in flight, then end;
   * waits up to {@code joinMs} for each.
   */
  void stop(long joinMs);

  /** Requests waiting in the queues now (for tests); -1 if the design does not say. */
  default int queued() {
    return -1;
  }

  /** Requests taken from the queues and not yet answered (for tests); -1 if not known. */
  default int inService() {
    return -1;
  }

  /** Threads and queues, for the start-up line. */
  String describe();
}
