package org.mwlab.common.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * Holds the start of the measurement until a file appears. Once every connection is open the
 * generator writes {@code FILE.ready} and waits for {@code FILE}: a harness can then put the
 * machine under its CPU budget without charging the JVM's start-up to it.
 */
public record StartGate(Path file, Duration timeout) {

  public Path readyFile() {
    return file.resolveSibling(file.getFileName() + ".ready");
  }

  /** Announces readiness and waits; null when opened, else why not. */
  public String pass() {
    try {
      final Path tmp = file.resolveSibling(file.getFileName() + ".ready.tmp");
      Files.writeString(tmp, ProcessHandle.current().pid() + "\n");
      Files.move(tmp, readyFile(), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      return "cannot write " + readyFile() + ": " + e.getMessage();
    }
    final long deadline = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(file)) {
      if (System.nanoTime() > deadline) {
        return "start gate " + file + " did not open within " + timeout.toSeconds() + " s";
      }
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "interrupted at the start gate";
      }
    }
    return null;
  }
}
