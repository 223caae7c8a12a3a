package org.mwlab.middleware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The middleware in a JVM of its own (this build's classes, entry point {@link Main}, as in the
 * jar), so that it can be sent signals and its exit status observed.
 */
final class MiddlewareProcess implements AutoCloseable {
  final int port;
  final Process process;
  final Path log;

  private MiddlewareProcess(final int port, final Process process, final Path log) {
    this.port = port;
    this.process = process;
    this.log = log;
  }

  /** Starts it on a free port with {@code args} plus -p; output goes to {@code dir}/mw.log. */
  static MiddlewareProcess start(final Path dir, final String... args) {
    for (int attempt = 0; ; attempt++) {
      final int port = Ports.next();
      final List<String> cmd =
          new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
              .toString(), "-cp", System.getProperty("java.class.path"), Main.class.getName(),
              "-p", Integer.toString(port)));
      cmd.addAll(List.of(args));
      cmd.addAll(TestBatching.args(List.of(args)));
      final Path log = dir.resolve("mw-" + port + ".log");
      final Process p;
      try {
        p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      final MiddlewareProcess m = new MiddlewareProcess(port, p, log);
      try {
        // Its own line proves that this process holds the port, not another one.
        Ports.awaitServing(p, port, 60_000,
            c -> m.output().contains("middleware: listening on 127.0.0.1:" + port + ","));
        return m;
      } catch (Ports.ExitedException e) {
        if (attempt == 5 || !m.output().contains("cannot start")) {
          throw new IllegalStateException(e.getMessage() + ":\n" + m.output(), e);
        }
      } catch (RuntimeException e) {
        m.close();
        throw e;
      }
    }
  }

  String output() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** SIGTERM. */
  void terminate() {
    process.destroy();
  }

  /** Waits for the exit (a generous hang guard) and returns the status. */
  int awaitExit() throws InterruptedException {
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("middleware did not exit:\n" + output());
    }
    return process.exitValue();
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }
}
