package org.mwlab.simplemq.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;

/**
 * How requests travel from the distributor to the workers: one at a time to an idle worker (the
 * seed's design, each request its own transaction), or through a shared queue from which a worker
 * takes up to a group of waiting requests and runs them in one transaction (group commit).
 */
sealed interface Dispatch permits Dispatch.Handoff, Dispatch.Grouped {

  /** The requests a worker runs in one transaction at most. */
  int groupSize();

  /** Distributor side: hands a connection's request on. */
  void dispatch(ClientConnection connection, ClientConnection.Task task)
      throws InterruptedException;

  /** Worker side: the next requests for {@code worker}, or none once it is to stop. */
  List<Worker.Job> next(Worker worker) throws InterruptedException;

  /** Stops one worker once it is idle; false if it did not become idle within the timeout. */
  boolean stop(Worker worker, long timeoutNs) throws InterruptedException;

  static Dispatch of(final int workers, final int groupSize) {
    return groupSize <= 1 ? new Handoff(workers) : new Grouped(groupSize);
  }

  /**
   * The seed's distributor: it waits for an idle worker and hands it the request, which the
   * worker runs alone.
   */
  final class Handoff implements Dispatch {
    private final BlockingQueue<Worker> idle;

    Handoff(final int workers) {
      this.idle = new java.util.concurrent.ArrayBlockingQueue<>(workers);
    }

    @Override
    public int groupSize() {
      return 1;
    }

    @Override
    public void dispatch(final ClientConnection connection, final ClientConnection.Task task)
        throws InterruptedException {
      // The seed's distributor waits here while every worker is busy.
      final Worker w = idle.take();
      w.inbox().put(new Worker.Job(connection, task, System.nanoTime()));
    }

    @Override
    public List<Worker.Job> next(final Worker worker) throws InterruptedException {
      idle.put(worker);
      final Worker.Job job = worker.inbox().take();
      return job == Worker.STOP ? List.of() : List.of(job);
    }

    @Override
    public boolean stop(final Worker worker, final long timeoutNs) throws InterruptedException {
      return worker.inbox().offer(Worker.STOP, timeoutNs, TimeUnit.NANOSECONDS);
    }
  }

  /**
   * Group commit: requests wait in one queue, and a free worker takes the first with up to
   * {@code groupSize - 1} more that wait behind it. Each connection has one request at a
   * worker at a time, so a group holds requests of different clients.
   */
  final class Grouped implements Dispatch {
    private final int groupSize;
    private final LinkedBlockingQueue<Worker.Job> ready = new LinkedBlockingQueue<>();

    Grouped(final int groupSize) {
      this.groupSize = groupSize;
    }

    @Override
    public int groupSize() {
      return groupSize;
    }

    @Override
    public void dispatch(final ClientConnection connection, final ClientConnection.Task task) {
      ready.add(new Worker.Job(connection, task, System.nanoTime()));
    }

    @Override
    public List<Worker.Job> next(final Worker worker) throws InterruptedException {
      final Worker.Job first = ready.take();
      if (first == Worker.STOP) {
        return List.of();
      }
      final List<Worker.Job> group = new ArrayList<>(groupSize);
      group.add(first);
      ready.drainTo(group, groupSize - 1);
      // Another worker's stop was taken with the group: it goes back for that worker.
      final int stops = (int) group.stream().filter(j -> j == Worker.STOP).count();
      if (stops > 0) {
        group.removeIf(j -> j == Worker.STOP);
        for (int i = 0; i < stops; i++) {
          ready.add(Worker.STOP);
        }
      }
      return group;
    }

    @Override
    public boolean stop(final Worker worker, final long timeoutNs) {
      // Queued behind every request read before: the worker that takes it has run them.
      ready.add(Worker.STOP);
      return true;
    }
  }
}
