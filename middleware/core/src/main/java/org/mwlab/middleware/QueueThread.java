package org.mwlab.middleware;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A thread that serves one queue with blocking server connections of its own: a design-2016 read
 * thread or a design-2018 worker. It takes items until stopped and the queue is drained, then
 * closes its connections.
 */
abstract sealed class QueueThread<T> implements Runnable permits ReadThread, Worker {
  private final BlockingQueue<T> queue;
  private volatile boolean running = true;

  QueueThread(final BlockingQueue<T> queue) {
    this.queue = queue;
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

  abstract void handle(T item);

  /** Closes the connections. */
  abstract void close();

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
          item = queue.poll(50, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          return;
        }
        if (item != null) {
          handle(item);
        }
      }
    } finally {
      close();
    }
  }
}
