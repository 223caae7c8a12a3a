package org.mwlab.loadgen;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A real memcached process on a free loopback port of the JUnit range 24100-24999. */
final class Memcached implements AutoCloseable {

  private static final int FIRST = 24100;
  private static final int SIZE = 900;

  final int port;
  private final Process process;

  private Memcached(final int port, final Process process) {
    this.port = port;
    this.process = process;
  }

  /** Starts memcached and waits until it, and not another process on the port, answers. */
  static Memcached start() throws IOException, InterruptedException {
    // An offset of this JVM's own, half the range away from core's suite, so that suites running
    // at once rarely try the same port; a taken port makes memcached exit and the next is tried.
    final int offset = (int) ((ProcessHandle.current().pid() * 97 + SIZE / 2) % SIZE);
    for (int i = 0; i < SIZE; i++) {
      final int port = FIRST + (offset + i) % SIZE;
      if (!free(port)) {
        continue;
      }
      final List<String> cmd =
          new ArrayList<>(List.of("memcached", "-p", Integer.toString(port), "-U", "0", "-t", "1", "-l", "127.0.0.1"));
      if ("root".equals(System.getProperty("user.name"))) {
        cmd.add("-u");
        cmd.add("root");
      }
      final Process p =
          new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      final Memcached m = new Memcached(port, p);
      if (m.awaitServing()) {
        return m;
      }
      m.close();
    }
    throw new IllegalStateException("no free port for memcached in 24100-24999");
  }

  private static boolean free(final int port) {
    try {
      new ServerSocket(port, 1, InetAddress.getLoopbackAddress()).close();
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private boolean awaitServing() throws InterruptedException {
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (process.isAlive() && System.nanoTime() < deadline) {
      try {
        if (Long.parseLong(stats().get("pid")) == process.pid()) {
          return true;
        }
      } catch (IOException | RuntimeException e) {
        // not listening yet
      }
      Thread.sleep(10);
    }
    return false;
  }

  /** memcached's {@code stats}, asked on a connection of its own. */
  Map<String, String> stats() throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(5000);
      final OutputStream out = s.getOutputStream();
      out.write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      final BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      final Map<String, String> m = new HashMap<>();
      for (String line = in.readLine(); !"END".equals(line); line = in.readLine()) {
        if (line == null) {
          throw new IOException("memcached closed the stats connection");
        }
        final String[] f = line.split(" ");
        if (f.length == 3 && f[0].equals("STAT")) {
          m.put(f[1], f[2]);
        }
      }
      return m;
    }
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
