package org.mwlab.middleware;

import java.net.InetSocketAddress;

/** A memcached server address, written {@code host:port}. */
public record HostPort(String host, int port) {

  public HostPort {
    if (host.isEmpty()) {
      throw new IllegalArgumentException("empty host");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
  }

  /** Parses {@code host:port}; the last colon separates the port. */
  public static HostPort parse(final String text) {
    final int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("expected host:port, got '" + text + "'");
    }
    final int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad port in '" + text + "'", e);
    }
    return new HostPort(text.substring(0, colon), port);
  }

  public InetSocketAddress socketAddress() {
    return new InetSocketAddress(host, port);
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
