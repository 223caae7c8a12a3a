package org.mwlab.middleware;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.atomic.AtomicInteger;

/** Hands out free loopback ports from this suite's range, 21000-21999. */
final class Ports {
  private static final AtomicInteger NEXT = new AtomicInteger(21000);

  private Ports() {}

  static int next() {
    while (true) {
      final int p = NEXT.getAndIncrement();
      if (p > 21999) {
        throw new IllegalStateException("port range 21000-21999 exhausted");
      }
      try {
        new ServerSocket(p, 1, InetAddress.getLoopbackAddress()).close();
        return p;
      } catch (IOException e) {
        // in use: try the next one
      }
    }
  }

  static void awaitListening(final int port, final long timeoutMs) {
    final long deadline = System.currentTimeMillis() + timeoutMs;
    while (!Memcached.listening(port)) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("nothing listens on port " + port);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
