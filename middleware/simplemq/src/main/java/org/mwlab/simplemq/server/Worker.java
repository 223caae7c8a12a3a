package org.mwlab.simplemq.server;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.SynchronousQueue;
import org.mwlab.simplemq.protocol.Codec;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;
import org.mwlab.simplemq.protocol.Status;

/**
 * A worker thread with its own persistent database connection. It takes one request at a time
 * from the distributor, runs it, writes the reply itself and puts itself back among the idle
 * workers.
 */
final class Worker implements Runnable {

  /** A request handed to this worker. */
  record Job(ClientConnection connection, ClientConnection.Task task, long dispatchedNs) {}

  private static final Job STOP = new Job(null, null, 0);

  private final int index;
  private final Database database;
  private final BlockingQueue<Worker> idle;
  private final Distributor distributor;
  private final Stats stats;
  private final CommitHold hold; // null but in fault tests
  private final SynchronousQueue<Job> inbox = new SynchronousQueue<>();

  Worker(
      final int index,
      final Database database,
      final BlockingQueue<Worker> idle,
      final Distributor distributor,
      final Stats stats,
      final CommitHold hold) {
    this.index = index;
    this.database = database;
    this.idle = idle;
    this.distributor = distributor;
    this.stats = stats;
    this.hold = hold;
  }

  /** Hands a job over; the worker is idle, so it takes it at once. */
  void assign(final Job job) throws InterruptedException {
    inbox.put(job);
  }

  /**
   * Stops the worker once it is idle (after the distributor ended, none gets new work); returns
   * false if it did not become idle within {@code timeoutNs}.
   */
  boolean stopIfIdle(final long timeoutNs) throws InterruptedException {
    return inbox.offer(STOP, timeoutNs, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /** How far a request got before it threw: what is still owed to its client and the stats. */
  private enum Step {
    RUNNING,
    ANSWERED,
    RECORDED
  }

  @Override
  public void run() {
    try {
      idle.put(this);
      while (true) {
        final Job job = inbox.take();
        if (job == STOP) {
          break;
        }
        final long start = System.nanoTime();
        Step step = Step.RUNNING;
        try {
          final Reply reply = database.execute(job.task().request());
          final long dbEnd = System.nanoTime();
          if (hold != null) {
            hold.afterCommit(job.task().request(), reply);
          }
          final ClientConnection.Delivery delivery = job.connection().send(Codec.frame(reply));
          step = Step.ANSWERED;
          final long replied = System.nanoTime();
          if (delivery == ClientConnection.Delivery.LOST) {
            stats.lost(job.task().request().op());
          }
          final boolean left = delivery == ClientConnection.Delivery.PENDING;
          stats.record(index, job.task().request().op(), reply.status(),
              new Timing(job.task().arrivalNs(), job.dispatchedNs(), start, dbEnd, replied));
          step = Step.RECORDED;
          distributor.finished(job.connection(), left);
        } catch (final RuntimeException e) {
          failed(job, start, step, e);
        }
        idle.put(this);
      }
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        database.close();
      } catch (final java.sql.SQLException ignored) {
        // Shutting down.
      }
    }
  }

  /**
   * A request that threw instead of being answered (a bug, or a row the database layer cannot
   * map): logged, answered DATABASE if it was not answered yet, counted, and its connection
   * released, so that this worker and the connection go on serving.
   */
  private void failed(final Job job, final long start, final Step step,
      final RuntimeException e) {
    final Request request = job.task().request();
    final long n = stats.failed(request.op());
    System.err.println("simplemq: " + Thread.currentThread().getName() + ": "
        + request.op().name().toLowerCase(java.util.Locale.ROOT) + " (request "
        + Integer.toUnsignedString(request.requestId()) + ") failed: " + e
        + (step == Step.RUNNING ? "; answered " + Status.DATABASE : ""));
    if (n == 1) {
      // The first failure's trace says where; later ones would repeat it.
      e.printStackTrace(System.err);
    }
    boolean left = job.connection().hasOutput();
    try {
      if (step == Step.RUNNING) {
        final Reply reply = new Reply.Failure(request.requestId(), Status.DATABASE,
            "the middleware failed on this request; its outcome is unknown: " + e);
        final ClientConnection.Delivery delivery = job.connection().send(Codec.frame(reply));
        final long replied = System.nanoTime();
        if (delivery == ClientConnection.Delivery.LOST) {
          stats.lost(request.op());
        }
        left = delivery == ClientConnection.Delivery.PENDING;
        stats.record(index, request.op(), reply.status(),
            new Timing(job.task().arrivalNs(), job.dispatchedNs(), start, replied, replied));
      } else if (step == Step.ANSWERED) {
        final long now = System.nanoTime();
        stats.record(index, request.op(), Status.DATABASE,
            new Timing(job.task().arrivalNs(), job.dispatchedNs(), start, now, now));
      }
    } catch (final RuntimeException again) {
      System.err.println("simplemq: " + Thread.currentThread().getName()
          + ": and again while answering it: " + again);
    }
    if (step != Step.RECORDED) {
      // The connection's next request waits for this.
      distributor.finished(job.connection(), left);
    }
  }
}
