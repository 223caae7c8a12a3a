package org.mwlab.middleware;

import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The memcached servers and what every thread shares about them: their addresses, the requests
 * outstanding at each (for least-outstanding reads), when a connection to each last got an answer
 * (ends other connections' reconnect waits), the timeouts and the watchdog that enforces them.
 * Each thread owns its connections; only these counters are shared.
 */
final class ServerPool {
  private final List<HostPort> addresses;
  private final AtomicIntegerArray outstanding;
  private final AtomicLongArray answeredAt;
  private final int timeoutMs;
  private final long reconnectMinNs;
  private final long reconnectMaxNs;
  private final Watchdog watchdog;
  private final Thread watchdogThread;

  ServerPool(final Config config) {
    this.addresses = config.servers();
    this.outstanding = new AtomicIntegerArray(addresses.size());
    this.answeredAt = new AtomicLongArray(addresses.size());
    this.timeoutMs = config.serverTimeoutMs();
    this.reconnectMinNs = config.reconnectMinMs() * 1_000_000L;
    this.reconnectMaxNs = config.reconnectMaxMs() * 1_000_000L;
    this.watchdog = new Watchdog(timeoutMs);
    this.watchdogThread = new Thread(watchdog, "watchdog");
    watchdogThread.setDaemon(true);
  }

  int size() {
    return addresses.size();
  }

  HostPort address(final int server) {
    return addresses.get(server);
  }

  int timeoutMs() {
    return timeoutMs;
  }

  long timeoutNs() {
    return timeoutMs * 1_000_000L;
  }

  long reconnectMinNs() {
    return reconnectMinNs;
  }

  long reconnectMaxNs() {
    return reconnectMaxNs;
  }

  /** A new blocking connection to {@code server} (not yet connected), under the watchdog. */
  ServerConnection blockingConnection(final int server) {
    return blockingConnection(server, ServerConnection.DEFAULT_READ_BUFFER);
  }

  /** As {@link #blockingConnection(int)}, reading up to {@code readBuffer} bytes per call. */
  ServerConnection blockingConnection(final int server, final int readBuffer) {
    final ServerConnection c = new ServerConnection(this, server, readBuffer);
    watchdog.watch(c);
    return c;
  }

  /** A request was sent to {@code server}. */
  void sent(final int server) {
    outstanding.incrementAndGet(server);
  }

  /** A request sent to {@code server} was answered or failed. */
  void done(final int server) {
    outstanding.decrementAndGet(server);
  }

  int outstanding(final int server) {
    return outstanding.get(server);
  }

  long answeredAt(final int server) {
    return answeredAt.get(server);
  }

  void answered(final int server, final long now) {
    answeredAt.set(server, now);
  }

  void start() {
    watchdogThread.start();
  }

  void stop() {
    watchdog.stop();
  }
}
