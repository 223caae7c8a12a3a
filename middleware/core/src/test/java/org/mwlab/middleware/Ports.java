package org.mwlab.middleware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/** Hands out free loopback ports from this suite's range, 24100-24999, and waits for servers. */
final class Ports {
  static final int FIRST = 24100;
  static final int LAST = 24999;
  private static final int SIZE = LAST - FIRST + 1;
  /** Starts at an offset of its own in every JVM, so that two suites running at once rarely meet. */
  private static final AtomicInteger NEXT =
      new AtomicInteger((int) (ProcessHandle.current().pid() * 97 % SIZE));

  private Ports() {}

  static int next() {
    for (int tried = 0; tried < SIZE; tried++) {
      final int p = FIRST + Math.floorMod(NEXT.getAndIncrement(), SIZE);
      try {
        new ServerSocket(p, 1, InetAddress.getLoopbackAddress()).close();
        return p;
      } catch (IOException e) {
        // in use: try the next one
      }
    }
    throw new IllegalStateException("no free port in " + FIRST + "-" + LAST);
  }

  /** The process ended before it served; {@code status} is its exit status. */
  static final class ExitedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    ExitedException(final String what, final int status) {
      super(what + " exited with status " + status + " before it served");
    }
  }

  /**
   * Waits until {@code process} is alive and the server on {@code port} answers the memcached
   * protocol ({@code version} gets {@code VERSION ...}) and passes {@code ours}, a check that it is
   * this process that answers and not another one that holds the port.
   *
   * @throws ExitedException if the process ended first (for memcached: the port was taken)
   */
  static void awaitServing(
      final Process process,
      final int port,
      final long limitMs,
      final Predicate<TextClient> ours) {
    final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
    while (true) {
      if (!process.isAlive()) {
        throw new ExitedException("server for port " + port, process.exitValue());
      }
      if (answersVersion(port, ours)) {
        if (process.isAlive()) {
          return;
        }
        throw new ExitedException("server for port " + port, process.exitValue());
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("nothing answers version on port " + port);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
  }

  private static boolean answersVersion(final int port, final Predicate<TextClient> ours) {
    try (TextClient c = new TextClient(port, 2000)) {
      c.send("version\r\n");
      return c.line().startsWith("VERSION ") && ours.test(c);
    } catch (UncheckedIOException | IllegalStateException e) {
      return false; // not listening yet, or not answering yet
    }
  }
}
