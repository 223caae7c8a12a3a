package org.mwlab.middleware;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.mwlab.middleware.stats.Recorder;

/**
 * A thread that serves one queue with blocking server connections of its own: a design-2016 read
 * thread or a design-2018 worker. It takes items until stopped and the queue is drained, then
 * closes its connections. With a batch size above 1 it takes, with each item, up to that many
 * minus one more that are already queued (it never waits for them) and serves them together.
 */
abstract sealed class QueueThread<T> implements Runnable permits ReadThread, Worker {
  /** What a queue thread takes its items from. */
  interface Source<T> {
    /** The next item, waiting up to {@code ms}; null if none came. */
    T poll(long ms) throws InterruptedException;

    /** Moves up to {@code max} items that are queued now into {@code into}; never waits. */
    int drainTo(List<T> into, int max);

    boolean isEmpty();

    /** The thread finished the turn of its last {@link #poll}ed item. */
    default void turnDone() {}

    static <T> Source<T> of(final BlockingQueue<T> q) {
      return new Source<>() {
        @Override
        public T poll(final long ms) throws InterruptedException {
          return q.poll(ms, TimeUnit.MILLISECONDS);
        }

        @Override
        public int drainTo(final List<T> into, final int max) {
          return q.drainTo(into, max);
        }

        @Override
        public boolean isEmpty() {
          return q.isEmpty();
        }
      };
    }
  }

  private final Source<T> queue;
  private final int maxBatch;
  private final List<T> batch;
  private volatile boolean running = true;

  QueueThread(final BlockingQueue<T> queue) {
    this(Source.of(queue), 1);
  }

  QueueThread(final Source<T> queue, final int maxBatch) {
    this.queue = queue;
    this.maxBatch = maxBatch;
    this.batch = new ArrayList<>(maxBatch);
  }

  /** Opens the connections of every thread; returns the first failure, empty if all connected. */
  static String connectAll(final List<? extends QueueThread<?>> all) {
    String first = "";
    for (final QueueThread<?> t : all) {
      final String failed = t.connect();
      if (first.isEmpty()) {
        first = failed;
      }
    }
    return first;
  }

  /** Opens the connections; returns the failures, empty if all connected. */
  abstract String connect();

  /** Serves one item: the whole turn with a batch size of 1. */
  abstract void handle(T item);

  /** Serves the items of one turn (more than one); by default one after the other. */
  void handleBatch(final List<T> items) {
    for (final T item : items) {
      handle(item);
    }
  }

  /** Closes the connections. */
  abstract void close();

  /** The thread's statistics recorder. */
  abstract Recorder recorder();

  /** Ends the thread once the queue is empty. */
  final void stop() {
    running = false;
  }

  @Override
  public final void run() {
    try {
      while (running || !queue.isEmpty()) {
        final T item;
        try {
          item = queue.poll(50);
        } catch (InterruptedException e) {
          return;
        }
        if (item == null) {
          continue;
        }
        // The turn's times (from its dequeue on) are recorded in their windows, however late.
        recorder().hold();
        try {
          turn(item);
        } finally {
          recorder().idle();
        }
      }
    } finally {
      close();
    }
  }

  private void turn(final T item) {
    if (maxBatch == 1) {
      handle(item);
      return;
    }
    batch.clear();
    batch.add(item);
    queue.drainTo(batch, maxBatch - 1);
    try {
      if (batch.size() == 1) {
        handle(item);
      } else {
        handleBatch(batch);
      }
    } finally {
      queue.turnDone();
    }
    batch.clear();
  }
}
