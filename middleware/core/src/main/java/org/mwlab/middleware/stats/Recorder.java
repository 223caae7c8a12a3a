package org.mwlab.middleware.stats;

import org.HdrHistogram.WriterReaderPhaser;

/**
 * Per-thread statistics recorder. The owning thread records without locks (a wait-free
 * {@link WriterReaderPhaser} critical section); the collector swaps the accumulator out and merges
 * it off the request path. Times are {@link System#nanoTime()} values.
 *
 * <p>A request is recorded once ({@link #request}) by the thread that answered it; each part of it
 * (what waited in one queue) once by the thread that served it ({@link #partDone}) and once with
 * the request's outcome ({@link #part}).
 *
 * <p>Every record lands in the window of its own time, however late the thread records it. So
 * that the collector knows when a window is complete, the thread keeps a floor: no time it records
 * later is earlier. It raises the floor from idle ({@link #hold}) before it takes the times of a
 * turn and drops it ({@link #idle}) once the turn's records are made. Queue and in-flight times
 * are recorded as changes at the enqueue, dequeue and done times ({@link Level}), each by the
 * thread that took that time, so no thread records a time another thread took.
 */
public final class Recorder {
  private static final long FLIP_WAIT_NS = 100_000;
  private final WriterReaderPhaser phaser = new WriterReaderPhaser();
  private final StatsClock clock;
  private final int worker;
  private final int workers;
  private final int servers;
  private final int pools;
  private volatile Accumulator active;
  /** No time recorded from now on is earlier; {@link #IDLE}: none earlier than when it is read. */
  private volatile long floor = IDLE;

  public static final long IDLE = Long.MAX_VALUE;

  Recorder(final StatsClock clock, final int worker, final int workers, final int servers,
      final int pools) {
    this.clock = clock;
    this.worker = worker;
    this.workers = workers;
    this.servers = servers;
    this.pools = pools;
    this.active = new Accumulator(workers, servers, pools);
  }

  /**
   * The thread is about to take the times of a turn: from now on it records none earlier than
   * now. Keeps an earlier floor.
   */
  public void hold() {
    if (floor == IDLE) {
      // Published before the turn's first time is taken, so that time is at least the floor.
      floor = System.nanoTime();
    }
  }

  /** Every time the thread took is recorded; the next turn starts with {@link #hold}. */
  public void idle() {
    floor = IDLE;
  }

  /**
   * As {@link #idle}, but the thread still holds a time {@code oldestNs} to record later (a
   * request whose first bytes came in then); {@link #IDLE} if none.
   */
  public void idleFrom(final long oldestNs) {
    floor = oldestNs;
  }

  /** Collector: the earliest time this thread may still record; {@link #IDLE} if it holds none. */
  long floor() {
    return floor;
  }

  /**
   * A request answered by this thread. For a request of several parts the dequeue, sent and
   * replied times are those of its critical part (the last whose replies came in), which waited
   * in {@code pool}.
   */
  public void request(
      final int typeOrdinal,
      final int keys,
      final long arrival,
      final long enqueue,
      final long dequeue,
      final long sent,
      final long replied,
      final long written,
      final int values,
      final boolean error,
      final boolean traced,
      final int pool,
      final int parts) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final Accumulator a = active;
      final long server = sent == 0 ? 0 : replied - sent;
      final WindowData w = a.window(clock.window(written));
      w.type(typeOrdinal, keys)
          .add(
              (enqueue - arrival) / 1e3,
              (dequeue - enqueue) / 1e3,
              (written - dequeue - server) / 1e3,
              server / 1e3,
              (written - arrival) / 1e3,
              keys,
              values,
              error);
      if (traced) {
        final long s = clock.startNs();
        a.trace.add(
            new long[] {
              typeOrdinal, keys, arrival - s, enqueue - s, dequeue - s, sent == 0 ? -1 : sent - s,
              sent == 0 ? -1 : replied - s, written - s, pool, parts
            });
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /**
   * One part of a request that was answered at {@code written}: it waited {@code queueNs} in
   * {@code pool}, its servers took {@code serverNs}, the whole request {@code responseNs}.
   */
  public void part(
      final int pool,
      final int typeOrdinal,
      final int keys,
      final int partKeys,
      final long queueNs,
      final long serverNs,
      final long responseNs,
      final boolean error,
      final long written) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      active.window(clock.window(written)).part(pool, typeOrdinal, keys)
          .add(partKeys, queueNs, serverNs, responseNs, error);
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** Done at {@code done} with a part of {@code pool} this thread took ({@link #dequeued}). */
  public void partDone(final int pool, final long done) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final long w = clock.window(done);
      final WindowData d = active.window(w);
      d.poolCompleted[pool]++;
      d.workerRequests[worker]++;
      d.poolInFlight[pool].change(-1, done, clock.windowStartNs(w + 1));
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** This thread was busy from {@code from} to {@code to} (both times of its turn). */
  public void busy(final long from, final long to) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      spread(active, from, to);
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** A part was taken from {@code pool}'s queue; {@code inFlight} of the pool's parts are now. */
  public void dequeued(final int pool, final long inFlight, final long now) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final long i = clock.window(now);
      final WindowData w = active.window(i);
      final long end = clock.windowStartNs(i + 1);
      w.queue.change(-1, now, end);
      w.poolQueue[pool].change(-1, now, end);
      w.poolInFlight[pool].change(1, now, end);
      if (inFlight > w.poolInFlightMax[pool]) {
        w.poolInFlightMax[pool] = inFlight;
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** A worker turn that took {@code size} requests from the queue. */
  public void batch(final int size) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      active.batch(size);
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** One request sent to server {@code server} with {@code keys} keys. */
  public void server(final int server, final int keys, final boolean error, final long now) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final WindowData w = active.window(clock.window(now));
      w.serverRequests[server]++;
      w.serverKeys[server] += keys;
      if (error) {
        w.serverErrors[server]++;
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** Net-thread: one request read; its first bytes came in at {@code arrivalNs}. */
  public void arrival(final long arrivalNs) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      active.window(clock.window(arrivalNs)).arrivals++;
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** Net-thread: a request was queued at {@code now}; {@code queueLength} parts wait in all. */
  public void queued(final long now, final long queueLength) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final WindowData w = active.window(clock.window(now));
      if (queueLength > w.maxQueue) {
        w.maxQueue = queueLength;
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** One part put into {@code pool}'s queue; {@code queueLength} wait there just after. */
  public void enqueued(final int pool, final long enqueueNs, final long queueLength) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final long i = clock.window(enqueueNs);
      final WindowData w = active.window(i);
      final long end = clock.windowStartNs(i + 1);
      w.queue.change(1, enqueueNs, end);
      w.poolQueue[pool].change(1, enqueueNs, end);
      w.poolEnqueued[pool]++;
      if (queueLength > w.poolMaxQueue[pool]) {
        w.poolMaxQueue[pool] = queueLength;
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** Adds the busy interval's overlap with each window to the window's busy time. */
  private void spread(final Accumulator a, final long from, final long to) {
    if (to <= from) {
      return;
    }
    long w = clock.window(from);
    final long last = clock.window(to);
    long t = from;
    while (true) {
      final long end = w == last ? to : clock.windowStartNs(w + 1);
      a.window(w).workerBusyNs[worker] += end - t;
      if (w == last) {
        return;
      }
      t = end;
      w++;
    }
  }

  /** Collector: takes everything recorded so far. */
  Accumulator swap() {
    phaser.readerLock();
    try {
      final Accumulator old = active;
      active = new Accumulator(workers, servers, pools);
      // A writer may be inside its critical section when its CPU quota runs out, and stay there
      // for the rest of the period: wait for it asleep, not spinning.
      phaser.flipPhase(FLIP_WAIT_NS);
      return old;
    } finally {
      phaser.readerUnlock();
    }
  }
}
