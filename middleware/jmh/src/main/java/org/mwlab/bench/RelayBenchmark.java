package org.mwlab.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.mwlab.middleware.Main;
import org.mwlab.middleware.Middleware;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One request through a running middleware (the study's design: batch 1, one worker) to a server
 * in the benchmark that answers every {@code get} with the same 4096-byte value and every {@code
 * set} with {@code STORED}: decode, queue, route, relay and record together. The time includes
 * the kernel's loopback and the hand-offs between threads; with {@code -prof gc} the allocation
 * per request counts every thread of the process (the server and client here allocate nothing
 * per request).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RelayBenchmark {
  private static final int VALUE = 4096;
  private static final byte[] GET = ascii("get memtier-4711\r\n");
  private static final byte[] GET_REPLY =
      ascii("VALUE memtier-4711 0 " + VALUE + "\r\n" + "x".repeat(VALUE) + "\r\nEND\r\n");
  private static final byte[] SET =
      ascii("set memtier-4711 0 0 " + VALUE + "\r\n" + "x".repeat(VALUE) + "\r\n");
  private static final byte[] STORED = ascii("STORED\r\n");

  private ServerSocket server;
  private Thread serverThread;
  private Middleware middleware;
  private Path stats;
  private Socket client;
  private InputStream in;
  private OutputStream out;
  private final byte[] reply = new byte[GET_REPLY.length];

  @Setup(Level.Trial)
  public void setup() throws IOException {
    server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    serverThread = new Thread(this::serve, "bench-memcached");
    serverThread.setDaemon(true);
    serverThread.start();
    stats = Files.createTempDirectory("mw-relay-bench");
    middleware =
        Middleware.start(
            Main.parse("-l", "127.0.0.1", "-p", "0", "--workers", "1", "--stats-dir",
                stats.toString(), "-m", "127.0.0.1:" + server.getLocalPort()));
    client = new Socket();
    client.setTcpNoDelay(true);
    client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), middleware.port()));
    in = client.getInputStream();
    out = client.getOutputStream();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    client.close();
    middleware.close();
    server.close();
    try (Stream<Path> files = Files.walk(stats)) {
      for (final Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  @Benchmark
  public byte getValue4096() throws IOException {
    out.write(GET);
    readFully(GET_REPLY.length);
    return reply[GET_REPLY.length - 3];
  }

  @Benchmark
  public byte setValue4096() throws IOException {
    out.write(SET);
    readFully(STORED.length);
    return reply[0];
  }

  private void readFully(final int n) throws IOException {
    int got = 0;
    while (got < n) {
      final int k = in.read(reply, got, n - got);
      if (k < 0) {
        throw new IOException("middleware closed the connection");
      }
      got += k;
    }
  }

  /** The benchmark's memcached: one connection at a time, get and set only. */
  private void serve() {
    final byte[] buf = new byte[64 * 1024];
    while (!server.isClosed()) {
      try (Socket s = server.accept()) {
        s.setTcpNoDelay(true);
        final InputStream sin = s.getInputStream();
        final OutputStream sout = s.getOutputStream();
        int have = 0;
        while (true) {
          final int k = sin.read(buf, have, buf.length - have);
          if (k < 0) {
            break;
          }
          have += k;
          int p = 0;
          while (true) {
            final int used = answer(buf, p, have, sout);
            if (used == 0) {
              break;
            }
            p += used;
          }
          System.arraycopy(buf, p, buf, 0, have - p);
          have -= p;
        }
      } catch (IOException e) {
        // closed: accept the next connection, or end with the server socket
      }
    }
  }

  /** Answers the request at {@code b[from, to)}; returns its length, 0 if it is incomplete. */
  private static int answer(final byte[] b, final int from, final int to, final OutputStream o)
      throws IOException {
    int nl = from;
    while (nl < to && b[nl] != '\n') {
      nl++;
    }
    if (nl == to) {
      return 0;
    }
    if (b[from] == 'g') {
      o.write(GET_REPLY);
      return nl + 1 - from;
    }
    // set <key> <flags> <exptime> <bytes>: the last number before CR LF is the data's length.
    int bytes = 0;
    int i = nl - 2;
    while (b[i] != ' ') {
      i--;
    }
    for (int j = i + 1; j < nl - 1; j++) {
      bytes = bytes * 10 + (b[j] - '0');
    }
    final int total = nl + 1 - from + bytes + 2;
    if (to - from < total) {
      return 0;
    }
    o.write(STORED);
    return total;
  }

  private static byte[] ascii(final String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
