package org.mwlab.middleware;

import java.util.function.IntPredicate;
import org.mwlab.middleware.stats.Recorder;

/**
 * What the routes of one design-2018 worker share: its blocking connection to every server, the
 * buffer the client's reply is built in, and the outcome so far of the request in progress (the
 * failures noted, the values found). Worker thread only; {@link #start} begins each request.
 */
final class RouteContext {
  final ReplicaSelector selector;
  final ServerPool servers;
  /** By server index. */
  final ServerConnection[] conns;
  final Recorder stats;
  final long timeoutNs;
  /** Relays: a reply that passes through unchanged is written from the server's buffer. */
  final GetExchange exchange = new GetExchange(true);
  /** Where a {@link #data} reply is built. */
  final ByteSink reply = new ByteSink(64 * 1024);
  /** The reply that is the content of {@link #reply}. */
  final RouteReply.Data data = new RouteReply.Data(reply);
  /** The reply that is a server's, in its connection's read buffer. */
  final RouteReply.Relay relay = new RouteReply.Relay();
  /** Whether server s's connection is open; kept so that choosing a replica allocates nothing. */
  final IntPredicate connected;

  private final StringBuilder failures = new StringBuilder();
  /** VALUE blocks the request returns so far, for the statistics. */
  int values;

  RouteContext(
      final ReplicaSelector selector,
      final ServerPool servers,
      final ServerConnection[] conns,
      final Recorder stats) {
    this.selector = selector;
    this.servers = servers;
    this.conns = conns;
    this.stats = stats;
    this.timeoutNs = servers.timeoutNs();
    this.connected = s -> conns[s].connected();
  }

  /**
   * The reply of a successful exchange on {@code c}: relayed from its read buffer if the exchange
   * left it there, else {@link #reply} with END appended.
   */
  RouteReply got(final ServerConnection c) {
    final java.nio.ByteBuffer relayed = exchange.relayed(c);
    if (relayed != null) {
      return relay.of(relayed);
    }
    reply.append(Replies.END);
    return data;
  }

  /** A request begins: no values, no failures. */
  void start() {
    values = 0;
    failures.setLength(0);
  }

  /** A request begins again on its own; {@code earlier} are the failures of its first attempt. */
  void start(final String earlier) {
    start();
    failures.append(earlier);
  }

  /** Notes that {@code server} failed the request. */
  void failure(final int server, final String reason) {
    if (failures.length() > 0) {
      failures.append("; ");
    }
    failures.append(conns[server].address).append(' ').append(reason);
  }

  /** Notes that {@code server}'s connection is down and waits for its reconnect. */
  void unavailable(final int server) {
    failure(server, "unavailable (" + conns[server].lastFailure() + ")");
  }

  /** The failures noted, each as {@code <address> <reason>}, separated by "; ". */
  CharSequence failures() {
    return failures;
  }
}
