package org.mwlab.middleware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A real memcached process on a loopback port, restartable on the same port. */
final class Memcached implements AutoCloseable {
  final int port;
  private Process process;

  private Memcached(final int port) {
    this.port = port;
  }

  /** Starts memcached on a free port of the suite's range (another if the port was taken). */
  static Memcached start() {
    for (int attempt = 0; ; attempt++) {
      final Memcached m = new Memcached(Ports.next());
      try {
        m.restart();
        return m;
      } catch (Ports.ExitedException e) {
        if (attempt == 5) {
          throw e;
        }
      }
    }
  }

  HostPort address() {
    return new HostPort("127.0.0.1", port);
  }

  /** Starts the process (again) on this port and waits until it answers. */
  void restart() {
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
    final long pid = process.pid();
    try {
      Ports.awaitServing(process, port, 30_000, c -> statPid(c) == pid);
    } catch (RuntimeException e) {
      kill();
      throw e;
    }
  }

  private static long statPid(final TextClient c) {
    c.send("stats\r\n");
    long pid = -1;
    for (final String line : c.readUntil("END")) {
      final String[] p = line.split(" ");
      if (p.length == 3 && p[1].equals("pid")) {
        pid = Long.parseLong(p[2]);
      }
    }
    return pid;
  }

  /** Kills the process (SIGKILL) and waits until it is gone. */
  void kill() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("memcached on port " + port + " does not exit");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops the process (SIGSTOP): connections stay open, nothing is answered. */
  void freeze() {
    signal("STOP", 'T');
  }

  /** Continues a stopped process (SIGCONT). */
  void thaw() {
    signal("CONT", 'S', 'R');
  }

  /** Sends a signal and waits until /proc shows one of the {@code states}. */
  private void signal(final String name, final char... states) {
    final long pid = process.pid();
    try {
      final Process k = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).start();
      if (k.waitFor() != 0) {
        throw new IllegalStateException("kill -" + name + " " + pid + " failed");
      }
      final Path stat = Path.of("/proc", Long.toString(pid), "stat");
      while (true) {
        // "pid (comm) S ...": the state follows the command name.
        final String s = Files.readString(stat);
        final char state = s.charAt(s.lastIndexOf(')') + 2);
        for (final char want : states) {
          if (state == want) {
            return;
          }
        }
        Thread.sleep(5);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
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
}
