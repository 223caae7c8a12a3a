package org.mwlab.middleware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The kernel's queues of one loopback TCP connection, from /proc/net/tcp and /proc/net/tcp6:
 * {@code rx} = bytes received but not yet read by the application, {@code tx} = bytes written
 * by the application but not yet acknowledged by the peer.
 */
record TcpQueues(long tx, long rx) {

  /** The queues of the socket with local port {@code local} connected to port {@code remote}. */
  static TcpQueues of(final int local, final int remote) {
    for (final String file : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
      try {
        for (final String line : Files.readAllLines(Path.of(file))) {
          // sl local_address rem_address st tx_queue:rx_queue ...; addresses are HEXADDR:HEXPORT
          final String[] f = line.trim().split("\\s+");
          if (f.length < 5 || !f[1].contains(":") || !f[4].contains(":")) {
            continue;
          }
          if (port(f[1]) == local && port(f[2]) == remote) {
            final String[] q = f[4].split(":");
            return new TcpQueues(Long.parseLong(q[0], 16), Long.parseLong(q[1], 16));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    throw new IllegalStateException("no TCP connection from port " + local + " to " + remote);
  }

  private static int port(final String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1), 16);
  }
}
