package org.mwlab.simplemq.server;

import java.util.List;
import java.util.concurrent.SynchronousQueue;
import org.mwlab.simplemq.protocol.Codec;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;
import org.mwlab.simplemq.protocol.Status;

/**
 * A worker thread with its own persistent database connection. It takes the next request from
 * the distributor (or, with group commit, the next group of waiting requests), runs it in its
 * own transaction (the group in one), writes each reply itself once that transaction committed,
 * and asks for more.
 */
final class Worker implements Runnable {

  /** A request handed to this worker. */
  record Job(ClientConnection connection, ClientConnection.Task task, long dispatchedNs) {}

  static final Job STOP = new Job(null, null, 0);

  private final int index;
  private final Database database;
  private final Dispatch dispatch;
  private final Distributor distributor;
  private final Stats stats;
  private final CommitHold hold; // null but in fault tests
  private final Waiter waiter; // null without --notify
  private final SynchronousQueue<Job> inbox = new SynchronousQueue<>();
  /** How far the request being answered got (this worker's thread alone reads and writes it). */
  private Step step = Step.RECORDED;

  Worker(
      final int index,
      final Database database,
      final Dispatch dispatch,
      final Distributor distributor,
      final Stats stats,
      final CommitHold hold,
      final Waiter waiter) {
    this.waiter = waiter;
    this.index = index;
    this.database = database;
    this.dispatch = dispatch;
    this.distributor = distributor;
    this.stats = stats;
    this.hold = hold;
  }

  /** Where the seed's distributor hands this idle worker its request. */
  SynchronousQueue<Job> inbox() {
    return inbox;
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
      for (List<Job> jobs; !(jobs = dispatch.next(this)).isEmpty(); ) {
        if (jobs.size() == 1) {
          serve(jobs.get(0));
        } else {
          serveGroup(jobs);
        }
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

  /** One request in its own transaction. */
  private void serve(final Job job) throws InterruptedException {
    final long start = System.nanoTime();
    step = Step.RUNNING;
    try {
      final Request request = job.task().request();
      if (request instanceof Request.Waiting && waiter == null) {
        answer(job, new Reply.Failure(request.requestId(), Status.MALFORMED,
            "this middleware waits only with --notify"), start, start, false);
        return;
      }
      final long seen = generation(request);
      final Reply reply = database.execute(request);
      if (!parked(job, reply, seen)) {
        answer(job, reply, start, System.nanoTime(), false);
      }
    } catch (final RuntimeException e) {
      failed(job, start, step, e);
    }
  }

  /** Before a waiting request is tried: the notifications its queue and receiver had. */
  private long generation(final Request request) {
    return request instanceof Request.Waiting w && waiter != null
        ? waiter.generation(new Waiter.Key(w.queue(), w.receiver())) : 0;
  }

  /**
   * Parks a waiting request that found nothing while its wait lasts: it is not answered, and
   * its connection stays busy, until the waiter hands it back.
   */
  private boolean parked(final Job job, final Reply reply, final long seen) {
    if (!(job.task().request() instanceof Request.Waiting w) || waiter == null
        || !(reply instanceof Reply.Empty)) {
      return false;
    }
    final long deadline = job.task().arrivalNs() + w.waitMs() * 1_000_000L;
    if (System.nanoTime() - deadline >= 0) {
      return false;
    }
    return waiter.park(job, new Waiter.Key(w.queue(), w.receiver()), seen, deadline);
  }

  /**
   * A group in one transaction: no reply leaves before its commit, so a send is acknowledged,
   * and a popped message returned, only once the transaction that stored or removed it
   * committed. Then each reply is written as {@link #serve} writes one.
   */
  private void serveGroup(final List<Job> jobs) throws InterruptedException {
    final long start = System.nanoTime();
    final List<Reply> replies;
    final long[] seen = jobs.stream().mapToLong(j -> generation(j.task().request())).toArray();
    try {
      replies = database.executeGroup(jobs.stream().map(j -> j.task().request()).toList());
    } catch (final RuntimeException e) {
      for (final Job job : jobs) {
        failed(job, start, Step.RUNNING, e);
      }
      return;
    }
    final long dbEnd = System.nanoTime();
    stats.group(jobs.size());
    if (hold != null) {
      hold.afterGroupCommit(jobs.stream().map(j -> j.task().request()).toList(), replies);
    }
    for (int i = 0; i < jobs.size(); i++) {
      step = Step.RUNNING;
      try {
        if (parked(jobs.get(i), replies.get(i), seen[i])) {
          continue;
        }
        answer(jobs.get(i), replies.get(i), start, dbEnd, true);
      } catch (final RuntimeException e) {
        failed(jobs.get(i), start, step, e);
      }
    }
  }

  /** Writes a committed request's reply, records it and releases its connection. */
  private void answer(final Job job, final Reply reply, final long start, final long dbEnd,
      final boolean grouped) throws InterruptedException {
    if (hold != null && !grouped) {
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
  }

  /**
   * A request that threw instead of being answered (a bug, or a row the database layer cannot
   * map): logged, answered DATABASE if it was not answered yet, counted, and its connection
   * released, so that this worker and the connection go on serving.
   */
  private void failed(final Job job, final long start, final Step reached,
      final RuntimeException e) {
    final Request request = job.task().request();
    final long n = stats.failed(request.op());
    System.err.println("simplemq: " + Thread.currentThread().getName() + ": "
        + request.op().name().toLowerCase(java.util.Locale.ROOT) + " (request "
        + Integer.toUnsignedString(request.requestId()) + ") failed: " + e
        + (reached == Step.RUNNING ? "; answered " + Status.DATABASE : ""));
    if (n == 1) {
      // The first failure's trace says where; later ones would repeat it.
      e.printStackTrace(System.err);
    }
    boolean left = job.connection().hasOutput();
    try {
      if (reached == Step.RUNNING) {
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
      } else if (reached == Step.ANSWERED) {
        final long now = System.nanoTime();
        stats.record(index, request.op(), Status.DATABASE,
            new Timing(job.task().arrivalNs(), job.dispatchedNs(), start, now, now));
      }
    } catch (final RuntimeException again) {
      System.err.println("simplemq: " + Thread.currentThread().getName()
          + ": and again while answering it: " + again);
    }
    if (reached != Step.RECORDED) {
      // The connection's next request waits for this.
      distributor.finished(job.connection(), left);
    }
  }
}
