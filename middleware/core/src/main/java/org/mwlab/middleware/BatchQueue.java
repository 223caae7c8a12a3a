package org.mwlab.middleware;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The design-2018 queue when workers take batches: the net-thread adds every request of one
 * selector round at once and wakes an idle worker only for what the workers already busy will not
 * take: each busy worker comes back for up to {@code maxBatch} more when its turn ends. Fewer,
 * larger turns cost fewer wake-ups, context switches and server round trips per request. A
 * worker stuck on a slow server does not hold the queue for long: idle workers wait in {@link
 * #poll} with a timeout and take what is queued when it ends.
 */
final class BatchQueue implements QueueThread.Source<Request> {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition notEmpty = lock.newCondition();
  private final ArrayDeque<Request> items;
  private final int capacity;
  private final int maxBatch;
  /** Workers waiting in {@link #poll}. Guarded by lock. */
  private int idle;
  /** Of those, signalled but not yet running. Guarded by lock. */
  private int woken;
  /** Workers serving a turn (between {@link #poll} and {@link #turnDone}). Guarded by lock. */
  private int busy;

  BatchQueue(final int capacity, final int maxBatch) {
    this.capacity = capacity;
    this.maxBatch = maxBatch;
    this.items = new ArrayDeque<>(Math.min(capacity, 1024));
  }

  /**
   * Net-thread: adds {@code all[from..]} as far as there is room, stamping each with {@code
   * enqueueNs}; returns how many it added. {@code lengths[i]} receives the queue length just after
   * the request was added.
   */
  int offer(final List<Request> all, final int from, final long enqueueNs, final int[] lengths) {
    lock.lock();
    try {
      int i = from;
      for (; i < all.size() && items.size() < capacity; i++) {
        final Request r = all.get(i);
        r.enqueueNs = enqueueNs;
        items.addLast(r);
        lengths[i] = items.size();
      }
      // Each woken or busy worker takes up to maxBatch; wake more only if what waits needs them.
      final int needed = (items.size() + maxBatch - 1) / maxBatch;
      while (woken + busy < needed && woken < idle) {
        notEmpty.signal();
        woken++;
      }
      return i - from;
    } finally {
      lock.unlock();
    }
  }

  int size() {
    lock.lock();
    try {
      return items.size();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Request poll(final long ms) throws InterruptedException {
    lock.lock();
    try {
      long nanos = TimeUnit.MILLISECONDS.toNanos(ms);
      while (items.isEmpty()) {
        if (nanos <= 0) {
          return null;
        }
        idle++;
        try {
          nanos = notEmpty.awaitNanos(nanos);
        } finally {
          idle--;
          if (woken > 0) {
            woken--;
          }
        }
      }
      busy++;
      return items.pollFirst();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void turnDone() {
    lock.lock();
    try {
      busy--;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int drainTo(final List<Request> into, final int max) {
    lock.lock();
    try {
      int n = 0;
      while (n < max && !items.isEmpty()) {
        into.add(items.pollFirst());
        n++;
      }
      return n;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public boolean isEmpty() {
    lock.lock();
    try {
      return items.isEmpty();
    } finally {
      lock.unlock();
    }
  }
}
