package org.mwlab.middleware;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A real memcached process on a loopback port, restartable on the same port. */
final class Memcached implements AutoCloseable {
  final int port;
  private Process process;

  Memcached(final int port) {
    this.port = port;
    start();
  }

  HostPort address() {
    return new HostPort("127.0.0.1", port);
  }

  void start() {
    final List<String> cmd =
        new ArrayList<>(List.of("memcached", "-p", Integer.toString(port), "-U", "0", "-t", "1",
            "-l", "127.0.0.1"));
    if ("root".equals(System.getProperty("user.name"))) {
      cmd.add("-u");
      cmd.add("root");
    }
    try {
      process = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start memcached", e);
    }
    Ports.awaitListening(port, 5000);
  }

  /** Kills the process (SIGKILL) and waits until it is gone. */
  void kill() {
    process.destroyForcibly();
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A direct client to this server, bypassing the middleware. */
  TextClient client() {
    return new TextClient(port);
  }

  /** A counter from {@code stats}, e.g. {@code cmd_get}. */
  long stat(final String name) {
    try (TextClient c = client()) {
      c.send("stats\r\n");
      while (true) {
        final String line = c.line();
        if (line.equals("END")) {
          throw new IllegalStateException("no stat " + name);
        }
        final String[] p = line.split(" ");
        if (p.length == 3 && p[1].equals(name)) {
          c.readUntil("END");
          return Long.parseLong(p[2]);
        }
      }
    }
  }

  /** True if this server has the key (asked directly). */
  boolean has(final String key) {
    try (TextClient c = client()) {
      c.send("get " + key + "\r\n");
      final String first = c.line();
      if (first.equals("END")) {
        return false;
      }
      c.readUntil("END");
      return true;
    }
  }

  @Override
  public void close() {
    kill();
  }

  /** True when a TCP connection to the port succeeds. */
  static boolean listening(final int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
