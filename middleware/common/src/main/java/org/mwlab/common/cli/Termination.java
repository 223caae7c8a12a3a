package org.mwlab.common.cli;

import java.util.concurrent.CountDownLatch;

/**
 * How a server process ends: SIGTERM (or SIGINT) runs its stop action, and the process exits with
 * status 0, the normal end of a run for the testbed.
 */
public final class Termination {

  private final CountDownLatch done = new CountDownLatch(1);

  private Termination() {}

  /**
   * Runs {@code stop} on SIGTERM or SIGINT, then halts with status 0. Call it before the process
   * says it is ready, so that a signal right after that is a clean stop too.
   */
  public static Termination onSignal(final Runnable stop) {
    final Termination t = new Termination();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  stop.run();
                  t.done.countDown();
                  // SIGTERM is a normal end of a run: report success.
                  Runtime.getRuntime().halt(0);
                },
                "shutdown"));
    return t;
  }

  /** Waits for the signal; the process ends in the shutdown hook. */
  public void await() {
    try {
      done.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
